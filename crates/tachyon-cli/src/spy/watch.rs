//! `spy watch`: a live view of the domain — every topic with its type, writers and readers,
//! and the rate and bandwidth of its samples, redrawn in place every interval (a table on a
//! terminal; one JSON document per interval with `--json`, or when the output is no
//! terminal, one table after another). It reads every topic's samples undecoded, so it
//! needs no types.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tachyon::dynamic::SerializedData;
use tachyon::{DataReader, DomainParticipant, Sample};

use super::snapshot::Snapshot;
use super::{columns, subscribe};
use crate::perf::Failure;

/// How `watch` redraws and for how long.
pub struct Options {
    pub interval: f64,
    pub duration: Option<f64>,
    pub json: bool,
    pub domain: u32,
}

/// One topic being watched.
struct Watched {
    type_name: String,
    reader: Option<DataReader<SerializedData>>,
    /// Why the topic is not read (no writers yet, a reader that could not be made).
    why_not: Option<String>,
    /// Samples and bytes in the last interval.
    samples: u64,
    bytes: u64,
    total: u64,
}

pub fn run(p: &DomainParticipant, o: &Options, stop: &Arc<AtomicBool>) -> Result<(), Failure> {
    let interval = Duration::from_secs_f64(o.interval);
    let end = o
        .duration
        .map(|d| Instant::now() + Duration::from_secs_f64(d));
    let in_place = std::io::stdout().is_terminal() && !o.json;
    let mut topics: BTreeMap<String, Watched> = BTreeMap::new();
    let mut buf: Vec<Sample<SerializedData>> = Vec::new();
    let mut last = Instant::now();
    while !stop.load(Ordering::Relaxed) && !end.is_some_and(|e| Instant::now() >= e) {
        let snap = Snapshot::take(p);
        follow(p, &snap, &mut topics, o.domain);
        // Count what arrives during the interval, draining the readers as it goes.
        let until = Instant::now() + interval;
        while Instant::now() < until && !stop.load(Ordering::Relaxed) {
            for w in topics.values_mut() {
                let Some(r) = &w.reader else { continue };
                while r.take_into(&mut buf, 1024).unwrap_or(0) > 0 {
                    for s in buf.iter().filter(|s| s.info.valid_data) {
                        w.samples += 1;
                        w.bytes += s.data.as_ref().map_or(0, |d| d.bytes.len()) as u64;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let secs = last.elapsed().as_secs_f64().max(1e-3);
        last = Instant::now();
        let text = if o.json {
            format!("{}\n", json_doc(&snap, &topics, secs))
        } else {
            let t = table(&snap, &topics, secs, o.domain);
            if in_place {
                // Home, clear, redraw.
                format!("\x1b[H\x1b[2J{t}")
            } else {
                format!("{t}\n")
            }
        };
        if !super::emit(&text) {
            return Ok(());
        }
        for w in topics.values_mut() {
            w.total += w.samples;
            w.samples = 0;
            w.bytes = 0;
        }
    }
    Ok(())
}

/// Adds the topics discovered since the last interval, with a reader for each that has
/// writers.
fn follow(
    p: &DomainParticipant,
    snap: &Snapshot,
    topics: &mut BTreeMap<String, Watched>,
    domain: u32,
) {
    let names: Vec<(String, String)> = snap
        .writers
        .iter()
        .map(|w| (w.topic_name.clone(), w.type_name.clone()))
        .chain(
            snap.readers
                .iter()
                .map(|r| (r.topic_name.clone(), r.type_name.clone())),
        )
        .collect();
    for (name, type_name) in names {
        let w = topics.entry(name.clone()).or_insert_with(|| Watched {
            type_name,
            reader: None,
            why_not: Some("no writers".into()),
            samples: 0,
            bytes: 0,
            total: 0,
        });
        if w.reader.is_some() {
            continue;
        }
        let Ok(plan) = subscribe::plan(snap, &name, domain) else {
            continue;
        };
        w.type_name.clone_from(&plan.type_name);
        let made = (|| -> Result<DataReader<SerializedData>, String> {
            let topic = p
                .create_serialized_topic(&name, &plan.type_name, plan.keyed)
                .map_err(|e| e.to_string())?;
            let mut qos = plan.reader.clone();
            qos.durability = tachyon::qos::DurabilityKind::Volatile;
            let s = subscribe::subscriber(p, &plan).map_err(|e| format!("{e:?}"))?;
            s.create_datareader(&topic, qos).map_err(|e| e.to_string())
        })();
        match made {
            Ok(r) => {
                w.reader = Some(r);
                w.why_not = None;
            }
            Err(e) => w.why_not = Some(e),
        }
    }
}

fn counts(snap: &Snapshot, topic: &str) -> (usize, usize) {
    (
        snap.writers
            .iter()
            .filter(|w| w.topic_name == topic)
            .count(),
        snap.readers
            .iter()
            .filter(|r| r.topic_name == topic)
            .count(),
    )
}

fn table(snap: &Snapshot, topics: &BTreeMap<String, Watched>, secs: f64, domain: u32) -> String {
    let mut rows = vec![[
        "TOPIC",
        "TYPE",
        "WRITERS",
        "READERS",
        "RATE",
        "BANDWIDTH",
        "AVG SIZE",
        "SAMPLES",
    ]
    .map(String::from)
    .to_vec()];
    for (name, w) in topics {
        let (writers, readers) = counts(snap, name);
        let rate = w.samples as f64 / secs;
        let avg = w
            .bytes
            .checked_div(w.samples)
            .map_or_else(|| "-".to_owned(), |b| format!("{b} B"));
        let rate_cell = match &w.why_not {
            Some(why) if writers > 0 => format!("({why})"),
            _ => format!("{rate:.1} Hz"),
        };
        rows.push(vec![
            name.clone(),
            w.type_name.clone(),
            writers.to_string(),
            readers.to_string(),
            rate_cell,
            bandwidth(w.bytes as f64 / secs),
            avg,
            (w.total + w.samples).to_string(),
        ]);
    }
    let head = format!(
        "tachyon spy watch: domain {domain}, {} participants, {} topics (Ctrl-C quits)\n\n",
        snap.participants.len(),
        topics.len()
    );
    head + &columns(&rows)
}

fn bandwidth(bytes_per_s: f64) -> String {
    if bytes_per_s >= 1e6 {
        format!("{:.1} MB/s", bytes_per_s / 1e6)
    } else if bytes_per_s >= 1e3 {
        format!("{:.1} kB/s", bytes_per_s / 1e3)
    } else {
        format!("{bytes_per_s:.0} B/s")
    }
}

fn json_doc(snap: &Snapshot, topics: &BTreeMap<String, Watched>, secs: f64) -> serde_json::Value {
    let list: Vec<_> = topics
        .iter()
        .map(|(name, w)| {
            let (writers, readers) = counts(snap, name);
            json!({
                "topic": name,
                "type_name": w.type_name,
                "writers": writers,
                "readers": readers,
                "rate_hz": w.samples as f64 / secs,
                "bytes_per_s": w.bytes as f64 / secs,
                "samples": w.total + w.samples,
                "not_read": w.why_not,
            })
        })
        .collect();
    json!({ "participants": snap.participants.len(), "topics": list })
}
