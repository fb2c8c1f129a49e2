#!/usr/bin/env python3
"""Summarise RTPS traffic in classic pcap files (EN10MB or Linux SLL / raw).

Walks every UDP datagram, checks for IPv4 fragmentation, parses the RTPS
header and submessages and counts submessage kinds. With -p also counts the
parameter IDs inside SPDP/SEDP DATA payloads (PL_CDR_LE/BE) and inline QoS.
With --require KIND,... exits 1 if a listed submessage kind is absent from a
file (or if a file holds IPv4 fragments or truncated frames).
Standard library only.
"""
import struct, sys, collections

KINDS = {
    0x01: "PAD", 0x06: "ACKNACK", 0x07: "HEARTBEAT", 0x08: "GAP", 0x09: "INFO_TS",
    0x0c: "INFO_SRC", 0x0d: "INFO_REPLY_IP4", 0x0e: "INFO_DST", 0x0f: "INFO_REPLY",
    0x12: "NACK_FRAG", 0x13: "HEARTBEAT_FRAG", 0x15: "DATA", 0x16: "DATA_FRAG",
    0x17: "HEADER_EXTENSION", 0x30: "SEC_BODY", 0x31: "SEC_PREFIX", 0x32: "SEC_POSTFIX",
    0x33: "SRTPS_PREFIX", 0x34: "SRTPS_POSTFIX",
}

def kind_name(k):
    if k in KINDS:
        return KINDS[k]
    return ("VENDOR_0x%02x" if k >= 0x80 else "UNKNOWN_0x%02x") % k

def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = data[:4]
    if magic == b"\xd4\xc3\xb2\xa1" or magic == b"\x4d\x3c\xb2\xa1":
        e = "<"
    elif magic == b"\xa1\xb2\xc3\xd4" or magic == b"\xa1\xb2\x3c\x4d":
        e = ">"
    else:
        raise SystemExit("%s: not a classic pcap file (magic %s)" % (path, magic.hex()))
    linktype = struct.unpack(e + "I", data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        ts, tsu, incl, orig = struct.unpack(e + "IIII", data[off:off + 16])
        off += 16
        yield linktype, data[off:off + incl], incl, orig
        off += incl

def udp_payload(linktype, frame, stats):
    if linktype == 1:  # EN10MB
        et = struct.unpack(">H", frame[12:14])[0]
        ip = frame[14:]
    elif linktype == 113:  # Linux SLL
        et = struct.unpack(">H", frame[14:16])[0]
        ip = frame[16:]
    elif linktype in (101, 228):
        et, ip = 0x0800, frame
    else:
        raise SystemExit("unsupported link type %d" % linktype)
    if et != 0x0800:
        stats["non-IPv4 frames"] += 1
        return None
    ihl = (ip[0] & 0xf) * 4
    flags_frag = struct.unpack(">H", ip[6:8])[0]
    if flags_frag & 0x2000 or flags_frag & 0x1fff:
        stats["IPv4 fragments"] += 1
        return None
    if ip[9] != 17:
        stats["non-UDP packets"] += 1
        return None
    udp = ip[ihl:]
    ulen = struct.unpack(">H", udp[4:6])[0]
    return udp[8:ulen]

def parse_pl(buf, le, pids):
    e = "<" if le else ">"
    o = 0
    while o + 4 <= len(buf):
        pid, plen = struct.unpack(e + "HH", buf[o:o + 4])
        if pid == 1:  # PID_SENTINEL
            return
        pids[pid] += 1
        o += 4 + plen

def walk(msg, counts, stats, pids):
    if len(msg) < 20 or msg[:4] != b"RTPS":
        stats["non-RTPS datagrams"] += 1
        return
    stats["RTPS messages"] += 1
    vendors = stats.setdefault("vendors", collections.Counter())
    vendors["%d.%d" % (msg[6], msg[7])] += 1
    o = 20
    while o + 4 <= len(msg):
        kind, flags = msg[o], msg[o + 1]
        le = flags & 1
        length = struct.unpack(("<" if le else ">") + "H", msg[o + 2:o + 4])[0]
        counts[kind_name(kind)] += 1
        body = msg[o + 4:]
        if length == 0 and kind not in (0x01, 0x0c):
            body_len = len(msg) - o - 4  # last submessage extends to the end
        else:
            body_len = length
        body = body[:body_len]
        if kind == 0x06 and len(body) >= 20:  # ACKNACK: count those that request data
            e = "<" if le else ">"
            nbits = struct.unpack(e + "I", body[16:20])[0]
            words = body[20:20 + 4 * ((nbits + 31) // 32)]
            if any(words):
                stats["ACKNACKs with NACK bits"] += 1
        if kind == 0x15 and pids is not None:
            e = "<" if le else ">"
            otiq = struct.unpack(e + "H", body[2:4])[0]
            q = 4 + otiq
            if flags & 0x02:  # inline QoS
                il = collections.Counter()
                parse_pl(body[q:], le, il)
                pids.setdefault("inline", collections.Counter()).update(il)
                # skip inline qos
                qq = q
                while qq + 4 <= len(body):
                    pid, plen = struct.unpack(e + "HH", body[qq:qq + 4])
                    qq += 4 + plen
                    if pid == 1:
                        break
                q = qq
            if flags & 0x04 and q + 4 <= len(body):  # data, encapsulation header
                enc = struct.unpack(">H", body[q:q + 2])[0]
                if enc in (2, 3):  # PL_CDR_BE / PL_CDR_LE
                    parse_pl(body[q + 4:], enc == 3, pids.setdefault("payload", collections.Counter()))
        o += 4 + body_len

def main():
    args = sys.argv[1:]
    want_pids = "-p" in args
    args = [a for a in args if a != "-p"]
    require = []
    if "--require" in args:
        i = args.index("--require")
        require = [k for k in args[i + 1].split(",") if k]
        del args[i:i + 2]
    if not args:
        raise SystemExit("usage: rtps_summary.py [-p] [--require KIND,KIND...] FILE.pcap...")
    missing = []
    for path in args:
        counts = collections.Counter()
        stats = collections.Counter()
        pids = {} if want_pids else None
        n = 0
        maxlen = 0
        for lt, frame, incl, orig in read_pcap(path):
            n += 1
            if incl != orig:
                stats["truncated frames"] += 1
            p = udp_payload(lt, frame, stats)
            if p is None:
                continue
            maxlen = max(maxlen, len(p))
            walk(p, counts, stats, pids)
        vendors = stats.pop("vendors", {})
        print("%s: %d packets, largest UDP payload %d B" % (path, n, maxlen))
        for k, v in sorted(stats.items()):
            print("  %-22s %d" % (k, v))
        print("  vendors: " + ", ".join("%s x%d" % kv for kv in sorted(vendors.items())))
        for k, v in sorted(counts.items()):
            print("  %-22s %d" % (k, v))
        missing += ["%s: %s" % (path, k) for k in require if counts[k] == 0]
        if stats["IPv4 fragments"] or stats["truncated frames"]:
            missing.append("%s: IPv4 fragments or truncated frames" % path)
        if want_pids:
            for where, c in sorted(pids.items()):
                print("  PIDs in %s: " % where + ", ".join(
                    "0x%04x x%d" % kv for kv in sorted(c.items())))

    if missing:
        print("MISSING: " + "; ".join(missing))
        sys.exit(1)

if __name__ == "__main__":
    main()
