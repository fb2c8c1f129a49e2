#!/usr/bin/env python3
"""Round-trip latency of Tachyon and Cyclone DDS side by side, in the same run.

Tachyon: `examples/pingpong.rs` (RELIABLE KEEP_LAST(1) both ways, 32-byte samples by default).
Cyclone DDS: `ddsperf ping size N` / `ddsperf pong` (Debian's cyclonedds-tools, same QoS).
Two ways to receive, each measured for both: a listener answering on the receiving thread
(ddsperf's default; Tachyon's `--listener`), and a WaitSet in an application thread that takes
the sample and writes the answer (`waitset` for ddsperf, Tachyon's default).
The two alternate, A B A B, three repetitions each, for two CPU placements (ping and pong on
one vCPU, and on two), inside a private network namespace whose only interface is loopback with
multicast on. Medians of the repetitions are printed with the ratio Tachyon / Cyclone: below 1
means Tachyon is faster.

    bench/pingpong.py [--size 32] [--reps 3] [--seconds 4] [--mode listener|waitset|both]

ddsperf prints one line per second, each covering that second's round trips; its figures here
are the medians over those lines (the max is the largest). Tachyon runs the same duration's
worth of round trips in one go. Discovery time is Tachyon's, measured by the ping process.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def in_namespace():
    if os.environ.get("TACHYON_BENCH_NETNS") == "1":
        return
    setup = "ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo"
    flags = "-n" if os.geteuid() == 0 else "-rn"
    cmd = f"{setup} && TACHYON_BENCH_NETNS=1 exec python3 {sys.argv[0]} " + " ".join(sys.argv[1:])
    os.execvp("unshare", ["unshare", flags, "--", "bash", "-c", cmd])


def taskset(cpu):
    return ["taskset", "-c", str(cpu)]


def run_tachyon(binary, size, seconds, cpus, domain, mode):
    extra = ["--listener"] if mode == "listener" else []
    pong = subprocess.Popen(
        taskset(cpus[1]) + [binary, "pong", "--domain", str(domain)] + extra,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # About `seconds` worth of round trips at ~25 us each, at least 10,000.
        count = max(10_000, int(seconds * 40_000))
        out = subprocess.run(
            taskset(cpus[0])
            + [binary, "ping", "--size", str(size), "--count", str(count), "--warmup", "2000",
               "--domain", str(domain)] + extra,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    finally:
        pong.kill()
        pong.wait()
    m = re.search(r"discovery ([\d.]+) ms", out)
    r = re.search(
        r"min ([\d.]+) mean ([\d.]+) p50 ([\d.]+) p90 ([\d.]+) p99 ([\d.]+) p99.9 ([\d.]+) max ([\d.]+)", out
    )
    if not r:
        raise SystemExit(f"tachyon pingpong printed no result:\n{out}")
    v = list(map(float, r.groups()))
    return {"min": v[0], "mean": v[1], "p50": v[2], "p90": v[3], "p99": v[4], "max": v[6],
            "discovery_ms": float(m.group(1)) if m else None}


def run_ddsperf(size, seconds, cpus, domain, mode):
    extra = ["waitset"] if mode == "waitset" else []
    env = dict(os.environ)
    env["CYCLONEDDS_URI"] = f"<CycloneDDS><Domain id=\"any\"><Id>{domain}</Id></Domain></CycloneDDS>"
    pong = subprocess.Popen(
        taskset(cpus[1]) + ["ddsperf", "-D", str(seconds + 3), "pong"] + extra,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        out = subprocess.run(
            taskset(cpus[0]) + ["ddsperf", "-D", str(seconds + 1), "ping", "size", str(size)] + extra,
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        ).stdout
    finally:
        pong.kill()
        pong.wait()
    rows = []
    for line in out.splitlines():
        r = re.search(
            r"size \d+ mean ([\d.]+)us min ([\d.]+)us 50% ([\d.]+)us 90% ([\d.]+)us 99% ([\d.]+)us max ([\d.]+)us cnt (\d+)",
            line,
        )
        if r:
            rows.append(list(map(float, r.groups())))
    rows = rows[1:] or rows  # the first second includes discovery and warm-up
    if not rows:
        raise SystemExit(f"ddsperf printed no latency lines:\n{out}")
    med = lambda i: statistics.median(r[i] for r in rows)
    return {"min": min(r[1] for r in rows), "mean": med(0), "p50": med(2), "p90": med(3),
            "p99": med(4), "max": max(r[5] for r in rows), "discovery_ms": None}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--mode", choices=["listener", "waitset", "both"], default="both")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/examples/pingpong"))
    a = ap.parse_args()
    in_namespace()
    if not os.access(a.binary, os.X_OK):
        sys.exit(f"{a.binary} missing: cargo build --release -p tachyon --example pingpong")
    domain = 0
    modes = ["listener", "waitset"] if a.mode == "both" else [a.mode]
    for mode in modes:
      for name, cpus in (("same vCPU", (0, 0)), ("two vCPUs", (0, 1))):
        res = {"tachyon": [], "cyclone": []}
        for rep in range(a.reps):
            domain += 1
            res["tachyon"].append(run_tachyon(a.binary, a.size, a.seconds, cpus, domain, mode))
            domain += 1
            res["cyclone"].append(run_ddsperf(a.size, a.seconds, cpus, domain, mode))
        print(f"\nround trip, {a.size} B, RELIABLE KEEP_LAST(1), {mode}, ping and pong on {name} "
              f"(median of {a.reps} alternating runs, microseconds)")
        print(f"{'':10} {'min':>8} {'mean':>8} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>9}")
        med = {k: {f: statistics.median(r[f] for r in v) for f in ("min", "mean", "p50", "p90", "p99", "max")}
               for k, v in res.items()}
        for k in ("tachyon", "cyclone"):
            m = med[k]
            print(f"{k:10} {m['min']:8.1f} {m['mean']:8.1f} {m['p50']:8.1f} {m['p90']:8.1f} {m['p99']:8.1f} {m['max']:9.1f}")
        ratio = {f: med["tachyon"][f] / med["cyclone"][f] for f in med["tachyon"]}
        print(f"{'ratio T/C':10} " + " ".join(f"{ratio[f]:8.2f}" for f in ("min", "mean", "p50", "p90", "p99"))
              + f" {ratio['max']:9.2f}")
        disc = [r["discovery_ms"] for r in res["tachyon"] if r["discovery_ms"] is not None]
        if disc:
            print(f"tachyon discovery (participant created -> writer and reader matched both ways): "
                  f"median {statistics.median(disc):.1f} ms over {len(disc)} runs")


if __name__ == "__main__":
    main()
