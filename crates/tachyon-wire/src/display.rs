//! Human-readable, one-line-per-submessage rendering (Wireshark-summary style) for logs and
//! packet dumps.

use crate::bytes::Endian;
use crate::message::{Message, MessageView};
use crate::parameter::payload::{encapsulation, Encapsulation, ParameterListPayload};
use crate::parameter::{pid, Parameter, ParameterList, ParameterValue};
use crate::submessage::{id, DataPayload, Submessage, SubmessageBody, SubmessageView};
use std::fmt::{self, Display, Formatter, Write as _};

impl Display for Message {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let h = &self.header;
        write!(
            f,
            "RTPS {} vendor={} prefix={}",
            h.protocol_version, h.vendor_id, h.guid_prefix
        )?;
        for s in &self.submessages {
            write!(f, "\n  {s}")?;
        }
        Ok(())
    }
}

impl Display for MessageView<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let h = self.header();
        write!(
            f,
            "RTPS {} vendor={} prefix={}",
            h.protocol_version(),
            h.vendor_id(),
            h.guid_prefix()
        )?;
        for raw in self.raw_submessages() {
            match SubmessageView::new_checked(raw) {
                Ok(v) => write!(f, "\n  {}", Submessage::parse(&v))?,
                Err(e) => write!(f, "\n  {} <malformed: {e}>", id::name(raw.id))?,
            }
        }
        Ok(())
    }
}

impl Display for Submessage {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let name = id::name(self.id());
        match &self.body {
            SubmessageBody::Data(d) => {
                write!(
                    f,
                    "{name} writer={} reader={} sn={}",
                    d.writer_id, d.reader_id, d.writer_sn
                )?;
                write_gap(f, &d.gap)?;
                write_inline_qos(f, d.inline_qos.as_ref())?;
                match &d.payload {
                    DataPayload::None => {}
                    DataPayload::Data(p) => write_payload(f, "payload", p)?,
                    DataPayload::Key(p) => write_payload(f, "key", p)?,
                }
            }
            SubmessageBody::DataFrag(d) => {
                write!(
                    f,
                    "{name} writer={} reader={} sn={} frag={}+{} fragsize={} sample={}B",
                    d.writer_id,
                    d.reader_id,
                    d.writer_sn,
                    d.fragment_starting_num.0,
                    d.fragments_in_submessage,
                    d.fragment_size,
                    d.sample_size
                )?;
                write_gap(f, &d.gap)?;
                write_inline_qos(f, d.inline_qos.as_ref())?;
                write_payload(f, if d.key { "key" } else { "payload" }, &d.payload)?;
            }
            SubmessageBody::Heartbeat(h) => {
                write!(
                    f,
                    "{name} writer={} reader={} first={} last={} count={}",
                    h.writer_id, h.reader_id, h.first_sn, h.last_sn, h.count.0
                )?;
                if h.is_final {
                    f.write_str(" F")?;
                }
                if h.liveliness {
                    f.write_str(" L")?;
                }
                if let Some(g) = &h.group_info {
                    write!(
                        f,
                        " group=[current={} first={} last={}]",
                        g.current_gsn, g.first_gsn, g.last_gsn
                    )?;
                }
            }
            SubmessageBody::HeartbeatFrag(h) => write!(
                f,
                "{name} writer={} reader={} sn={} last_frag={} count={}",
                h.writer_id, h.reader_id, h.writer_sn, h.last_fragment_num.0, h.count.0
            )?,
            SubmessageBody::AckNack(a) => {
                write!(
                    f,
                    "{name} reader={} writer={} state={} count={}",
                    a.reader_id, a.writer_id, a.reader_sn_state, a.count.0
                )?;
                if a.is_final {
                    f.write_str(" F")?;
                }
            }
            SubmessageBody::NackFrag(n) => write!(
                f,
                "{name} reader={} writer={} sn={} missing={} count={}",
                n.reader_id, n.writer_id, n.writer_sn, n.fragment_number_state, n.count.0
            )?,
            SubmessageBody::Gap(g) => {
                write!(
                    f,
                    "{name} writer={} reader={} start={} list={}",
                    g.writer_id, g.reader_id, g.gap_start, g.gap_list
                )?;
                if let Some(gi) = &g.group_info {
                    write!(f, " group=[{}..{}]", gi.gap_start_gsn, gi.gap_end_gsn)?;
                }
            }
            SubmessageBody::InfoTs(t) => match &t.timestamp {
                Some(ts) => write!(f, "{name} {ts}")?,
                None => write!(f, "{name} invalidate")?,
            },
            SubmessageBody::InfoSrc(s) => write!(
                f,
                "{name} prefix={} vendor={} version={}",
                s.guid_prefix, s.vendor_id, s.protocol_version
            )?,
            SubmessageBody::InfoDst(d) => write!(f, "{name} prefix={}", d.guid_prefix)?,
            SubmessageBody::InfoReply(r) => {
                write!(f, "{name} unicast=")?;
                write_list(f, &r.unicast_locators)?;
                if let Some(m) = &r.multicast_locators {
                    f.write_str(" multicast=")?;
                    write_list(f, m)?;
                }
            }
            SubmessageBody::InfoReplyIp4(r) => {
                write!(f, "{name} unicast={}", r.unicast_locator)?;
                if let Some(m) = &r.multicast_locator {
                    write!(f, " multicast={m}")?;
                }
            }
            SubmessageBody::Pad(_) => write!(f, "{name} {}B", self.trailing.len())?,
            SubmessageBody::Unknown(u) => {
                write!(f, "{name}(0x{:02x}) {}B", u.id, self.trailing.len())?;
            }
        }
        let known = matches!(
            self.body,
            SubmessageBody::Pad(_) | SubmessageBody::Unknown(_)
        );
        if !known && !self.trailing.is_empty() {
            write!(f, " +{}B", self.trailing.len())?;
        }
        if self.unknown_flags != 0 {
            write!(f, " flags+0x{:02x}", self.unknown_flags)?;
        }
        if self.endian == Endian::Big {
            f.write_str(" BE")?;
        }
        Ok(())
    }
}

