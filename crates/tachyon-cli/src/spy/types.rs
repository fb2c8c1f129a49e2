//! `spy typeof TOPIC`: the topic's type as IDL, rebuilt from the complete TypeObjects its
//! writers' and readers' participants serve through the XTypes TypeLookup service — any
//! vendor's that announces TypeInformation and answers TypeLookup (Cyclone DDS 0.10 and 11,
//! Fast DDS 3, Tachyon). Endpoints of one topic may disagree on the type: each distinct type
//! is printed once, with the endpoints that announce it. A type that cannot be obtained is
//! said so, with why and what to do.

use std::time::Duration;

use serde_json::{json, Value};
use tachyon::DomainParticipant;
use tachyon_wire::Guid;

use super::snapshot::Snapshot;
use crate::perf::Failure;

/// How long one type's TypeLookup may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// One type found on the topic.
struct Found {
    type_name: String,
    /// The minimal type identifier, when announced.
    key: Option<Vec<u8>>,
    endpoints: Vec<(Guid, &'static str, String)>,
    idl: Result<String, String>,
}

fn find(p: &DomainParticipant, snap: &Snapshot, topic: &str) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    let endpoints = snap
        .writers
        .iter()
        .filter(|w| w.topic_name == topic)
        .map(|w| (w.key.0, "writer", &w.type_name, &w.type_information))
        .chain(
            snap.readers
                .iter()
                .filter(|r| r.topic_name == topic)
                .map(|r| (r.key.0, "reader", &r.type_name, &r.type_information)),
        );
    for (guid, kind, type_name, info) in endpoints {
        let vendor = snap.vendor_of(guid.prefix);
        // Endpoints announcing the same complete type (or, without TypeInformation, the same
        // name) share one entry; the sizes in TypeInformation may differ (Cyclone DDS sends 0
        // for the top-level ones).
        let key = info.as_ref().map(|raw| {
            match tachyon::xtypes::TypeInformation::from_bytes(raw, tachyon_cdr::Endianness::Little)
            {
                Ok(i) => i.complete.id.id.to_bytes(),
                Err(_) => raw.clone(),
            }
        });
        if let Some(f) = found
            .iter_mut()
            .find(|f| f.key == key && (key.is_some() || &f.type_name == type_name))
        {
            f.endpoints.push((guid, kind, vendor));
            continue;
        }
        let idl = if key.is_none() {
            Err(format!(
                "{vendor} announces no TypeInformation for it: its IDL cannot be obtained from \
                 the network; the type's IDL file is needed"
            ))
        } else {
            match p.discovered_type(guid, FETCH_TIMEOUT) {
                Ok(desc) => Ok(tachyon::xtypes::idl::to_idl(&desc)),
                Err(tachyon::Error::Timeout) => Err(format!(
                    "{vendor} did not answer the TypeLookup request within {FETCH_TIMEOUT:?}; \
                     the type's IDL file is needed"
                )),
                Err(e) => Err(format!("{e}; the type's IDL file is needed")),
            }
        };
        found.push(Found {
            type_name: type_name.clone(),
            key,
            endpoints: vec![(guid, kind, vendor)],
            idl,
        });
    }
    found
}

fn endpoints_line(f: &Found) -> String {
    f.endpoints
        .iter()
        .map(|(g, kind, vendor)| format!("{kind} {g} ({vendor})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The IDL text (one block per type) or why there is none.
pub fn text(
    p: &DomainParticipant,
    snap: &Snapshot,
    topic: &str,
    domain: u32,
) -> Result<String, Failure> {
    let found = find(p, snap, topic);
    if found.is_empty() {
        return Err(Failure::NoMatch(format!(
            "no writer or reader of topic {topic:?} was discovered on domain {domain} \
             (listen longer with --wait?)"
        )));
    }
    let mut out = String::new();
    let mut any = false;
    for f in &found {
        out.push_str(&format!("// {}: {}\n", f.type_name, endpoints_line(f)));
        match &f.idl {
            Ok(idl) => {
                any = true;
                out.push_str(idl);
            }
            Err(why) => out.push_str(&format!("// not available: {why}\n")),
        }
        out.push('\n');
    }
    if any {
        Ok(out)
    } else {
        eprint!("{out}");
        Err(Failure::Other(format!(
            "the type of topic {topic:?} could not be obtained"
        )))
    }
}

/// The same as one JSON document.
pub fn json(p: &DomainParticipant, snap: &Snapshot, topic: &str) -> Value {
    let types: Vec<Value> = find(p, snap, topic)
        .iter()
        .map(|f| {
            json!({
                "type_name": f.type_name,
                "endpoints": f.endpoints.iter().map(|(g, kind, vendor)| json!({
                    "guid": g.to_string(), "kind": kind, "vendor": vendor,
                })).collect::<Vec<_>>(),
                "idl": f.idl.as_ref().ok(),
                "error": f.idl.as_ref().err(),
            })
        })
        .collect();
    json!({ "topic": topic, "types": types })
}
