//! `tachyon spy topics`: each topic's types, writers and readers, and the pairs of a topic that
//! do not match and why (checked as SEDP matching checks them, `tachyon_proto::qos::compat`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use tachyon::builtin::{PublicationBuiltinTopicData, SubscriptionBuiltinTopicData};
use tachyon_cdr::Endianness;
use tachyon_proto::discovery::{PublicationData, SubscriptionData};
use tachyon_proto::history::History;
use tachyon_proto::qos::compat::{self, MatchOutcome, TypeMatch, Unannounced};
use tachyon_proto::qos::{DataRepresentation, DurabilityKind, OwnershipKind};
use tachyon_proto::{quirks, Reliability};
use tachyon_xtypes::TypeInformation;

use super::columns;
use super::snapshot::Snapshot;

/// One topic's endpoints, and why some pairs of them do not match.
struct Topic<'a> {
    name: &'a str,
    types: BTreeSet<&'a str>,
    writers: Vec<&'a PublicationBuiltinTopicData>,
    readers: Vec<&'a SubscriptionBuiltinTopicData>,
    unmatched: Vec<Unmatched<'a>>,
}

struct Unmatched<'a> {
    writer: &'a PublicationBuiltinTopicData,
    reader: &'a SubscriptionBuiltinTopicData,
    /// Incompatible QoS policies (empty when the reason is another).
    policies: Vec<&'static str>,
    reason: String,
}

fn topics(s: &Snapshot) -> Vec<Topic<'_>> {
    let mut by_name: BTreeMap<&str, Topic<'_>> = BTreeMap::new();
    let topic = |name| Topic {
        name,
        types: BTreeSet::new(),
        writers: Vec::new(),
        readers: Vec::new(),
        unmatched: Vec::new(),
    };
    for w in &s.writers {
        let t = by_name
            .entry(&w.topic_name)
            .or_insert_with(|| topic(&w.topic_name));
        t.types.insert(&w.type_name);
        t.writers.push(w);
    }
    for r in &s.readers {
        let t = by_name
            .entry(&r.topic_name)
            .or_insert_with(|| topic(&r.topic_name));
        t.types.insert(&r.type_name);
        t.readers.push(r);
    }
    let mut list: Vec<Topic<'_>> = by_name.into_values().collect();
    for t in &mut list {
        for w in &t.writers {
            for r in &t.readers {
                if let Some(u) = unmatched(s, w, r) {
                    t.unmatched.push(u);
                }
            }
        }
    }
    list
}

/// Why `w` and `r` (of one topic) do not match, if they do not.
fn unmatched<'a>(
    s: &Snapshot,
    w: &'a PublicationBuiltinTopicData,
    r: &'a SubscriptionBuiltinTopicData,
) -> Option<Unmatched<'a>> {
    let mut offered = PublicationData::new(w.key.0, &w.topic_name, &w.type_name);
    offered.qos = w.qos.clone().into();
    offered.presentation = w.presentation;
    offered.partition = w.partition.clone();
    let mut requested = SubscriptionData::new(r.key.0, &r.topic_name, &r.type_name);
    requested.qos = r.qos.clone().into();
    requested.presentation = r.presentation;
    requested.partition = r.partition.clone();
    let silent = |prefix| {
        s.participant(prefix)
            .is_some_and(|p| quirks::omits_data_representation(p.data.vendor_id))
    };
    let unannounced = if silent(w.key.0.prefix) {
        Unannounced::Writer
    } else if silent(r.key.0.prefix) {
        Unannounced::Reader
    } else {
        Unannounced::Neither
    };
    // With TypeInformation on both sides, type names do not matter: equal minimal type
    // identifiers are one type, different ones match when assignable, which takes their
    // TypeObjects (not fetched here): the pair is judged on its QoS and partitions.
    let typed = |raw: &Option<Vec<u8>>| {
        raw.as_deref()
            .and_then(|b| TypeInformation::from_bytes(b, Endianness::Little).ok())
            .filter(|i| i.minimal.id.id.hash().is_some())
    };
    let types = match (typed(&w.type_information), typed(&r.type_information)) {
        (Some(_), Some(_)) => TypeMatch::Compatible,
        _ => TypeMatch::ByName,
    };
    let (policies, reason) = match compat::check_typed(&offered, &requested, unannounced, types) {
        MatchOutcome::Match(_) => return None,
        MatchOutcome::Incompatible(p) => {
            let names: Vec<&'static str> = p.iter().map(|p| p.name()).collect();
            let reason = format!("incompatible QoS: {}", names.join(", "));
            (names, reason)
        }
        MatchOutcome::NotRelated if !compat::type_names_match(&w.type_name, &r.type_name) => (
            Vec::new(),
            format!("type names differ: {} / {}", w.type_name, r.type_name),
        ),
        MatchOutcome::NotRelated => (
            Vec::new(),
            format!(
                "no common partition: {} / {}",
                partitions(&w.partition),
                partitions(&r.partition)
            ),
        ),
    };
    Some(Unmatched {
        writer: w,
        reader: r,
        policies,
        reason,
    })
}

fn partitions(p: &[String]) -> String {
    if p.is_empty() {
        "[\"\"]".to_owned()
    } else {
        format!("{p:?}")
    }
}

fn reliability(r: Reliability) -> &'static str {
    match r {
        Reliability::BestEffort => "BEST_EFFORT",
        Reliability::Reliable => "RELIABLE",
    }
}

