//! `spy echo TOPIC`: the samples of any vendor's topic, decoded with the type its writers'
//! participants describe through XTypes TypeLookup (a dynamic reader), printed as YAML (one
//! `---` document per sample, as `ros2 topic echo` does) or, with `--json`, one JSON object
//! per line with the sample's writer, time, instance and instance state. `--filter` keeps the
//! samples a DDS SQL expression accepts (the grammar of content-filtered topics).
//!
//! Samples print in arrival order. As DDS reports them, a dispose or unregister that arrives
//! while a sample of its instance is still unread shows as that sample's instance state, not
//! as a record of its own.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tachyon::dynamic::{DynamicData, DynamicType};
use tachyon::xtypes::dynamic::{field_kind, DynFieldKind, Value};
use tachyon::{DomainParticipant, InstanceState, KeyHash, Sample};
use tachyon_cdr::{FieldKind, TypeDesc};
use tachyon_proto::filter::ContentFilter;

use super::snapshot::Snapshot;
use super::subscribe;
use crate::perf::Failure;

/// How long the topic's type may take to arrive.
const TYPE_TIMEOUT: Duration = Duration::from_secs(5);

/// What `echo` prints and for how long.
pub struct Options<'a> {
    pub topic: &'a str,
    pub count: Option<u64>,
    pub duration: Option<f64>,
    pub filter: Option<&'a str>,
    pub params: &'a [String],
    pub json: bool,
    pub domain: u32,
    /// An IDL file to take the type from, its include directories, and the type's name.
    pub idl: Option<&'a std::path::Path>,
    pub include: &'a [std::path::PathBuf],
    pub type_name: Option<&'a str>,
}

/// The type `name` of an IDL file.
pub fn idl_type(
    path: &std::path::Path,
    include: &[std::path::PathBuf],
    name: &str,
) -> Result<DynamicType, Failure> {
    let o = crate::idl::options(include, &[], crate::idl::Ext::Final);
    let idl = tachyon_idl::parse_file(path, &o).map_err(|e| Failure::Other(e.to_string()))?;
    let desc = idl
        .type_desc(name)
        .map_err(|e| Failure::Other(e.to_string()))?;
    DynamicType::new(desc).map_err(Failure::dds)
}

/// The type of `topic` from its endpoints' participants, or why it cannot be had.
pub fn topic_type(p: &DomainParticipant, topic: &str) -> Result<DynamicType, Failure> {
    p.find_topic_type(topic, TYPE_TIMEOUT).map_err(|e| match e {
        tachyon::Error::TypeUnavailable(why) => Failure::Other(format!(
            "the type of topic {topic:?} cannot be obtained: {why}; give the type's IDL file \
             with --idl FILE"
        )),
        tachyon::Error::Timeout => Failure::Other(format!(
            "the type of topic {topic:?} did not arrive within {TYPE_TIMEOUT:?} (no \
             endpoint of it answered TypeLookup); give the type's IDL file with --idl FILE"
        )),
        e => Failure::dds(e),
    })
}

/// A filter's view of the type: member kinds as `tachyon_cdr::FieldKind`, whose names are
/// `'static` (a derived type's are). The names of a dynamic type live as long as this
/// process: leaked once per member path the expression names, a few strings.
fn kinds(desc: &TypeDesc) -> impl Fn(&[&str]) -> Option<FieldKind> + '_ {
    move |path: &[&str]| {
        let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
        Some(match field_kind(desc, path)? {
            DynFieldKind::Bool => FieldKind::Bool,
            DynFieldKind::Char => FieldKind::Char,
            DynFieldKind::Int => FieldKind::Int,
            DynFieldKind::UInt => FieldKind::UInt,
            DynFieldKind::Float => FieldKind::Float,
            DynFieldKind::String => FieldKind::String,
            DynFieldKind::Enum(list) => FieldKind::Enum(Box::leak(
                list.iter()
                    .map(|(n, v)| (leak(n), *v))
                    .collect::<Vec<_>>()
                    .into_boxed_slice(),
            )),
            DynFieldKind::Struct(names) => FieldKind::Struct(Box::leak(
                names
                    .iter()
                    .map(|n| leak(n))
                    .collect::<Vec<_>>()
                    .into_boxed_slice(),
            )),
            DynFieldKind::Unsupported(what) => FieldKind::Unsupported(what),
        })
    }
}

/// The names of the type's key members (its base's first).
fn key_names(desc: &TypeDesc) -> Vec<String> {
    fn of(s: &tachyon_cdr::StructDesc, out: &mut Vec<String>) {
        if let Some(b) = &s.base {
            of(b, out);
        }
        out.extend(s.members.iter().filter(|m| m.key).map(|m| m.name.clone()));
    }
    let mut out = Vec::new();
    if let TypeDesc::Struct(s) = desc {
        of(s, &mut out);
    }
    out
}

/// The key members of `v` as a struct value.
fn key_of(v: &Value, names: &[String]) -> Value {
    Value::Struct(
        names
            .iter()
            .map(|n| (n.clone(), v.field(n).cloned()))
            .collect(),
    )
}