fn write_gap(f: &mut Formatter<'_>, gap: &[u8]) -> fmt::Result {
    if gap.is_empty() {
        Ok(())
    } else {
        write!(f, " gap={}B", gap.len())
    }
}

fn write_inline_qos(f: &mut Formatter<'_>, qos: Option<&ParameterList>) -> fmt::Result {
    match qos {
        Some(q) => write!(f, " [inline qos: {q}]"),
        None => Ok(()),
    }
}

fn write_payload(f: &mut Formatter<'_>, what: &str, p: &[u8]) -> fmt::Result {
    write!(f, " {what}={}B", p.len())?;
    if let Some(name) = Encapsulation::parse(p).and_then(|e| encapsulation::name(e.kind)) {
        write!(f, " ({name})")?;
    }
    Ok(())
}

fn write_list<T: Display>(f: &mut Formatter<'_>, items: &[T]) -> fmt::Result {
    f.write_str("[")?;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    f.write_str("]")
}

impl Display for ParameterList {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, p) in self.parameters.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl Display for ParameterListPayload {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let kind = self.encapsulation.kind;
        match encapsulation::name(kind) {
            Some(n) => write!(f, "{n} {{{}}}", self.list),
            None => write!(f, "encapsulation 0x{kind:04x} {{{}}}", self.list),
        }
    }
}

impl Display for Parameter {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match pid::name(self.pid) {
            Some(n) => f.write_str(n)?,
            None => write!(f, "0x{:04x}", self.pid)?,
        }
        f.write_str("=")?;
        write_value(f, self.pid, &self.value)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn kind_name(pid: u16, kind: u32) -> Option<&'static str> {
    Some(match (pid, kind) {
        (pid::DURABILITY, 0) => "VOLATILE",
        (pid::DURABILITY, 1) => "TRANSIENT_LOCAL",
        (pid::DURABILITY, 2) => "TRANSIENT",
        (pid::DURABILITY, 3) => "PERSISTENT",
        (pid::OWNERSHIP, 0) => "SHARED",
        (pid::OWNERSHIP, 1) => "EXCLUSIVE",
        (pid::DESTINATION_ORDER, 0) => "BY_RECEPTION_TIMESTAMP",
        (pid::DESTINATION_ORDER, 1) => "BY_SOURCE_TIMESTAMP",
        (pid::RELIABILITY, 1) => "BEST_EFFORT",
        (pid::RELIABILITY, 2) => "RELIABLE",
        (pid::LIVELINESS, 0) => "AUTOMATIC",
        (pid::LIVELINESS, 1) => "MANUAL_BY_PARTICIPANT",
        (pid::LIVELINESS, 2) => "MANUAL_BY_TOPIC",
        _ => return None,
    })
}

