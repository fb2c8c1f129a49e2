//! Replays real Cyclone DDS / Fast DDS traffic from `interop/captures/*.pcap`: every RTPS
//! message must parse, render, and re-emit byte for byte; so must every SPDP/SEDP parameter
//! list. Run with `--nocapture` to see the per-submessage-kind table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tachyon_wire::parameter::payload::Encapsulation;
use tachyon_wire::submessage::id;
use tachyon_wire::{
    DataView, Message, MessageView, ParameterListPayload, SubmessageBody, SubmessageView,
};

#[test]
fn every_captured_message_round_trips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/captures");
    let files = pcap_files(&dir);
    assert!(
        !files.is_empty(),
        "no *.pcap files in {} — the capture test needs real traffic (see interop/captures)",
        dir.display()
    );

    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut stats = Stats::default();
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = file
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into());
        let datagrams = udp_payloads(&bytes, &name, &mut stats);
        for (index, payload) in datagrams.iter().enumerate() {
            if !payload.starts_with(b"RTPS") {
                stats.non_rtps += 1;
                continue;
            }
            check_message(
                payload,
                &format!("{name} datagram #{index}"),
                &mut kinds,
                &mut stats,
            );
        }
    }

    println!(
        "\n{} pcap files, {} RTPS messages",
        files.len(),
        stats.messages
    );
    println!(
        "skipped: {} non-UDP frames, {} IP fragments, {} non-RTPS UDP payloads",
        stats.non_udp, stats.fragments, stats.non_rtps
    );
    println!("{:<24} {:>8}", "submessage", "count");
    for (kind, n) in &kinds {
        println!("{kind:<24} {n:>8}");
    }
    println!(
        "{:<24} {:>8}",
        "SPDP/SEDP param lists", stats.parameter_lists
    );
    assert!(
        stats.messages > 0,
        "no RTPS messages found in {}",
        dir.display()
    );
    assert!(
        stats.parameter_lists > 0,
        "no SPDP/SEDP parameter lists found"
    );
}

#[derive(Default)]
struct Stats {
    messages: usize,
    parameter_lists: usize,
    non_udp: usize,
    fragments: usize,
    non_rtps: usize,
}

fn check_message(
    payload: &[u8],
    what: &str,
    kinds: &mut BTreeMap<String, usize>,
    stats: &mut Stats,
) {
    stats.messages += 1;
    let view = MessageView::new_checked(payload).unwrap_or_else(|e| panic!("{what}: {e}"));
    for sub in view.submessages() {
        let sub = sub.unwrap_or_else(|e| panic!("{what}: {e}"));
        if let SubmessageView::Data(d) = sub {
            check_discovery_payload(&d, what, stats);
        }
    }
    let msg = Message::parse(payload).unwrap_or_else(|e| panic!("{what}: {e}"));
    let text = msg.to_string();
    assert!(!text.is_empty(), "{what}: empty Display");
    assert!(!view.to_string().is_empty(), "{what}: empty view Display");
    let out = msg
        .to_bytes()
        .unwrap_or_else(|e| panic!("{what}: emit: {e}"));
    assert!(out == payload, "{what}: re-emitted bytes differ\n{text}");
    for s in &msg.submessages {
        let name = match &s.body {
            SubmessageBody::Unknown(u) => format!("{}(0x{:02x})", id::name(u.id), u.id),
            b => id::name(b.id()).to_string(),
        };
        *kinds.entry(name).or_default() += 1;
    }
}

/// SPDP/SEDP DATA: the payload is a PL_CDR parameter list that must round-trip too.
fn check_discovery_payload(d: &DataView<'_>, what: &str, stats: &mut Stats) {
    if !d.writer_id().is_builtin_discovery_writer() {
        return;
    }
    let Some(p) = d.serialized_payload() else {
        return;
    };
    let is_pl = Encapsulation::parse(p).is_some_and(|e| e.parameter_list_endian().is_some());
    if !is_pl {
        return;
    }
    let list = ParameterListPayload::parse_bytes(p)
        .unwrap_or_else(|e| panic!("{what}: parameter list of {}: {e}", d.writer_id()));
    let mut out = vec![0u8; list.buffer_len()];
    list.emit(&mut out)
        .unwrap_or_else(|e| panic!("{what}: parameter list emit: {e}"));
    assert!(
        out == p,
        "{what}: parameter list re-emits differently\n{list}"
    );
    assert!(!list.to_string().is_empty());
    stats.parameter_lists += 1;
}

