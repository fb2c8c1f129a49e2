#!/usr/bin/env python3
"""Runs the OMG DDS-RTPS interoperability suite (github.com/omg-dds/dds-rtps) for pairs of
`shape_main` applications and tabulates the results (docs/interop.md, "OMG DDS-RTPS
interoperability suite").

The suite itself is not part of this project: clone it and name the checkout with --suite (or
DDS_RTPS_DIR). Its own `interoperability_report.py` runs unchanged, once per pair, each pair in
a private network namespace of its own (pairs run in parallel with --jobs; they cannot see
each other). Its Python dependencies go into a virtual environment (target/shape-suite/venv).

    interop/shape/run-suite.py --suite ~/dds-rtps \\
        --exe tachyon=target/release/shape_main \\
        --exe cyclone=target/shape/cyclone_shape_main --exe fastdds=target/shape/fastdds_shape_main \\
        --pair tachyon:tachyon --pair tachyon:cyclone --pair cyclone:tachyon --jobs 3 \\
        [-t Test_Cft_0 ...] [-d Test_Domain_0 ...] [-x 1|2] [--label TEXT] [--out DIR] [--xdp]
    interop/shape/run-suite.py --compare DIR1/results.json DIR2/results.json [--out DIR]

A pair is PUBLISHER:SUBSCRIBER (the suite's -P and -S).

With --xdp, each pair runs across a veth pair between two namespaces of its own, every
publisher in one and every subscriber in the other, and Tachyon's applications carry their
user data over AF_XDP (`[xdp] traffic = "user"`; `fallback = true`, since only one process per
interface can hold the program, so a second Tachyon application on the same side runs on
kernel UDP; shared memory off, since both namespaces share /dev/shm). The others use kernel
sockets. Each Tachyon application appends what went through its socket to a file
(TACHYON_SHAPE_XDP_REPORT), summed up per pair in results.md. Writes, in --out (default
target/shape-suite/<time>): results.json, results.md (case x pair, counts, and every failure's
expected and produced codes), and per pair its JUnit XML and the suite's log.
"""

import argparse
import datetime
import html
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VENV = os.path.join(ROOT, "target", "shape-suite", "venv")
REQUIREMENTS = ["pexpect==4.8.0", "junitparser==3.1.0", "argcomplete==2.0.0"]
SHORT = {"tachyon": "T", "cyclone": "C", "fastdds": "F"}
NETNS = "ip link set lo up; ip link set lo multicast on; ip route add 224.0.0.0/4 dev lo"


def short(name):
    return SHORT.get(name, name)


def pair_label(pair):
    pub, sub = pair
    return f"{short(pub)}>{short(sub)}"