fn write_kind(f: &mut Formatter<'_>, pid: u16, kind: u32) -> fmt::Result {
    match kind_name(pid, kind) {
        Some(n) => f.write_str(n),
        None => write!(f, "{kind}"),
    }
}

fn write_value(f: &mut Formatter<'_>, pid: u16, v: &ParameterValue) -> fmt::Result {
    use ParameterValue as V;
    match v {
        V::Opaque(b) if b.len() <= 16 => write!(f, "<{}>", hex(b)),
        V::Opaque(b) => write!(f, "<{}B>", b.len()),
        V::String(s) => write!(f, "{s:?}"),
        V::StringSeq(v) => write!(f, "{v:?}"),
        V::OctetSeq(b) => write!(f, "<{}B>", b.len()),
        V::U32(x)
            if matches!(
                pid,
                pid::BUILTIN_ENDPOINT_SET
                    | pid::PARTICIPANT_BUILTIN_ENDPOINTS
                    | pid::BUILTIN_ENDPOINT_QOS
            ) =>
        {
            write!(f, "0x{x:08x}")
        }
        V::U32(x) => write_kind(f, pid, *x),
        V::I32(x) => write!(f, "{x}"),
        V::Bool(b) => write!(f, "{b}"),
        V::Duration(d) => write!(f, "{d}"),
        V::Locator(l) => write!(f, "{l}"),
        V::Guid(g) => write!(f, "{g}"),
        V::EntityId(e) => write!(f, "{e}"),
        V::KeyHash(k) => f.write_str(&hex(k)),
        V::StatusInfo(s) => {
            let bits = s[3];
            let names: Vec<&str> = [(1u8, "DISPOSED"), (2, "UNREGISTERED"), (4, "FILTERED")]
                .iter()
                .filter(|(b, _)| bits & b != 0)
                .map(|(_, n)| *n)
                .collect();
            if names.is_empty() || s[..3] != [0, 0, 0] || bits & !7 != 0 {
                write!(f, "0x{}", hex(s))
            } else {
                f.write_str(&names.join("|"))
            }
        }
        V::ProtocolVersion(p) => write!(f, "{p}"),
        V::VendorId(v) => write!(f, "{v}"),
        V::SequenceNumber(sn) => write!(f, "{sn}"),
        V::Reliability(q) => {
            write_kind(f, pid, q.kind)?;
            write!(f, " max_blocking={}", q.max_blocking_time)
        }
        V::Liveliness(q) => {
            write_kind(f, pid, q.kind)?;
            write!(f, " lease={}", q.lease_duration)
        }
        V::History(q) => match q.kind {
            0 => write!(f, "KEEP_LAST({})", q.depth),
            1 => f.write_str("KEEP_ALL"),
            k => write!(f, "{k}({})", q.depth),
        },
        V::ResourceLimits(q) => write!(
            f,
            "samples={} instances={} per_instance={}",
            q.max_samples, q.max_instances, q.max_samples_per_instance
        ),
        V::DurabilityService(q) => write!(
            f,
            "cleanup={} history={}({}) samples={} instances={} per_instance={}",
            q.service_cleanup_delay,
            q.history_kind,
            q.history_depth,
            q.limits.max_samples,
            q.limits.max_instances,
            q.limits.max_samples_per_instance
        ),
        V::Presentation(q) => write!(
            f,
            "scope={} coherent={} ordered={}",
            q.access_scope, q.coherent_access, q.ordered_access
        ),
        V::DataRepresentation(ids) => write!(f, "{ids:?}"),
        V::TypeConsistency { kind, options } => match options {
            Some(o) => write!(f, "{kind} {o:?}"),
            None => write!(f, "{kind}"),
        },
        V::ContentFilterProperty(c) => write!(
            f,
            "{:?} on {:?} {}: {:?} {:?}",
            c.content_filtered_topic_name,
            c.related_topic_name,
            c.filter_class_name,
            c.filter_expression,
            c.expression_parameters
        ),
        V::OriginalWriterInfo(g, sn) => write!(f, "{g}@{sn}"),
        V::PropertyList(props) => {
            f.write_str("{")?;
            for (i, (k, v)) in props.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{k:?}: {v:?}")?;
            }
            f.write_str("}")
        }
    }
}
