#!/usr/bin/env python3
"""`tachyon perf` against Cyclone DDS's `ddsperf`, in all four directions, on the wire.

    interop/ddsperf.py [--tachyon target/debug/tachyon] [--seconds 3]

Cases (each a pair of processes, bounded in time; exit status 1 if any fails):
  ping  tachyon perf ping  -> ddsperf pong      round trips measured, none lost
  pong  ddsperf ping       -> tachyon perf pong  ddsperf counts round trips
  pub   tachyon perf pub   -> ddsperf sub       ddsperf receives, loses nothing
  sub   ddsperf pub        -> tachyon perf sub   tachyon receives, loses nothing
  fan   tachyon perf ping --subscribers 2 -> ddsperf pong + tachyon perf pong
In every case `ddsperf` must also exit 0: it checks that every endpoint it expects of a peer
matched (it prints "failed to match" otherwise).

Runs inside a private network namespace (re-executes itself under `unshare -n` unless
TACHYON_TEST_NETNS=1 says it already is in one), so no multicast leaves the machine.
"""
import argparse
import json
import os
import shutil
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def in_namespace():
    if os.environ.get("TACHYON_TEST_NETNS") == "1":
        return
    setup = "ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo"
    flags = "-n" if os.geteuid() == 0 else "-rn"
    args = " ".join(sys.argv[1:])
    cmd = f"{setup} && TACHYON_TEST_NETNS=1 exec python3 {os.path.abspath(sys.argv[0])} {args}"
    os.execvp("unshare", ["unshare", flags, "--", "bash", "-c", cmd])


class Case:
    def __init__(self, name, domain):
        self.name = name
        self.domain = domain
        self.problems = []

    def check(self, ok, what):
        if not ok:
            self.problems.append(what)


def start(cmd, log):
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True)


def finish(proc, limit):
    try:
        return proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return "timeout"


def ddsperf(domain, seconds, *mode):
    return ["ddsperf", "-i", str(domain), "-D", str(seconds), *mode]


def tachyon(binary, domain, *args):
    return [binary, "perf", *args, "--domain", str(domain), "--quiet"]


def read(path):
    with open(path) as f:
        return f.read()


def ddsperf_rtt_count(text):
    return sum(int(m) for m in re.findall(r" size \d+ mean [\d.]+us .* cnt (\d+)", text))


def ddsperf_sub_totals(text):
    """(total received, total lost) from ddsperf sub's last line."""
    rows = re.findall(r" size \d+ total (\d+) lost (\d+) ", text)
    return (int(rows[-1][0]), int(rows[-1][1])) if rows else (0, 0)


def case_ping(o, c, tmp):
    """tachyon ping -> ddsperf pong."""
    pong_log = open(f"{tmp}/{c.name}-ddsperf.txt", "w")
    pong = start(ddsperf(c.domain, o.seconds + 6, "pong"), pong_log)
    out = f"{tmp}/{c.name}.json"
    rc = finish(start(tachyon(o.tachyon, c.domain, "ping", "--size", "32", "--duration",
                              str(o.seconds), "--json", out), open(f"{tmp}/{c.name}-tachyon.txt", "w")),
                o.seconds + 20)
    c.check(rc == 0, f"tachyon perf ping exit status {rc}")
    if rc == 0:
        lat = json.load(open(out))["latency"]
        c.check(lat["count"] > 100, f"only {lat['count']} round trips")
        c.check(lat["lost"] == 0, f"{lat['lost']} pings lost")
        c.detail = f"{lat['count']} round trips, p50 {lat['p50'] / 1e3:.1f} us"
    prc = finish(pong, o.seconds + 20)
    c.check(prc == 0, f"ddsperf pong exit status {prc}: {read(pong_log.name)[-300:]}")


def case_pong(o, c, tmp):
    """ddsperf ping -> tachyon pong."""
    pong = start(tachyon(o.tachyon, c.domain, "pong", "--duration", str(o.seconds + 4)),
                 open(f"{tmp}/{c.name}-tachyon.txt", "w"))
    log = open(f"{tmp}/{c.name}-ddsperf.txt", "w")
    rc = finish(start(ddsperf(c.domain, o.seconds, "ping", "size", "32"), log), o.seconds + 20)
    text = read(log.name)
    n = ddsperf_rtt_count(text)
    c.check(rc == 0, f"ddsperf ping exit status {rc}: {text[-300:]}")
    c.check(n > 100, f"ddsperf counted only {n} round trips")
    c.detail = f"ddsperf counted {n} round trips"
    c.check(finish(pong, o.seconds + 20) == 0, "tachyon perf pong failed")


