"""Cyclone DDS's `ddsperf` prints one line per second and no summary; this turns its output into
a `tachyon-perf/1` record (bench/SCHEMA.md).

Ping side, every value HALF the round trip (ddsperf halves it; doubled back here):
    [4332] 2.000  vm:4331 size 32 mean 41.236us min 5.307us 50% 49.292us 90% 62.638us 99% 91.215us max 1723.949us cnt 12082
Sub side:
    [4359] 2.001  size 1024 total 772225 lost 0 delta 422215 lost 0 rate 422.03 kS/s 3457.23 Mb/s (77.19 kS/s 632.32 Mb/s)
Both:
    [4360] 1.000  rss:9.8MB vcsw:2757 ivcsw:804 ...

Over the kept lines: count = sum, mean = count-weighted, min/max exact; p50/p90/p99 are the
count-weighted median of the per-second values, hence approximate (listed in "approximate");
p99.9, p99.99, stddev, pdv and the histogram cannot be had and are null.
"""
import math
import re

NUM = r"([\d.]+)"
PING_LINE = re.compile(
    rf"^\[\d+\]\s+{NUM}\s+(\S+) size (\d+) mean {NUM}us min {NUM}us 50% {NUM}us 90% {NUM}us "
    rf"99% {NUM}us max {NUM}us cnt (\d+)")
SUB_LINE = re.compile(
    rf"^\[\d+\]\s+{NUM}\s+size (\d+) total (\d+) lost (\d+) delta (\d+) lost (\d+) rate {NUM} kS/s {NUM} Mb/s")
RSS_LINE = re.compile(rf"^\[\d+\]\s+{NUM}\s+rss:{NUM}([kMG]?)B")
UNIT_KIB = {"": 1 / 1024, "k": 1, "M": 1024, "G": 1024 * 1024}
APPROXIMATE = ["p50", "p90", "p99"]


def warmup_lines(warmup_s):
    """Per-second lines dropped at the start: the first one always (it holds discovery and a
    partial second), more when the warm-up is longer than a second."""
    return max(1, math.ceil(warmup_s))


def run_seconds(spec):
    """ddsperf's -D for the measuring side: warm-up lines + measured lines + one of slack."""
    return warmup_lines(spec.warmup) + math.ceil(spec.measured_seconds()) + 1


def _ns(us_half):
    """A ddsperf figure (µs, half the round trip) as a round trip in ns."""
    return int(round(float(us_half) * 2000))


def _weighted_median(pairs):
    """Median of values weighted by counts: [(value, count)]."""
    pairs = sorted(p for p in pairs if p[1] > 0)
    total = sum(c for _, c in pairs)
    acc = 0
    for value, count in pairs:
        acc += count
        if 2 * acc >= total:
            return value
    return None


def _split(rows, spec):
    """(kept lines, time at which the measured part starts): the warm-up lines dropped, at
    most the measured seconds' worth kept."""
    dropped = warmup_lines(spec.warmup)
    kept = rows[dropped:][: max(1, math.ceil(spec.measured_seconds()))]
    if not kept:
        return [], None
    return kept, rows[dropped - 1]["t"]


def parse_ping(text):
    rows = []
    for line in text.splitlines():
        m = PING_LINE.match(line)
        if m:
            t, _peer, size, mean, mn, p50, p90, p99, mx, cnt = m.groups()
            rows.append({"t": float(t), "size": int(size), "mean": _ns(mean), "min": _ns(mn),
                         "p50": _ns(p50), "p90": _ns(p90), "p99": _ns(p99), "max": _ns(mx),
                         "count": int(cnt)})
    return rows


def parse_sub(text):
    rows = []
    for line in text.splitlines():
        m = SUB_LINE.match(line)
        if m:
            t, size, _total, _lost, delta, lost, _ks, _mb = m.groups()
            if rows or int(delta) > 0:  # lines before the publisher started carry nothing
                rows.append({"t": float(t), "size": int(size), "samples": int(delta), "lost": int(lost)})
    return rows


def peak_rss_kib(text):
    peak = None
    for line in text.splitlines():
        m = RSS_LINE.match(line)
        if m:
            kib = int(float(m.group(2)) * UNIT_KIB[m.group(3)])
            peak = kib if peak is None else max(peak, kib)
    return peak


def latency_summary(rows):
    count = sum(r["count"] for r in rows)
    if count == 0:
        return None
    summary = {"count": count, "lost": None,
               "min": min(r["min"] for r in rows), "max": max(r["max"] for r in rows),
               "mean": int(round(sum(r["mean"] * r["count"] for r in rows) / count)),
               "p99_9": None, "p99_99": None, "stddev": None, "pdv": None}
    for key in APPROXIMATE:
        summary[key] = _weighted_median([(r[key], r["count"]) for r in rows])
    return summary


def latency_timeline(rows, t0):
    return [{"t": round(r["t"] - t0, 3), "count": r["count"], "p50": r["p50"], "max": r["max"],
             "samples_per_s": float(r["count"]), "mbit_per_s": 0.0} for r in rows]


def throughput_summary(rows, previous_t, payload_bytes):
    samples = sum(r["samples"] for r in rows)
    seconds = rows[-1]["t"] - previous_t if rows else 0.0
    if seconds <= 0:
        return None
    nbytes = samples * payload_bytes
    return {"samples": samples, "lost": sum(r["lost"] for r in rows), "bytes": nbytes,
            "seconds": round(seconds, 3), "samples_per_s": samples / seconds,
            "mbit_per_s": nbytes * 8 / seconds / 1e6}


def throughput_timeline(rows, previous_t, t0, payload_bytes):
    out = []
    for r in rows:
        dt = max(r["t"] - previous_t, 1e-9)
        out.append({"t": round(r["t"] - t0, 3), "count": r["samples"], "p50": None, "max": None,
                    "samples_per_s": r["samples"] / dt,
                    "mbit_per_s": r["samples"] * payload_bytes * 8 / dt / 1e6})
        previous_t = r["t"]
    return out


def record(role, spec, config, text):
    """The tachyon-perf/1 record of one ddsperf ping or sub process's output (None if it
    printed no measurement line)."""
    rec = {"schema": "tachyon-perf/1", "implementation": "cyclone", "version": "0.10.2 (ddsperf)",
           "role": role, "config": config, "latency": None, "histogram": None,
           "throughput": None, "timeline": [], "approximate": [],
           # CPU and peak RSS: filled in by the harness (wait4(), VmHWM). ddsperf's own "rss:"
           # is getrusage's ru_maxrss, which counts the interpreter it was exec'd from.
           "process": {"cpu_user_s": None, "cpu_sys_s": None, "cpu_percent": None, "peak_rss_kib": None},
           "ddsperf_reported_rss_kib": peak_rss_kib(text),
           "discovery_ns": None}
    if role == "ping":
        kept, t0 = _split(parse_ping(text), spec)
        if not kept:
            return None
        rec["latency"] = latency_summary(kept)
        rec["timeline"] = latency_timeline(kept, t0)
        rec["approximate"] = list(APPROXIMATE)
    else:
        kept, t0 = _split(parse_sub(text), spec)
        if not kept:
            return None
        payload = config["payload_bytes"]
        rec["throughput"] = throughput_summary(kept, t0, payload)
        rec["timeline"] = throughput_timeline(kept, t0, t0, payload)
    return rec
