//! `join`: one process of a discovery-at-scale run (`bench/join.py`, issue 18). Process
//! `--index i` of `--processes P` creates `--endpoints E` endpoints, half writers and half
//! readers (RELIABLE, KEEP_LAST 1, type `KeyedSeq`), in the layout of the simulator's scale
//! scenario (`crates/tachyon-sim/src/scale.rs`): writer `k` on topic `join_{i}_{k}`, reader
//! `k` on the topic of writer `k` of process `i + 1 + k mod (P − 1)`. Every endpoint expects
//! exactly one match, while every process discovers all `P·E` endpoints.
//!
//! It prints one JSON line when every endpoint is matched — `{"index": i, "matched_at": T}`,
//! T in seconds since the Unix epoch, so the harness compares processes by the same clock —
//! and then keeps its participant (the others are still matching with it) until SIGINT or
//! SIGTERM, or `--duration` seconds after starting. It exits with status 1 if it is not
//! matched within `--match-timeout` seconds.
//!
//! `bench/peers/cyclone_join.c` and `bench/peers/fastdds_join.cpp` do the same with Cyclone
//! DDS and Fast DDS.

use std::time::{Duration, Instant, SystemTime};

use tachyon::prelude::*;

use super::node::participant_settings;
use super::options::PerfArgs;
use super::types::KeyedSeq;
use super::{stop_requested, Failure};

/// How often the matched counts are looked at.
const POLL: Duration = Duration::from_millis(5);

/// The topic of writer `k` of process `i`.
fn topic(i: u32, k: u32) -> String {
    format!("join_{i}_{k}")
}

/// Runs one `join` process.
pub fn run(a: &PerfArgs) -> Result<(), Failure> {
    let started = Instant::now();
    let (i, p, e) = (a.index, a.processes, a.endpoints);
    if p < 2 || i >= p {
        return Err(Failure::Usage(format!(
            "join needs --processes of at least 2 and --index below it (got {i} of {p})"
        )));
    }
    let other = Failure::Other;
    let (settings, _) = participant_settings(a, Vec::new()).map_err(|e| other(e.to_string()))?;
    let participant =
        DomainParticipant::with_settings(a.domain, &settings).map_err(|e| other(e.to_string()))?;
    let publisher = participant
        .create_publisher()
        .map_err(|e| other(e.to_string()))?;
    let subscriber = participant
        .create_subscriber()
        .map_err(|e| other(e.to_string()))?;
    let writers_n = e.div_ceil(2);
    let mut writers = Vec::new();
    for k in 0..writers_n {
        let t = participant
            .create_topic::<KeyedSeq>(&topic(i, k))
            .map_err(|e| other(e.to_string()))?;
        let qos = DataWriterQos::default().reliable().keep_last(1);
        writers.push(
            publisher
                .create_datawriter(&t, qos)
                .map_err(|e| other(e.to_string()))?,
        );
    }
    let mut readers = Vec::new();
    for k in 0..e / 2 {
        let owner = (i + 1 + k % (p - 1)) % p;
        let t = participant
            .create_topic::<KeyedSeq>(&topic(owner, k))
            .map_err(|e| other(e.to_string()))?;
        let qos = DataReaderQos::default().reliable().keep_last(1);
        readers.push(
            subscriber
                .create_datareader(&t, qos)
                .map_err(|e| other(e.to_string()))?,
        );
    }
    let timeout = Duration::from_secs_f64(a.match_timeout);
    loop {
        let matched = writers
            .iter()
            .all(|w| w.get_publication_matched_status().current_count >= 1)
            && readers
                .iter()
                .all(|r| r.get_subscription_matched_status().current_count >= 1);
        if matched {
            break;
        }
        if started.elapsed() > timeout || stop_requested() {
            return Err(Failure::NoMatch(format!(
                "process {i}: not every endpoint matched within {:.1} s",
                started.elapsed().as_secs_f64()
            )));
        }
        std::thread::sleep(POLL);
    }
    let at = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    println!("{{\"index\": {i}, \"matched_at\": {at:.6}}}");
    let end = started + Duration::from_secs_f64(a.duration);
    super::sleep_until_stopped(end);
    Ok(())
}
