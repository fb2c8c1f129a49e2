//! `tachyon spy ls`: the participants.

use serde_json::{json, Value};
use tachyon_wire::Locator;

use super::columns;
use super::snapshot::{Participant, Snapshot};

fn lease(p: &Participant) -> String {
    match p.data.lease_duration {
        Some(d) => {
            format!("{:.3}", d.as_secs_f64())
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_owned()
                + " s"
        }
        None => "infinite".to_owned(),
    }
}

fn endpoints(s: &Snapshot, p: &Participant) -> (usize, usize) {
    let prefix = p.data.key.0.prefix;
    let w = s
        .writers
        .iter()
        .filter(|w| w.key.0.prefix == prefix)
        .count();
    let r = s
        .readers
        .iter()
        .filter(|r| r.key.0.prefix == prefix)
        .count();
    (w, r)
}

pub fn table(s: &Snapshot) -> String {
    if s.participants.is_empty() {
        return "no participant found (none announced itself on this domain in the time \
                given: --domain, --wait)\n"
            .to_owned();
    }
    let mut rows = vec![[
        "PARTICIPANT",
        "VENDOR",
        "HOST",
        "PROCESS",
        "NAME",
        "LEASE",
        "WRITERS",
        "READERS",
    ]
    .map(str::to_owned)
    .to_vec()];
    for p in &s.participants {
        let (w, r) = endpoints(s, p);
        rows.push(vec![
            p.data.key.0.prefix.to_string(),
            p.vendor(),
            p.host.clone().unwrap_or_else(|| "?".to_owned()),
            p.process_label(),
            p.data.entity_name.clone().unwrap_or_else(|| "-".to_owned()),
            lease(p),
            w.to_string(),
            r.to_string(),
        ]);
    }
    columns(&rows)
}

fn locators(l: &[Locator]) -> Value {
    l.iter().map(|l| Value::String(l.to_string())).collect()
}

pub fn json(s: &Snapshot) -> Value {
    let list: Vec<Value> = s
        .participants
        .iter()
        .map(|p| {
            let d = &p.data;
            let (w, r) = endpoints(s, p);
            json!({
                "guid": d.key.0.to_string(),
                "vendor_id": format!("{:02x}{:02x}", d.vendor_id.0[0], d.vendor_id.0[1]),
                "vendor": d.vendor_id.name(),
                "version": d.product_version.map(|v| v.to_string()),
                "host": p.host,
                "process": p.process,
                "pid": p.pid,
                "entity_name": d.entity_name,
                "domain_id": d.domain_id,
                "domain_tag": d.domain_tag,
                "lease_seconds": d.lease_duration.map(|l| l.as_secs_f64()),
                "writers": w,
                "readers": r,
                "metatraffic_unicast": locators(&d.metatraffic_unicast_locators),
                "metatraffic_multicast": locators(&d.metatraffic_multicast_locators),
                "default_unicast": locators(&d.default_unicast_locators),
                "default_multicast": locators(&d.default_multicast_locators),
                "properties": d.properties.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect::<serde_json::Map<String, Value>>(),
            })
        })
        .collect();
    json!({ "participants": list })
}