fn durability(d: DurabilityKind) -> &'static str {
    match d {
        DurabilityKind::Volatile => "VOLATILE",
        DurabilityKind::TransientLocal => "TRANSIENT_LOCAL",
        DurabilityKind::Transient => "TRANSIENT",
        DurabilityKind::Persistent => "PERSISTENT",
    }
}

fn history(h: History) -> String {
    match h {
        History::KeepLast(n) => format!("KEEP_LAST({n})"),
        History::KeepAll => "KEEP_ALL".to_owned(),
    }
}

fn representations(r: &[DataRepresentation]) -> String {
    let names: Vec<&str> = r
        .iter()
        .map(|r| match r {
            DataRepresentation::Xcdr1 => "XCDR1",
            DataRepresentation::Xml => "XML",
            DataRepresentation::Xcdr2 => "XCDR2",
        })
        .collect();
    names.join("+")
}

/// The QoS a user looks at first, in DDS's names.
fn writer_qos(w: &PublicationBuiltinTopicData) -> Vec<String> {
    let q = &w.qos;
    let mut v = vec![
        reliability(q.reliability.kind).to_owned(),
        durability(q.durability).to_owned(),
        history(q.history),
    ];
    if q.ownership == OwnershipKind::Exclusive {
        v.push(format!("EXCLUSIVE({})", q.ownership_strength));
    }
    if let Some(d) = q.deadline {
        v.push(format!("DEADLINE({:?})", d));
    }
    if !w.partition.is_empty() {
        v.push(format!("PARTITION{:?}", w.partition));
    }
    if !q.representation.is_empty() {
        v.push(representations(&q.representation));
    }
    v
}

fn reader_qos(r: &SubscriptionBuiltinTopicData) -> Vec<String> {
    let q = &r.qos;
    let mut v = vec![
        reliability(q.reliability.kind).to_owned(),
        durability(q.durability).to_owned(),
        history(q.history),
    ];
    if q.ownership == OwnershipKind::Exclusive {
        v.push("EXCLUSIVE".to_owned());
    }
    if let Some(d) = q.deadline {
        v.push(format!("DEADLINE({:?})", d));
    }
    if !r.partition.is_empty() {
        v.push(format!("PARTITION{:?}", r.partition));
    }
    if !q.representation.is_empty() {
        v.push(representations(&q.representation));
    }
    v
}

pub fn table(s: &Snapshot) -> String {
    let list = topics(s);
    if list.is_empty() {
        return "no topic found (no writer or reader announced on this domain in the time \
                given: --domain, --wait)\n"
            .to_owned();
    }
    let mut rows = vec![["TOPIC", "TYPE", "WRITERS", "READERS", "NOT MATCHED"]
        .map(str::to_owned)
        .to_vec()];
    for t in &list {
        rows.push(vec![
            t.name.to_owned(),
            t.types.iter().copied().collect::<Vec<_>>().join(" / "),
            t.writers.len().to_string(),
            t.readers.len().to_string(),
            match t.unmatched.len() {
                0 => "-".to_owned(),
                1 => "1 pair".to_owned(),
                n => format!("{n} pairs"),
            },
        ]);
    }
    let mut out = columns(&rows);
    for t in &list {
        out.push_str(&format!("\n{}\n", t.name));
        let mut rows = Vec::new();
        for w in &t.writers {
            rows.push(vec![
                "  writer".to_owned(),
                w.key.0.to_string(),
                s.vendor_of(w.key.0.prefix),
                w.type_name.clone(),
                writer_qos(w).join(" "),
            ]);
        }
        for r in &t.readers {
            rows.push(vec![
                "  reader".to_owned(),
                r.key.0.to_string(),
                s.vendor_of(r.key.0.prefix),
                r.type_name.clone(),
                reader_qos(r).join(" "),
            ]);
        }
        out.push_str(&columns(&rows));
        for u in &t.unmatched {
            out.push_str(&format!(
                "  ! writer {} and reader {} do not match: {}\n",
                u.writer.key.0, u.reader.key.0, u.reason
            ));
        }
    }
    out
}

pub fn json(s: &Snapshot) -> Value {
    let list: Vec<Value> = topics(s)
        .iter()
        .map(|t| {
            let writers: Vec<Value> = t
                .writers
                .iter()
                .map(|w| {
                    json!({
                        "guid": w.key.0.to_string(),
                        "participant": w.participant_key.0.to_string(),
                        "vendor": s.vendor_of(w.key.0.prefix),
                        "type": w.type_name,
                        "qos": writer_qos(w),
                        "partition": w.partition,
                    })
                })
                .collect();
            let readers: Vec<Value> = t
                .readers
                .iter()
                .map(|r| {
                    json!({
                        "guid": r.key.0.to_string(),
                        "participant": r.participant_key.0.to_string(),
                        "vendor": s.vendor_of(r.key.0.prefix),
                        "type": r.type_name,
                        "qos": reader_qos(r),
                        "partition": r.partition,
                    })
                })
                .collect();
            let unmatched: Vec<Value> = t
                .unmatched
                .iter()
                .map(|u| {
                    json!({
                        "writer": u.writer.key.0.to_string(),
                        "reader": u.reader.key.0.to_string(),
                        "incompatible_policies": u.policies,
                        "reason": u.reason,
                    })
                })
                .collect();
            json!({
                "name": t.name,
                "types": t.types,
                "writers": writers,
                "readers": readers,
                "not_matched": unmatched,
            })
        })
        .collect();
    json!({ "topics": list })
}
