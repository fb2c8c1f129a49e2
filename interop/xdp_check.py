#!/usr/bin/env python3
"""Tachyon on AF_XDP across a real veth, against itself and against Cyclone DDS on kernel UDP.

    interop/xdp_check.py [--tachyon target/debug/tachyon] [--seconds 3]

Three network namespaces of its own: `tachyon-xdp-a` and `tachyon-xdp-b`, each joined by a veth
pair to a Linux bridge in `tachyon-xdp-m` (one subnet, a multicast route on each end for
discovery); removed at the end. The bridge can drop UDP datagrams at random (an nftables rule
of the bridge family): an AF_XDP socket transmits past its own interface's qdisc and netfilter,
and its XDP program receives before them, so loss is applied in the middle, which both
directions cross.
Cases (each bounded in time):

  tachyon-xdp    tachyon perf ping (XDP) -> tachyon perf pong (XDP)
  critical       the same with --critical: only the critical lane's port on XDP
  cyclone-pong   tachyon perf ping (XDP) -> ddsperf pong (kernel sockets)
  cyclone-ping   ddsperf ping (kernel sockets) -> tachyon perf pong (XDP)
  lossy-4mib     tachyon perf ping/pong (XDP both) of 4 MiB samples, 10 % loss each way on the
                 bridge: every round trip completes (reliability repairs the fragments)
  multicast-out  tachyon perf pub (XDP, [xdp] multicast = true, best-effort) in A with three
                 readers in different participants, so it writes to their group: tachyon perf
                 sub on kernel UDP in A (gets the copy looped back by the kernel: best-effort,
                 nothing else reaches it), tachyon perf sub (XDP, multicast) in B (the group
                 through its ring) and ddsperf sub in B (kernel)
  multicast-in   ddsperf pub (best-effort) in B to two readers that share the group: tachyon
                 perf sub (XDP, multicast) in A, which must get it through its ring, and
                 tachyon perf sub on kernel UDP in B

A Tachyon side passes only if datagrams went both ways through its AF_XDP socket (`perf`
checks it and exits non-zero otherwise) and no round trip was lost; ddsperf must exit 0 (it
checks that what it expects matched). Needs root; exits 2 (and says why) when it cannot run.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

NS = ("tachyon-xdp-a", "tachyon-xdp-b")
MID = "tachyon-xdp-m"
DEV = ("txdpa", "txdpb")
# The bridge's ports, facing a and b.
PORT = ("txdpma", "txdpmb")
ADDR = ("10.232.0.1", "10.232.0.2")


def sh(*cmd):
    subprocess.run(cmd, check=True)


def setup():
    teardown()
    for ns in NS + (MID,):
        sh("ip", "netns", "add", ns)
    sh("ip", "-n", MID, "link", "add", "br0", "type", "bridge")
    for ns, dev, port, addr in zip(NS, DEV, PORT, ADDR):
        sh("ip", "link", "add", dev, "netns", ns, "type", "veth", "peer", "name", port, "netns", MID)
        sh("ip", "-n", MID, "link", "set", port, "master", "br0")
        sh("ip", "-n", MID, "link", "set", port, "up")
        sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ns, "link", "set", dev, "up")
        sh("ip", "-n", ns, "route", "add", "224.0.0.0/4", "dev", dev)
    sh("ip", "-n", MID, "link", "set", "br0", "up")


def loss(percent):
    """`percent` of the UDP datagrams crossing the bridge dropped at random, each way (0: none).
    An nftables rule of the bridge family (the kernels here have no sch_netem)."""
    subprocess.run(["ip", "netns", "exec", MID, "nft", "delete", "table", "bridge", "lossy"],
                   stderr=subprocess.DEVNULL)
    if percent:
        rules = ("table bridge lossy {\n chain forward {\n"
                 "  type filter hook forward priority 0; policy accept;\n"
                 f"  meta l4proto udp numgen random mod 1000 < {round(percent * 10)} counter drop\n }}\n}}\n")
        subprocess.run(["ip", "netns", "exec", MID, "nft", "-f", "-"], input=rules, text=True, check=True)


def dropped():
    """Datagrams the bridge's loss rule dropped."""
    out = subprocess.run(["ip", "netns", "exec", MID, "nft", "list", "table", "bridge", "lossy"],
                         capture_output=True, text=True).stdout.split()
    return next((int(n) for w, n in zip(out, out[1:]) if w == "packets" and n.isdigit()), 0)


def teardown():
    for ns in NS + (MID,):
        subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


def in_ns(i, *cmd):
    return ["ip", "netns", "exec", NS[i], *cmd]


