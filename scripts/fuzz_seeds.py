#!/usr/bin/env python3
"""Extracts fuzz seeds from the committed captures (interop/captures/*.pcap):

- fuzz/corpus/rtps_message/: UDP payloads that start with "RTPS", one per distinct sequence of
  submessage kinds (so the seeds are varied, not 1000 heartbeats);
- fuzz/corpus/parameter_list/: serialized payloads of DATA submessages that hold a parameter
  list (encapsulation PL_CDR_BE/LE: SPDP and SEDP announcements).

Standard library only. Usage: scripts/fuzz_seeds.py [REPO_ROOT]
"""
import hashlib
import pathlib
import struct
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
caps = sorted((root / "interop/captures").glob("*.pcap"))
out_msg = root / "fuzz/corpus/rtps_message"
out_pl = root / "fuzz/corpus/parameter_list"
out_msg.mkdir(parents=True, exist_ok=True)
out_pl.mkdir(parents=True, exist_ok=True)


def udp_payloads(path):
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if linktype == 1:
            if len(pkt) < 14 or pkt[12:14] != b"\x08\x00":
                continue
            ip = pkt[14:]
        elif linktype == 113:
            ip = pkt[16:]
        else:
            continue
        if len(ip) < 20 or ip[9] != 17:
            continue
        ihl = (ip[0] & 0xF) * 4
        frag = struct.unpack(">H", ip[6:8])[0]
        if frag & 0x3FFF:
            continue
        udp = ip[ihl:]
        yield udp[8:]


def submessages(msg):
    off = 20
    while off + 4 <= len(msg):
        kind, flags = msg[off], msg[off + 1]
        e = "<" if flags & 1 else ">"
        length = struct.unpack(e + "H", msg[off + 2:off + 4])[0]
        body_end = len(msg) if length == 0 and kind not in (0x01, 0x09) else off + 4 + length
        yield kind, flags, msg[off + 4:body_end]
        off = body_end


def pl_payload(flags, body):
    """The serialized payload of a DATA submessage body, if it is a parameter list."""
    if len(body) < 20 or not flags & 0x04:
        return None
    e = "<" if flags & 1 else ">"
    to_qos = struct.unpack(e + "H", body[2:4])[0]
    pos = 4 + to_qos
    if flags & 0x02:
        while pos + 4 <= len(body):
            pid, plen = struct.unpack(e + "HH", body[pos:pos + 4])
            pos += 4 + plen
            if pid == 1:
                break
    payload = body[pos:]
    if len(payload) >= 4 and payload[:2] in (b"\x00\x02", b"\x00\x03"):
        return payload
    return None


seen_kinds, n_msg, n_pl = set(), 0, 0
seen_pl = set()
for cap in caps:
    for p in udp_payloads(cap):
        if not p.startswith(b"RTPS"):
            continue
        kinds = tuple(k for k, _, _ in submessages(p))
        key = (cap.name, kinds, len(p) // 4096)
        if key not in seen_kinds and n_msg < 200:
            seen_kinds.add(key)
            (out_msg / ("cap-" + hashlib.sha1(p).hexdigest()[:16])).write_bytes(p)
            n_msg += 1
        for kind, flags, body in submessages(p):
            if kind != 0x15:
                continue
            pl = pl_payload(flags, body)
            if pl is None:
                continue
            h = hashlib.sha1(pl).hexdigest()[:16]
            if h not in seen_pl and n_pl < 100:
                seen_pl.add(h)
                (out_pl / ("cap-" + h)).write_bytes(pl)
                n_pl += 1
print(f"{n_msg} RTPS message seeds, {n_pl} parameter-list seeds from {len(caps)} captures")