pub fn run(
    p: &DomainParticipant,
    snap: &Snapshot,
    o: &Options<'_>,
    stop: &Arc<AtomicBool>,
) -> Result<(), Failure> {
    let plan = subscribe::plan(snap, o.topic, o.domain)?;
    subscribe::warn_unmatched(&plan);
    let ty = match o.idl {
        Some(path) => idl_type(path, o.include, o.type_name.unwrap_or(&plan.type_name))?,
        None => topic_type(p, o.topic)?,
    };
    let filter = match o.filter {
        Some(expr) => Some(
            ContentFilter::with_kinds(expr, o.params, &kinds(ty.desc()))
                .map_err(|e| Failure::Usage(format!("--filter: {e}")))?,
        ),
        None => None,
    };
    let topic = p.create_dynamic_topic(o.topic, &ty).map_err(Failure::dds)?;
    let reader = subscribe::subscriber(p, &plan)?
        .create_datareader(&topic, plan.reader.clone())
        .map_err(Failure::dds)?;
    let keys = key_names(ty.desc());
    let mut known: HashMap<KeyHash, Value> = HashMap::new();
    let end = o
        .duration
        .map(|d| Instant::now() + Duration::from_secs_f64(d));
    let mut printed = 0u64;
    while !stop.load(Ordering::Relaxed) && !end.is_some_and(|e| Instant::now() >= e) {
        if o.count.is_some_and(|c| printed >= c) {
            break;
        }
        if !reader.wait_for_data(Duration::from_millis(100)) {
            continue;
        }
        // In arrival order: a take returns samples instance by instance.
        let mut batch = reader.take(4096).map_err(Failure::dds)?;
        batch.sort_by_key(|s| s.info.reception_time);
        for s in batch {
            if o.count.is_some_and(|c| printed >= c) {
                break;
            }
            if let Some(d) = &s.data {
                if filter.as_ref().is_some_and(|f| !f.matches(d.value())) {
                    continue;
                }
                if !keys.is_empty() {
                    known.insert(s.info.instance_handle, key_of(d.value(), &keys));
                }
            }
            let key = known.get(&s.info.instance_handle);
            let text = if o.json {
                json_line(o.topic, &s, key)
            } else {
                yaml_doc(&s, key)
            };
            if !super::emit(&text) {
                return Ok(());
            }
            printed += 1;
            if s.info.instance_state != InstanceState::Alive {
                known.remove(&s.info.instance_handle);
            }
        }
    }
    Ok(())
}

fn state_name(s: InstanceState) -> &'static str {
    match s {
        InstanceState::Alive => "ALIVE",
        InstanceState::NotAliveDisposed => "NOT_ALIVE_DISPOSED",
        InstanceState::NotAliveNoWriters => "NOT_ALIVE_NO_WRITERS",
    }
}

/// One sample as a YAML document: a comment line with its time and writer, then the data,
/// or for a dispose or unregister its instance state and key.
fn yaml_doc(s: &Sample<DynamicData>, key: Option<&Value>) -> String {
    let time = if s.info.source_timestamp == tachyon_wire::Time::INVALID {
        "no source time".to_owned()
    } else {
        utc(s.info.source_timestamp)
    };
    let mut out = format!("--- # {time} from {}\n", s.info.publication_handle);
    match &s.data {
        Some(d) => out.push_str(&d.value().to_yaml()),
        None => {
            out.push_str(&format!(
                "instance_state: {}\n",
                state_name(s.info.instance_state)
            ));
            match key {
                Some(k) => out.push_str(&format!("key: {}\n", k.to_json())),
                None => out.push_str(&format!("instance: \"{}\"\n", s.info.instance_handle)),
            }
        }
    }
    out
}

/// One sample as a line of JSON (members in declaration order).
fn json_line(topic: &str, s: &Sample<DynamicData>, key: Option<&Value>) -> String {
    let t = s.info.source_timestamp;
    let text = |v: &str| serde_json::Value::from(v).to_string();
    let mut line = format!(
        "{{\"topic\": {}, \"writer\": {}, \"source_timestamp\": {}, \"instance\": {}, \
         \"instance_state\": {}, \"data\": {}",
        text(topic),
        text(&s.info.publication_handle.to_string()),
        if t == tachyon_wire::Time::INVALID {
            serde_json::Value::Null
        } else {
            json!(f64::from(t.seconds) + f64::from(t.fraction) / 4_294_967_296.0)
        },
        text(&s.info.instance_handle.to_string()),
        text(state_name(s.info.instance_state)),
        s.data
            .as_ref()
            .map_or_else(|| "null".to_owned(), |d| d.value().to_json()),
    );
    if s.data.is_none() {
        line.push_str(", \"key\": ");
        line.push_str(&key.map_or_else(|| "null".to_owned(), Value::to_json));
    }
    line.push_str("}\n");
    line
}

/// A wire time as UTC `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
pub fn utc(t: tachyon_wire::Time) -> String {
    let secs = i64::from(t.seconds);
    let micros = (u64::from(t.fraction) * 1_000_000) >> 32;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_as_utc() {
        let t = tachyon_wire::Time {
            seconds: 1_795_596_672,
            fraction: 1 << 31,
        };
        assert_eq!(utc(t), "2026-11-25T08:51:12.500000Z");
        let epoch = tachyon_wire::Time {
            seconds: 0,
            fraction: 0,
        };
        assert_eq!(utc(epoch), "1970-01-01T00:00:00.000000Z");
        let leap = tachyon_wire::Time {
            seconds: 951_782_400,
            fraction: 0,
        };
        assert_eq!(utc(leap), "2000-02-29T00:00:00.000000Z");
    }
}
