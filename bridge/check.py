#!/usr/bin/env python3
"""Two DDS sites joined only through a Zenoh router, both ways, across a bridge restart.

Three network namespaces: site A and site B, each joined by a veth pair to a middle one, R,
which does not forward IP: A and B cannot reach each other at all, only R's Zenoh router
(`tachyon-bridge --router`). In each site a `tachyon-bridge` (Zenoh client of the router)
bridges DDS domain 0; DDS stays on the site's loopback. A Tachyon publisher in A writes
topic `ab` (reliable, transient-local, keep-all), a subscriber in B reads it; and the other
way on `ba`. While samples flow, site B's bridge is killed (SIGKILL) and started again: every
sample must still arrive on both sides (duplicates allowed: the restarted bridge gets the
history the other side's bridge keeps, and its publisher's, again). With
`--restart-args=--no-subscriber-history` the restarted bridge's Zenoh subscriber asks for no
history: what it gets of the samples written while it was down comes from the bridge's own
recovery (`bridge/src/recover.rs`), which otherwise only steps in when the subscriber missed it.

Needs root (namespaces, veth). Run by scripts/test.sh:

    bridge/check.py --bridge bridge/target/debug/tachyon-bridge --peer target/debug/tachyon_peer
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

NS = {"a": "tbr-a", "r": "tbr-r", "b": "tbr-b"}
SAMPLES = 60
PERIOD_MS = 50


def sh(*argv, check=True):
    return subprocess.run(argv, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ns(name, *argv):
    return ["ip", "netns", "exec", NS[name], *argv]


def setup():
    teardown()
    for n in NS.values():
        sh("ip", "netns", "add", n)
        sh("ip", "-n", n, "link", "set", "lo", "up")
    for site, net in (("a", 1), ("b", 2)):
        here, there = f"tbr{site}0", f"tbr{site}1"
        sh("ip", "link", "add", here, "netns", NS[site], "type", "veth", "peer", "name", there,
           "netns", NS["r"])
        sh("ip", "-n", NS[site], "addr", "add", f"10.77.{net}.2/24", "dev", here)
        sh("ip", "-n", NS["r"], "addr", "add", f"10.77.{net}.1/24", "dev", there)
        sh("ip", "-n", NS[site], "link", "set", here, "up")
        sh("ip", "-n", NS["r"], "link", "set", there, "up")
        # DDS stays on the site's loopback, multicast included.
        sh("ip", "-n", NS[site], "link", "set", "lo", "multicast", "on")
        sh("ip", "-n", NS[site], "route", "add", "224.0.0.0/4", "dev", "lo")
    sh("ip", "netns", "exec", NS["r"], "sysctl", "-qw", "net.ipv4.ip_forward=0")


def teardown():
    for n in NS.values():
        sh("ip", "netns", "del", n, check=False)


class Proc:
    def __init__(self, name, argv, env, logdir):
        self.name = name
        self.lines = []
        self.log = open(os.path.join(logdir, name + ".log"), "a")
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                  env=env, start_new_session=True)
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.append(line.rstrip("\n"))
            self.log.write(line)
            self.log.flush()

    def kill(self, sig=signal.SIGTERM):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, sig)
            except ProcessLookupError:
                pass
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()

    def samples(self):
        seqs = []
        for line in self.lines:
            m = re.match(r"SAMPLE \S+ (\d+) ", line)
            if m:
                seqs.append(int(m.group(1)))
        return seqs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bridge", required=True, help="the tachyon-bridge binary")
    ap.add_argument("--peer", required=True, help="the tachyon_peer binary")
    ap.add_argument("--ab-pub", help="topic ab's publisher in site A (default --peer), e.g. "
                    "target/interop/cyclone_peer")
    ap.add_argument("--ab-sub", help="topic ab's subscriber in site B (default --peer), e.g. "
                    "target/interop/fastdds_peer")
    ap.add_argument("--restart-args", default="",
                    help="more options for site B's bridge once restarted, e.g. "
                    "--no-subscriber-history (the bridge's own recovery must bring the history)")
    ap.add_argument("--logs", default=None)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("skipped: network namespaces and veth pairs need root")
        return 0
    for what, path in (("--bridge", args.bridge), ("--peer", args.peer),
                       ("--ab-pub", args.ab_pub), ("--ab-sub", args.ab_sub)):
        if path and not os.access(path, os.X_OK):
            print(f"FAIL: {what} {path} is not an executable (build it first)")
            return 1
    logs = args.logs or tempfile.mkdtemp(prefix="tachyon-bridge-")
    os.makedirs(logs, exist_ok=True)
    config = os.path.join(logs, "site.toml")
    with open(config, "w") as f:
        # Shared memory is per host, not per namespace: the sites must not meet through it.
        f.write('[udp]\ninterface = "lo"\n[transports]\nshm = false\n')
    env = dict(os.environ, TACHYON_CONFIG=config, RUST_LOG=os.environ.get("RUST_LOG", "warn"))
    procs = []
    failed = []
    setup()
    try:
        start = lambda name, argv: procs.append(Proc(name, argv, env, logs)) or procs[-1]
        router = start("router", ns("r", args.bridge, "--router", "--listen", "tcp/0.0.0.0:7447"))
        time.sleep(0.5)

        def bridge(site, net, *more):
            return start(f"bridge-{site}", ns(site, args.bridge, "--mode", "client",
                                              "--connect", f"tcp/10.77.{net}.1:7447",
                                              "--scope", "tachyon", *more))
        bridge_a, bridge_b = bridge("a", 1), bridge("b", 2)
        subs = {
            "ab": start("sub-ab", ns("b", args.ab_sub or args.peer, "sub", "--topic", "ab",
                                     "--transient-local",
                                     "--expect", "1000000", "--timeout-s", "60")),
            "ba": start("sub-ba", ns("a", args.peer, "sub", "--topic", "ba", "--transient-local",
                                     "--expect", "1000000", "--timeout-s", "60")),
        }
        time.sleep(0.5)
        t0 = time.monotonic()
        pubs = {
            "ab": start("pub-ab", ns("a", args.ab_pub or args.peer, "pub", "--topic", "ab",
                                     "--transient-local",
                                     "--count", str(SAMPLES), "--period-ms", str(PERIOD_MS),
                                     "--wait-match", "1", "--linger-ms", "60000",
                                     "--timeout-s", "60")),
            "ba": start("pub-ba", ns("b", args.peer, "pub", "--topic", "ba", "--transient-local",
                                     "--count", str(SAMPLES), "--period-ms", str(PERIOD_MS),
                                     "--wait-match", "1", "--linger-ms", "60000",
                                     "--timeout-s", "60")),
        }
        first = {}
        # Kill site B's bridge once samples flow both ways, start it again 1 s later.
        restarted = False
        deadline = t0 + 45
        while time.monotonic() < deadline:
            for topic, sub in subs.items():
                if topic not in first and sub.samples():
                    first[topic] = time.monotonic() - t0
            if not restarted and len(subs["ab"].samples()) >= 10 and len(subs["ba"].samples()) >= 10:
                bridge_b.kill(signal.SIGKILL)
                killed_at = time.monotonic() - t0
                time.sleep(1.0)
                bridge_b = bridge("b", 2, *args.restart_args.split())
                restarted = True
                print(f"site B's bridge killed at {killed_at:.1f} s (SIGKILL), started again 1 s later")
            if restarted and all(set(s.samples()) >= set(range(SAMPLES)) for s in subs.values()):
                break
            time.sleep(0.1)
        for line in bridge_b.lines:
            if "earlier samples of" in line:
                print(f"site B's restarted bridge: {line}")
        for topic, sub in subs.items():
            got = sub.samples()
            distinct = set(got)
            missing = sorted(set(range(SAMPLES)) - distinct)
            direction = "A -> B" if topic == "ab" else "B -> A"
            when = f"first sample after {first[topic]:.2f} s" if topic in first else "no sample"
            line = (f"{direction} (topic {topic}): {len(distinct & set(range(SAMPLES)))} of "
                    f"{SAMPLES} samples, {len(got) - len(distinct)} duplicates, {when}")
            ok = restarted and not missing
            if missing:
                line += f"; MISSING {missing[:20]}"
            if not restarted:
                line += "; the bridge was never restarted (samples did not flow)"
            if not ok:
                failed.append(line)
            print(("pass: " if ok else "FAIL: ") + line, flush=True)
    finally:
        for p in reversed(procs):
            p.kill()
        teardown()
    if failed:
        print(f"logs: {logs}")
        return 1
    print("both directions lost nothing across the restart")
    return 0


if __name__ == "__main__":
    sys.exit(main())
