#!/usr/bin/env python3
"""Extracts SPDP/SEDP/participant-message serialized payloads from the interop captures.

Run from the repository root:  python3 crates/tachyon-proto/tests/data/discovery/extract.py
Writes one FILE.hex (lowercase hex of the serialized payload, encapsulation header included,
one line) per sample listed in SAMPLES into this directory. Standard library only; reuses the
pcap walker of interop/captures/rtps_summary.py.
"""
import collections, os, struct, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", ".."))
CAPTURES = os.path.join(ROOT, "interop", "captures")
sys.path.insert(0, CAPTURES)
from rtps_summary import read_pcap, udp_payload  # noqa: E402

# Builtin writers whose DATA carry the samples.
WRITERS = {
    "spdp": bytes.fromhex("000100c2"),
    "publication": bytes.fromhex("000003c2"),
    "subscription": bytes.fromhex("000004c2"),
    "participant-message": bytes.fromhex("000200c2"),
}

# (output file, capture, builtin writer, DATA flags, GUID the payload describes).
# The first matching DATA submessage is taken. Flags 0x05 = E|D (a sample), 0x0b = E|Q|K
# (Cyclone's key-only dispose/unregister). The GUID is looked up as PID_PARTICIPANT_GUID /
# PID_ENDPOINT_GUID in the payload (participant message: the GUID prefix at its start).
SAMPLES = [
    ("cyclone-spdp.hex", "cyclone-fastdds.pcap", "spdp", 0x05,
     "01107eb6677dbb6ba247f47c000001c1"),
    ("cyclone-publication-cpustats.hex", "cyclone-ddsperf.pcap", "publication", 0x05,
     "0110c73b48683144e1b5744300000802"),
    ("cyclone-publication-rdataks.hex", "cyclone-ddsperf.pcap", "publication", 0x05,
     "0110c73b48683144e1b5744300000b02"),
    ("cyclone-subscription-rpongks.hex", "cyclone-ddsperf.pcap", "subscription", 0x05,
     "0110c73b48683144e1b5744300000c07"),
    ("cyclone-publication-dispose-key.hex", "cyclone-ddsperf.pcap", "publication", 0x0b,
     "0110b99e9f66d6631168437c00000d02"),
    ("cyclone-spdp-dispose-key.hex", "cyclone-ddsperf.pcap", "spdp", 0x0b,
     "0110b99e9f66d6631168437c000001c1"),
    ("cyclone-participant-message.hex", "cyclone-ddsperf.pcap", "participant-message", 0x05,
     "0110c73b48683144e1b57443"),
    ("fastdds-spdp.hex", "fastdds.pcap", "spdp", 0x05,
     "010f7f014e3adc9e00000000000001c1"),
    ("fastdds-publication-keyed.hex", "fastdds.pcap", "publication", 0x05,
     "010f7f01553a08990000000000000102"),
    ("fastdds-subscription-keyed.hex", "fastdds.pcap", "subscription", 0x05,
     "010f7f014e3adc9e0000000000000107"),
]


def data_submessages(path):
    """Yields (writer entity id, flags, serialized payload) of every DATA in a capture."""
    stats = collections.Counter()
    for lt, frame, _incl, _orig in read_pcap(path):
        msg = udp_payload(lt, frame, stats)
        if msg is None or len(msg) < 20 or msg[:4] != b"RTPS":
            continue
        o = 20
        while o + 4 <= len(msg):
            kind, flags = msg[o], msg[o + 1]
            e = "<" if flags & 1 else ">"
            length = struct.unpack(e + "H", msg[o + 2:o + 4])[0]
            body_len = length if length else len(msg) - o - 4
            body = msg[o + 4:o + 4 + body_len]
            if kind == 0x15 and len(body) >= 20:
                q = 4 + struct.unpack(e + "H", body[2:4])[0]
                if flags & 0x02:  # skip the inline QoS
                    while q + 4 <= len(body):
                        pid, plen = struct.unpack(e + "HH", body[q:q + 4])
                        q += 4 + plen
                        if pid == 1:
                            break
                if flags & 0x0c:
                    yield body[8:12], flags, body[q:]
            o += 4 + body_len


def payload_guid(payload):
    """The GUID a PL_CDR payload describes (PID_ENDPOINT_GUID, else PID_PARTICIPANT_GUID)."""
    if payload[:2] not in (b"\x00\x02", b"\x00\x03"):
        return payload[4:16].hex()  # participant message: GUID prefix first
    e = "<" if payload[1] == 3 else ">"
    o, found = 4, {}
    while o + 4 <= len(payload):
        pid, plen = struct.unpack(e + "HH", payload[o:o + 4])
        if pid == 1:
            break
        found.setdefault(pid, payload[o + 4:o + 4 + plen].hex())
        o += 4 + plen
    return found.get(0x005a) or found.get(0x0050)


def main():
    for name, capture, writer, flags, guid in SAMPLES:
        for wid, f, payload in data_submessages(os.path.join(CAPTURES, capture)):
            if wid == WRITERS[writer] and f == flags and payload_guid(payload) == guid:
                with open(os.path.join(HERE, name), "w") as out:
                    out.write(payload.hex() + "\n")
                print("%-40s %4d bytes from %s" % (name, len(payload), capture))
                break
        else:
            raise SystemExit("%s: no %s DATA for %s in %s" % (name, writer, guid, capture))


if __name__ == "__main__":
    main()