def case_pub(o, c, tmp):
    """tachyon pub -> ddsperf sub."""
    log = open(f"{tmp}/{c.name}-ddsperf.txt", "w")
    sub = start(ddsperf(c.domain, o.seconds + 3, "sub"), log)
    rc = finish(start(tachyon(o.tachyon, c.domain, "pub", "--size", "1024", "--warmup", "0",
                              "--duration", str(o.seconds)), open(f"{tmp}/{c.name}-tachyon.txt", "w")),
                o.seconds + 20)
    c.check(rc == 0, f"tachyon perf pub exit status {rc}")
    src = finish(sub, o.seconds + 20)
    text = read(log.name)
    total, lost = ddsperf_sub_totals(text)
    c.check(src == 0, f"ddsperf sub exit status {src}: {text[-300:]}")
    c.check(total > 1000, f"ddsperf received only {total} samples")
    c.check(lost == 0, f"ddsperf lost {lost} samples")
    c.detail = f"ddsperf received {total} samples, lost {lost}"


def case_sub(o, c, tmp):
    """ddsperf pub -> tachyon sub."""
    out = f"{tmp}/{c.name}.json"
    sub = start(tachyon(o.tachyon, c.domain, "sub", "--size", "1024", "--warmup", "0.5",
                        "--duration", str(o.seconds), "--json", out),
                open(f"{tmp}/{c.name}-tachyon.txt", "w"))
    log = open(f"{tmp}/{c.name}-ddsperf.txt", "w")
    rc = finish(start(ddsperf(c.domain, o.seconds + 3, "pub", "size", "1k"), log), o.seconds + 20)
    c.check(rc == 0, f"ddsperf pub exit status {rc}: {read(log.name)[-300:]}")
    src = finish(sub, o.seconds + 20)
    c.check(src == 0, f"tachyon perf sub exit status {src}")
    if src == 0:
        t = json.load(open(out))["throughput"]
        c.check(t["samples"] > 1000, f"only {t['samples']} samples")
        c.check(t["lost"] == 0, f"{t['lost']} samples lost")
        c.check(t["bytes"] == t["samples"] * 1024, "payload is not ddsperf's 1024 octets")
        c.detail = f"{t['samples']} samples, {t['samples_per_s']:.0f}/s, lost {t['lost']}"


def case_fan(o, c, tmp):
    """tachyon ping answered by a ddsperf pong and a tachyon pong at once."""
    dlog = open(f"{tmp}/{c.name}-ddsperf.txt", "w")
    dpong = start(ddsperf(c.domain, o.seconds + 6, "pong"), dlog)
    tpong = start(tachyon(o.tachyon, c.domain, "pong", "--duration", str(o.seconds + 6)),
                  open(f"{tmp}/{c.name}-pong.txt", "w"))
    out = f"{tmp}/{c.name}.json"
    rc = finish(start(tachyon(o.tachyon, c.domain, "ping", "--subscribers", "2", "--duration",
                              str(o.seconds), "--json", out), open(f"{tmp}/{c.name}-ping.txt", "w")),
                o.seconds + 20)
    c.check(rc == 0, f"tachyon perf ping exit status {rc}")
    if rc == 0:
        lat = json.load(open(out))["latency"]
        c.check(lat["count"] > 100, f"only {lat['count']} round trips")
        c.check(lat["lost"] == 0, f"{lat['lost']} pongs lost")
        c.detail = f"{lat['count']} pongs from 2 peers"
    c.check(finish(dpong, o.seconds + 20) == 0, f"ddsperf pong failed: {read(dlog.name)[-300:]}")
    c.check(finish(tpong, o.seconds + 20) == 0, "tachyon perf pong failed")


CASES = [("ping", case_ping), ("pong", case_pong), ("pub", case_pub), ("sub", case_sub),
         ("fan", case_fan)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tachyon", default=os.path.join(ROOT, "target/debug/tachyon"))
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--logs", help="keep the logs in this folder")
    o = ap.parse_args()
    o.tachyon = os.path.abspath(o.tachyon)
    in_namespace()
    tmp = o.logs or tempfile.mkdtemp(prefix="tachyon-ddsperf-")
    os.makedirs(tmp, exist_ok=True)
    failed = 0
    for i, (name, run) in enumerate(CASES):
        c = Case(name, 40 + i)
        c.detail = ""
        run(o, c, tmp)
        status = "pass" if not c.problems else "FAIL"
        failed += bool(c.problems)
        print(f"{status}  {name:5} {run.__doc__.strip():55} {c.detail}")
        for p in c.problems:
            print(f"      {p}")
    if failed or o.logs:
        print(f"{len(CASES) - failed} of {len(CASES)} passed; logs in {tmp}")
    else:
        # All passed: the logs of a temporary folder are not kept (--logs keeps them).
        shutil.rmtree(tmp, ignore_errors=True)
        print(f"{len(CASES) - failed} of {len(CASES)} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