def run_pair(server, client, limit, tmp, name):
    """Starts `server` (in namespace B), then runs `client` (in A); both logs returned."""
    slog = open(f"{tmp}/{name}-server.txt", "w")
    clog = open(f"{tmp}/{name}-client.txt", "w")
    s = subprocess.Popen(in_ns(1, *server), stdout=slog, stderr=subprocess.STDOUT, text=True)
    try:
        crc = subprocess.run(in_ns(0, *client), stdout=clog, stderr=subprocess.STDOUT,
                             timeout=limit).returncode
    except subprocess.TimeoutExpired:
        crc = "timeout"
    try:
        src = s.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        s.kill()
        s.wait()
        src = "timeout"
    slog.close()
    clog.close()
    return (src, open(slog.name).read()), (crc, open(clog.name).read())


def tachyon(binary, mode, dev, seconds, *extra):
    return [binary, "perf", mode, "--domain", "7", "--transport", "xdp", "--xdp-interface", dev,
            "--duration", str(seconds), "--warmup", "0", *extra]


def lost(text):
    m = re.search(r"count (\d+)\s+lost (\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else (0, -1)


def xdp_line(text):
    m = re.search(r"AF_XDP sent (\d+) received (\d+) .*?via kernel (\d+)", text)
    return tuple(int(x) for x in m.groups()) if m else None


def xdp_counts(text):
    """(sent, received, multicast sent, multicast received) of a Tachyon side's report."""
    m = re.search(r"AF_XDP sent (\d+) received (\d+) \(multicast sent (\d+) received (\d+)\)", text)
    return tuple(int(x) for x in m.groups()) if m else None


def samples(text):
    """Samples a `tachyon perf sub` counted, and how many it found lost."""
    m = re.search(r"throughput\s+(\d+) samples\s+(\d+) lost", text)
    return (int(m.group(1)), int(m.group(2))) if m else (0, -1)


def run_group(readers, writer, limit, tmp, name):
    """Starts `readers` ((namespace index, command) each), then runs `writer` (the same);
    every exit code and log, the writer's first."""
    procs = []
    for i, (ns, cmd) in enumerate([writer] + readers):
        log = open(f"{tmp}/{name}-{i}.txt", "w")
        procs.append((log, cmd, ns))
    started = []
    for log, cmd, ns in procs[1:]:
        started.append(subprocess.Popen(in_ns(ns, *cmd), stdout=log, stderr=subprocess.STDOUT))
    log, cmd, ns = procs[0]
    try:
        codes = [subprocess.run(in_ns(ns, *cmd), stdout=log, stderr=subprocess.STDOUT,
                                timeout=limit).returncode]
    except subprocess.TimeoutExpired:
        codes = ["timeout"]
    for p in started:
        try:
            codes.append(p.wait(timeout=limit))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            codes.append("timeout")
    out = []
    for (log, _, _), code in zip(procs, codes):
        log.close()
        out.append((code, open(log.name).read()))
    return out


def multicast_cases(binary, t, tmp, have_cyclone):
    """The two multicast cases (docstring); the number that failed."""
    config = os.path.join(tmp, "multicast.toml")
    with open(config, "w") as f:
        f.write("[xdp]\nmulticast = true\n")
    be = ["--reliability", "best-effort"]

    def perf(mode, transport, seconds, *extra):
        cmd = [binary, "perf", mode, "--domain", "7", "--transport", transport,
               "--duration", str(seconds), "--warmup", "0", *be, *extra]
        return ["env", f"TACHYON_CONFIG={config}", *cmd] if transport == "xdp" else cmd

    failures = 0
    cases = [("multicast-out",
              (0, perf("pub", "xdp", t + 1, "--xdp-interface", DEV[0], "--subscribers",
                       "3" if have_cyclone else "2", "--rate", "2000")),
              [(0, perf("sub", "udp", t)), (1, perf("sub", "xdp", t, "--xdp-interface", DEV[1]))]
              + ([(1, ["ddsperf", "-i", "7", "-u", "-D", str(t + 4), "sub"])]
                 if have_cyclone else []))]
    if have_cyclone:
        cases.append(("multicast-in",
                      (1, ["ddsperf", "-i", "7", "-u", "-D", str(t + 3), "pub", "2000Hz"]),
                      [(0, perf("sub", "xdp", t, "--xdp-interface", DEV[0])),
                       (1, perf("sub", "udp", t))]))
    for name, writer, readers in cases:
        loss(0)
        runs = run_group(readers, writer, t + 40, tmp, name)
        problems = [f"{' '.join(cmd[:4])}: exit {code}: {text[-300:]}"
                    for (code, text), (_, cmd) in zip(runs, [writer] + readers) if code != 0]
        details = []
        for (code, text), (ns, cmd) in zip(runs, [writer] + readers):
            if cmd[0] == "ddsperf":
                continue
            role = f"{'AB'[ns]} {'pub' if 'pub' in cmd else 'sub'} {'xdp' if 'xdp' in cmd else 'udp'}"
            x = xdp_counts(text)
            if "sub" in cmd:
                n, lo = samples(text)
                if n < 1000:
                    problems.append(f"{role} counted only {n} samples")
                details.append(f"{role} {n} samples")
            if "xdp" in cmd:
                # The writer's group datagrams go out through its ring; the XDP reader's come in
                # through its ring.
                k = 2 if "pub" in cmd else 3
                if x is None or x[k] < 100:
                    problems.append(f"{role}: too few group datagrams through AF_XDP: {x}")
                details.append(f"{role} ring {'sent' if k == 2 else 'received'} "
                               f"{x[k] if x else '?'} to the group")
        if problems:
            failures += 1
            print(f"FAIL {name}: " + "; ".join(problems))
        else:
            print(f"ok   {name}: " + ", ".join(details))
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tachyon", default="target/debug/tachyon")
    ap.add_argument("--seconds", type=int, default=3)
    o = ap.parse_args()
    if os.geteuid() != 0:
        print("xdp_check: SKIPPED (not passed): needs root (namespaces, veth, XDP)")
        return 2
    if not os.access(o.tachyon, os.X_OK):
        print(f"xdp_check: {o.tachyon} is not built")
        return 1
    have_cyclone = shutil.which("ddsperf") is not None
    t = o.seconds
    failures = 0
    setup()
    try:
        with tempfile.TemporaryDirectory(prefix="tachyon-xdp-") as tmp:
            cases = [
                ("tachyon-xdp", tachyon(o.tachyon, "pong", DEV[1], t + 4),
                 tachyon(o.tachyon, "ping", DEV[0], t)),
                ("critical", tachyon(o.tachyon, "pong", DEV[1], t + 4, "--critical"),
                 tachyon(o.tachyon, "ping", DEV[0], t, "--critical")),
            ]
            big = ["--size", str(4 << 20), "--history", "keep-last", "--depth", "1"]
            # A debug build repairing 4 MiB through 10 % loss can take over a second per round
            # trip on a loaded machine: the ping waits up to 20 s before it calls one lost.
            cases.append(("lossy-4mib", tachyon(o.tachyon, "pong", DEV[1], t + 20, *big),
                          tachyon(o.tachyon, "ping", DEV[0], t + 5, *big, "--lost-after", "20")))
            if have_cyclone:
                cases += [
                    ("cyclone-pong", ["ddsperf", "-i", "7", "-D", str(t + 4), "pong"],
                     tachyon(o.tachyon, "ping", DEV[0], t)),
                    ("cyclone-ping", tachyon(o.tachyon, "pong", DEV[1], t + 2),
                     ["ddsperf", "-i", "7", "-D", str(t), "ping", "size", "32"]),
                ]
            else:
                print("xdp_check: ddsperf (cyclonedds-tools) missing: the Cyclone DDS cases are "
                      "skipped")
            for name, server, client in cases:
                lossy = name.startswith("lossy")
                loss(10 if lossy else 0)
                (src, stext), (crc, ctext) = run_pair(server, client, t + 40, tmp, name)
                problems = []
                if src != 0:
                    problems.append(f"server exit {src}: {stext[-400:]}")
                if crc != 0:
                    problems.append(f"client exit {crc}: {ctext[-400:]}")
                tachyon_text = ctext if client[0] == o.tachyon else stext
                x = xdp_line(tachyon_text)
                if x is None or x[0] == 0 or x[1] == 0:
                    problems.append(f"nothing both ways through AF_XDP: {x}")
                detail = f"AF_XDP sent/received/via kernel {x}"
                if client[0] == o.tachyon:
                    n, lo = lost(ctext)
                    if n < (3 if name.startswith("lossy") else 100) or lo != 0:
                        problems.append(f"{n} round trips, {lo} lost")
                    m = re.search(r"p50\s+([\d.]+)\s+p90", ctext)
                    detail += f", {n} round trips, p50 {m.group(1) if m else '?'} us"
                else:
                    n = sum(int(m) for m in
                            re.findall(r" size \d+ mean [\d.]+us .* cnt (\d+)", ctext))
                    if n < 100:
                        problems.append(f"ddsperf counted only {n} round trips")
                    detail += f", ddsperf counted {n} round trips"
                if lossy:
                    n = dropped()
                    if n == 0:
                        problems.append("the bridge dropped nothing: no loss was applied")
                    detail += f", {n} datagrams dropped on the bridge"
                if problems:
                    failures += 1
                    print(f"FAIL {name}: " + "; ".join(problems))
                else:
                    print(f"ok   {name}: {detail}")
            failures += multicast_cases(o.tachyon, t, tmp, have_cyclone)
    finally:
        teardown()
    print(f"xdp_check: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