def ensure_venv():
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    probe = subprocess.run([python, "-c", "import pexpect, junitparser"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([python, "-m", "pip", "install", "-q", *REQUIREMENTS], check=True)
    return python


def run_pair(args, python, exes, pair, out, index=0):
    """Runs the suite for one pair inside a fresh network namespace (or two, with --xdp);
    returns its XML path."""
    pub, sub = pair
    label = f"{pub}-{sub}"
    bindir = os.path.join(out, "bin", label)
    os.makedirs(bindir, exist_ok=True)
    # The suite names implementations after what precedes `_shape` in the executable's name;
    # copies keep a run independent of rebuilds.
    paths = {}
    for name in {pub, sub}:
        dst = os.path.join(bindir, f"{name}_shape_main")
        shutil.copy2(exes[name], dst)
        paths[name] = dst
    xml = os.path.join(out, f"{label}.xml")
    if args.xdp:
        link = XdpLink(index)
        try:
            link.up()
            report = os.path.join(out, f"{label}.xdp.txt")
            if os.path.exists(report):
                os.remove(report)  # an earlier run into the same --out
            run_p = link.wrap(os.path.join(bindir, "publisher"), pub, paths[pub], 0, report)
            run_s = link.wrap(os.path.join(bindir, "subscriber"), sub, paths[sub], 1, report)
            cmd = [python, "interoperability_report.py", "-P", run_p, "-S", run_s, "-o", xml]
            cmd += suite_options(args)
            with open(os.path.join(out, f"{label}.log"), "w") as log:
                subprocess.run(cmd, cwd=args.suite, stdout=log, stderr=subprocess.STDOUT,
                               check=False)
        finally:
            link.down()
        return xml
    cmd = [python, "interoperability_report.py", "-P", paths[pub], "-S", paths[sub], "-o", xml]
    cmd += suite_options(args)
    script = f"{NETNS}; cd {shq(args.suite)} && exec {' '.join(shq(c) for c in cmd)}"
    with open(os.path.join(out, f"{label}.log"), "w") as log:
        subprocess.run(["unshare", "-n", "bash", "-c", script], stdout=log,
                       stderr=subprocess.STDOUT, check=False)
    return xml


def suite_options(args):
    opts = []
    if args.test:
        opts += ["-t", *args.test]
    if args.disable:
        opts += ["-d", *args.disable]
    if args.x:
        opts += ["-x", args.x]
    return opts


class XdpLink:
    """Two namespaces (publishers', subscribers') joined by a veth pair on 10.241.N.0/24, with
    a multicast route on each end for discovery. Named after N alone: one --xdp run at a
    time."""

    def __init__(self, n):
        self.ns = (f"tshape-{n}-p", f"tshape-{n}-s")
        self.dev = (f"tshape{n}p", f"tshape{n}s")
        self.addr = (f"10.241.{n}.1/24", f"10.241.{n}.2/24")

    def up(self):
        self.down()
        run = lambda *c: subprocess.run(c, check=True)
        for ns in self.ns:
            run("ip", "netns", "add", ns)
        run("ip", "link", "add", self.dev[0], "netns", self.ns[0], "type", "veth", "peer", "name",
            self.dev[1], "netns", self.ns[1])
        for ns, dev, addr in zip(self.ns, self.dev, self.addr):
            run("ip", "-n", ns, "addr", "add", addr, "dev", dev)
            run("ip", "-n", ns, "link", "set", "lo", "up")
            run("ip", "-n", ns, "link", "set", dev, "up")
            run("ip", "-n", ns, "route", "add", "224.0.0.0/4", "dev", dev)

    def down(self):
        for ns in self.ns:
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)

    def wrap(self, bindir, name, exe, side, report):
        """An executable (named as the suite expects) that runs `exe` in namespace `side`;
        Tachyon's with the AF_XDP configuration."""
        os.makedirs(bindir, exist_ok=True)
        path = os.path.join(bindir, f"{name}_shape_main")
        env = ""
        if name.startswith("tachyon"):
            config = os.path.join(bindir, "tachyon.toml")
            with open(config, "w") as f:
                f.write(f'[transports]\nshm = false\n[xdp]\ninterface = "{self.dev[side]}"\n'
                        'traffic = "user"\nfallback = true\n')
            env = f"env TACHYON_CONFIG={shq(config)} TACHYON_SHAPE_XDP_REPORT={shq(report)} "
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\nexec ip netns exec {self.ns[side]} {env}{shq(exe)} "$@"\n')
        os.chmod(path, 0o755)
        return path


def xdp_summary(out, labels_pairs):
    """Per pair: Tachyon applications that reported, and those whose AF_XDP socket carried
    datagrams (one way, for a best-effort publisher or subscriber)."""
    lines = []
    for label, pair in labels_pairs:
        path = os.path.join(out, f"{pair[0]}-{pair[1]}.xdp.txt")
        rows = open(path).read().split("\n") if os.path.exists(path) else []
        counts = [tuple(int(v) for v in m.groups()) for m in
                  (re.search(r"XDP sent (\d+) received (\d+) kernel (\d+)", r) for r in rows) if m]
        used = sum(1 for s, r, _ in counts if s > 0 or r > 0)
        lines.append(f"- {label}: {len(counts)} Tachyon applications reported; {used} carried "
                     f"datagrams through AF_XDP (the others ran on kernel UDP: a second "
                     f"application on the same side, or one that never matched), "
                     f"{sum(c[0] for c in counts)} datagrams sent and "
                     f"{sum(c[1] for c in counts)} received through it in all")
    return lines


def shq(s):
    return "'" + str(s).replace("'", "'\\''") + "'"


CODE_ROW = re.compile(r"<th>\s*([A-Za-z]+_\d+)\s*</th>\s*<th>\s*(\w+)\s*</th>\s*<th>\s*(\w+)\s*</th>")


def parse_xml(path):
    """{case: {"ok": bool, "codes": [(entity, expected, produced)]}} of one JUnit report."""
    cases = {}
    if not os.path.exists(path):
        return cases
    for tc in ET.parse(path).getroot().iter("testcase"):
        name = tc.get("name", "").replace("rtps_test_suite_1_", "")
        bad = [e for e in tc if e.tag in ("failure", "error")]
        codes = []
        for e in bad:
            text = html.unescape(e.get("message", "") + (e.text or ""))
            codes += CODE_ROW.findall(text)
        cases[name] = {"ok": not bad, "codes": [list(c) for c in codes if c[1] != c[2]]}
    return cases


def case_key(name):
    m = re.match(r"Test_(\w+?)_(\d+)$", name)
    return (m.group(1), int(m.group(2))) if m else (name, 0)


def write_report(results, out):
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    labels = list(results)
    cases = sorted({c for r in results.values() for c in r}, key=case_key)
    lines = ["| case | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    for c in cases:
        cells = []
        for l in labels:
            r = results[l].get(c)
            cells.append("–" if r is None else ("pass" if r["ok"] else "**FAIL**"))
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    passed = [sum(1 for r in results[l].values() if r["ok"]) for l in labels]
    totals = [len(results[l]) for l in labels]
    lines.append("| **passed** | " + " | ".join(f"**{p}/{t}**" for p, t in zip(passed, totals)) + " |")
    lines += ["", "Failures (entity: expected → produced):", ""]
    for l in labels:
        for c in sorted(results[l], key=case_key):
            r = results[l][c]
            if not r["ok"]:
                detail = "; ".join(f"{e}: {x} → {p}" for e, x, p in r["codes"]) or "see the log"
                lines.append(f"- {l} {c}: {detail}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default=os.environ.get("DDS_RTPS_DIR"), help="a dds-rtps checkout")
    ap.add_argument("--exe", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--pair", action="append", default=[], metavar="PUB:SUB")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("-t", "--test", nargs="+", help="only these cases")
    ap.add_argument("-d", "--disable", nargs="+", help="all cases but these")
    ap.add_argument("-x", choices=["1", "2"],
                    help="the suite's data representation where a case sets none (its default: 2)")
    ap.add_argument("--label", default="", help="appended to each pair's column (e.g. ' -x1')")
    ap.add_argument("--out")
    ap.add_argument("--compare", nargs="+", metavar="RESULTS_JSON", help="merge earlier results")
    ap.add_argument("--xdp", action="store_true",
                    help="publishers and subscribers in two namespaces joined by a veth, "
                         "Tachyon's user data over AF_XDP")
    args = ap.parse_args()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.abspath(args.out or os.path.join(ROOT, "target", "shape-suite", stamp))
    os.makedirs(out, exist_ok=True)

    if args.compare:
        merged = {}
        for path in args.compare:
            with open(path) as f:
                merged.update(json.load(f))
        print(write_report(merged, out))
        return 0

    if not args.suite or not os.path.exists(os.path.join(args.suite, "interoperability_report.py")):
        ap.error("--suite (or DDS_RTPS_DIR) must name a checkout of github.com/omg-dds/dds-rtps")
    if os.geteuid() != 0:
        ap.error("run as root: every pair runs in a network namespace of its own (unshare -n)")
    exes = {}
    for e in args.exe:
        name, _, path = e.partition("=")
        if not os.access(path, os.X_OK):
            ap.error(f"--exe {e}: not an executable")
        exes[name] = os.path.abspath(path)
    pairs = []
    for p in args.pair:
        pub, _, sub = p.partition(":")
        for n in (pub, sub):
            if n not in exes:
                ap.error(f"--pair {p}: no --exe {n}=PATH")
        pairs.append((pub, sub))
    if not pairs:
        ap.error("no --pair")
    python = ensure_venv()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        xmls = list(pool.map(lambda ip: run_pair(args, python, exes, ip[1], out, ip[0]),
                             enumerate(pairs)))
    results = {pair_label(p) + args.label: parse_xml(x) for p, x in zip(pairs, xmls)}
    print(write_report(results, out))
    if args.xdp:
        summary = ["", "AF_XDP (--xdp):", ""] + xdp_summary(
            out, [(pair_label(p) + args.label, p) for p in pairs])
        with open(os.path.join(out, "results.md"), "a") as f:
            f.write("\n".join(summary) + "\n")
        print("\n".join(summary))
    print(f"report: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