fn pcap_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Extracts UDP payloads from a classic pcap file (EN10MB, LINUX_SLL, LINUX_SLL2, NULL, RAW).
fn udp_payloads(file: &[u8], name: &str, stats: &mut Stats) -> Vec<Vec<u8>> {
    let magic = file
        .get(..4)
        .unwrap_or_else(|| panic!("{name}: not a pcap file"));
    let le = match magic {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => true,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => false,
        _ => panic!("{name}: not a classic pcap file (pcapng is not supported)"),
    };
    let u32_at = |b: &[u8], off: usize| -> u32 {
        let a: [u8; 4] = b[off..off + 4].try_into().unwrap();
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let linktype = u32_at(file, 20);
    let mut out = Vec::new();
    let mut off = 24;
    while off + 16 <= file.len() {
        let incl = u32_at(file, off + 8) as usize;
        let frame = &file[off + 16..(off + 16 + incl).min(file.len())];
        off += 16 + incl;
        let ip = match linktype {
            1 => ethernet(frame),
            113 => frame
                .get(14..16)
                .map(|t| (u16::from_be_bytes([t[0], t[1]]), &frame[16..])),
            276 => frame
                .get(..2)
                .map(|t| (u16::from_be_bytes([t[0], t[1]]), &frame[20..])),
            0 => frame.get(..4).map(|f| {
                let family = if le { f[0] } else { f[3] };
                let ethertype = if family == 2 { 0x0800 } else { 0x86dd };
                (ethertype, &frame[4..])
            }),
            101 => frame
                .first()
                .map(|v| (if v >> 4 == 4 { 0x0800 } else { 0x86dd }, frame)),
            other => panic!("{name}: unsupported pcap link type {other}"),
        };
        match ip.map(|(t, ip)| udp(t, ip)) {
            Some(Udp::Payload(p)) => out.push(p.to_vec()),
            Some(Udp::Fragment) => {
                stats.fragments += 1;
                eprintln!("{name}: skipping an IP fragment");
            }
            _ => stats.non_udp += 1,
        }
    }
    out
}

fn ethernet(frame: &[u8]) -> Option<(u16, &[u8])> {
    let mut t = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    let mut rest = frame.get(14..)?;
    while t == 0x8100 || t == 0x88a8 {
        t = u16::from_be_bytes([*rest.get(2)?, *rest.get(3)?]);
        rest = rest.get(4..)?;
    }
    Some((t, rest))
}

enum Udp<'a> {
    Payload(&'a [u8]),
    Fragment,
    Other,
}

fn udp(ethertype: u16, ip: &[u8]) -> Udp<'_> {
    let (proto, l4) = match ethertype {
        0x0800 if ip.len() >= 20 => {
            let ihl = usize::from(ip[0] & 0x0f) * 4;
            let total = usize::from(u16::from_be_bytes([ip[2], ip[3]])).min(ip.len());
            let frag = u16::from_be_bytes([ip[6], ip[7]]);
            if frag & 0x3fff != 0 {
                return Udp::Fragment;
            }
            (ip[9], ip.get(ihl..total).unwrap_or_default())
        }
        0x86dd if ip.len() >= 40 => {
            let plen = usize::from(u16::from_be_bytes([ip[4], ip[5]]));
            (ip[6], ip.get(40..40 + plen).unwrap_or_default())
        }
        _ => return Udp::Other,
    };
    if proto != 17 || l4.len() < 8 {
        return Udp::Other;
    }
    let len = usize::from(u16::from_be_bytes([l4[4], l4[5]])).min(l4.len());
    Udp::Payload(l4.get(8..len).unwrap_or_default())
}
