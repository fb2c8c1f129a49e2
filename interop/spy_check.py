#!/usr/bin/env python3
"""`tachyon spy` against real peers: Cyclone DDS 0.10 and 11, Fast DDS 2.9 and Tachyon
processes (the interop matrix's peers) run on one domain; `spy ls --json` must list each of
them with its vendor, release, host and process, `spy topics --json` each topic with its
endpoints and the one pair that does not match (a BEST_EFFORT writer and a RELIABLE reader)
with the reason, and `spy typeof` the topic's type as IDL, fetched with TypeLookup from
Cyclone DDS 0.10 and 11 and Tachyon (and from Fast DDS 2.9, which announces no type, a clear
error). `spy echo` prints a Cyclone DDS 11 writer's samples of an appendable keyed type and
its dispose (sent without key hash: the instance comes from the key-only payload) and a
Cyclone DDS 0.10 writer's, and with `--idl interop/peers/interop.idl` a Fast DDS 2.9 writer's
(Fast DDS 2.9 describes no type; without the IDL file echo says so); `spy hz` measures the 0.10 writer's rate; `spy watch` runs in a
real terminal (tmux) and its table lists the topics with their rates.

    interop/spy_check.py --tachyon target/debug/tachyon --peer tachyon=PATH --peer cyclone=PATH
                         --peer cyclone11=PATH [--peer fastdds=PATH]

Run it where DDS traffic cannot leave the machine (scripts/test.sh runs it in a network
namespace): it refuses to run unless TACHYON_TEST_NETNS=1.
"""

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time

DOMAIN = 77


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tachyon", required=True, help="the tachyon command")
    ap.add_argument("--peer", action="append", default=[], help="NAME=PATH of a peer program")
    a = ap.parse_args()
    if os.environ.get("TACHYON_TEST_NETNS") != "1":
        sys.exit("spy_check.py: run it inside an isolated network namespace (scripts/test.sh does)")
    peers = dict(p.split("=", 1) for p in a.peer)
    common = ["--domain", str(DOMAIN), "--topic", "spy", "--timeout-s", "60"]
    # A BEST_EFFORT Cyclone 0.10 writer; a RELIABLE Cyclone 11 reader (does not match it); a
    # BEST_EFFORT Tachyon reader (matches); a Fast DDS writer on another topic.
    runs = [
        ("cyclone", ["pub", *common, "--best-effort", "--count", "100000", "--period-ms", "50",
                     "--wait-match", "0"]),
        ("cyclone11", ["sub", *common, "--expect", "100000000"]),
        ("tachyon", ["sub", *common, "--best-effort", "--expect", "100000000"]),
    ]
    if "fastdds" in peers:
        runs.append(("fastdds", ["sub", *common[:2], "--topic", "spy_other", "--timeout-s", "60",
                                 "--expect", "100000000"]))
        runs.append(("fastdds-pub", ["pub", *common[:2], "--topic", "spy_fast", "--timeout-s",
                                     "60", "--count", "100000", "--period-ms", "50",
                                     "--wait-match", "0", "--prefix", "F"]))
    procs = {}
    failures = []
    try:
        for name, args in runs:
            procs[name] = subprocess.Popen([peers[name.split("-")[0]], *args], stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL)
        time.sleep(1.0)

        def spy(what):
            out = subprocess.run([a.tachyon, "spy", *what.split(), "--json", "--domain", str(DOMAIN),
                                  "--wait", "3"], capture_output=True, text=True, timeout=30)
            if out.returncode != 0:
                sys.exit(f"tachyon spy {what} failed ({out.returncode}): {out.stderr}")
            return json.loads(out.stdout)

        ls = spy("ls")["participants"]
        topics = {t["name"]: t for t in spy("topics")["topics"]}
        # The type as IDL, fetched with TypeLookup from each vendor that serves it.
        typeof = spy("typeof spy")

        if "fastdds" in peers:
            # Fast DDS 2.9 announces no TypeInformation: a clear error, not an IDL.
            other = subprocess.run([a.tachyon, "spy", "typeof", "spy_other", "--domain",
                                    str(DOMAIN), "--wait", "2"], capture_output=True, text=True,
                                   timeout=30)
        else:
            other = None
        echo10 = spy_lines(a.tachyon, "echo spy -n 3 --json")
        hz = spy_lines(a.tachyon, "hz spy -n 2 --json")
        watch = watch_in_tmux(a.tachyon)
        # A Cyclone DDS 11 writer that waits for the echo's reader, writes 5 samples of
        # AppendableShape (XCDR2) 100 ms apart and disposes the first instance.
        procs["cyclone11-pub"] = subprocess.Popen(
            [peers["cyclone11"], "pub", "--domain", str(DOMAIN), "--topic", "spy11", "--type",
             "ashape", "--count", "5", "--instances", "2", "--prefix", "K", "--dispose",
             "--period-ms", "100", "--wait-match", "1", "--linger-ms", "1000",
             "--timeout-s", "30"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        echo11 = spy_lines(a.tachyon, "echo spy11 --json --duration 6")
        if "fastdds" in peers:
            idl = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "interop.idl")
            echo_fast = spy_lines(a.tachyon, f"echo spy_fast -n 3 --json --idl {idl}")
            no_idl = subprocess.run([a.tachyon, "spy", "echo", "spy_fast", "-n", "1", "--domain",
                                     str(DOMAIN), "--wait", "2"], capture_output=True, text=True,
                                    timeout=60)
        else:
            echo_fast = no_idl = None
    finally:
        for p in procs.values():
            p.kill()
        for p in procs.values():
            p.wait()

    def expect(cond, what):
        print(f"{'pass' if cond else 'FAIL'}  {what}")
        if not cond:
            failures.append(what)

    host = socket.gethostname()
    by_pid = {p["pid"]: p for p in ls}
    procs.pop("cyclone11-pub", None)
    procs.pop("fastdds-pub", None)
    want = {
        "cyclone": ("Cyclone DDS", "0.10.2"),
        "cyclone11": ("Cyclone DDS", "11.0.1"),
        "tachyon": ("Tachyon DDS", None),
        "fastdds": ("Fast DDS", None),
    }
    for name, proc in procs.items():
        vendor, version = want[name]
        p = by_pid.get(proc.pid)
        expect(p is not None, f"ls: the {name} peer (pid {proc.pid}) is listed")
        if p is None:
            continue
        expect(p["vendor"] == vendor and (version is None or p["version"] == version),
               f"ls: {name} is {vendor} {version or ''}(got {p['vendor']} {p['version']})")
        expect(p["host"] == host, f"ls: {name} runs on {host} (got {p['host']})")
    t = topics.get("spy")
    expect(t is not None, "topics: 'spy' is listed")
    if t:
        expect(len(t["writers"]) == 1 and len(t["readers"]) == 2,
               f"topics: 'spy' has 1 writer and 2 readers (got {len(t['writers'])}, {len(t['readers'])})")
        bad = t["not_matched"]
        expect(len(bad) == 1 and bad[0]["incompatible_policies"] == ["RELIABILITY"],
               f"topics: one pair does not match, for RELIABILITY (got {bad})")
        if bad:
            reader = next((r for r in t["readers"] if r["guid"] == bad[0]["reader"]), {})
            expect(reader.get("vendor") == "Cyclone DDS 11.0.1",
                   f"topics: the unmatched reader is Cyclone DDS 11's (got {reader.get('vendor')})")
    if "fastdds" in procs:
        expect("spy_other" in topics, "topics: 'spy_other' (Fast DDS's reader) is listed")
    types = typeof["types"]
    vendors = sorted({e["vendor"].split(" ")[0] + " " + e["vendor"].split(" ")[-1]
                      for ty in types for e in ty["endpoints"]})
    # Cyclone DDS 0.10 marks key members @must_understand (11 and Tachyon do not): another
    # type identifier, so a block of its own.
    key = re.compile(r"@key (@must_understand )?string<128> color;")
    expect(len(types) >= 1 and all(ty["idl"] and "struct ShapeType {" in ty["idl"]
                                   and key.search(ty["idl"]) for ty in types),
           f"typeof: ShapeType's IDL from every endpoint of 'spy' ({vendors}; got {types})")
    expect(sum(len(ty["endpoints"]) for ty in types) == 3,
           f"typeof: the 3 endpoints of 'spy' are listed (got {types})")
    if other is not None:
        expect(other.returncode != 0 and "announces no TypeInformation" in other.stderr,
               f"typeof: Fast DDS 2.9's type cannot be obtained, and spy says why "
               f"(exit {other.returncode}: {other.stderr.strip()[-200:]})")
    # echo: the Cyclone DDS 0.10 writer's samples (x counts up, y = 2x + 1).
    expect(len(echo10) == 3 and all(e["data"]["y"] == 2 * e["data"]["x"] + 1
                                    and e["instance_state"] == "ALIVE" for e in echo10),
           f"echo: 3 samples of Cyclone DDS 0.10's 'spy' (got {echo10})")
    # echo: Cyclone DDS 11's five samples in order, then its dispose of instance K0.
    data11 = [e["data"] for e in echo11 if e["data"] is not None]
    expect([(d["color"], d["x"], d["y"]) for d in data11]
           == [(f"K{i % 2}", i, 2 * i + 1) for i in range(5)],
           f"echo: Cyclone DDS 11's 5 samples of 'spy11' (got {data11})")
    # The dispose of K0 (sent without key hash: its instance derived from the key-only
    # payload): a record of its own, or the state of K0's last sample if it came unread.
    k0 = {e["instance"] for e in echo11 if e["data"] and e["data"]["color"] == "K0"}
    disposed = [e for e in echo11 if e["instance_state"] == "NOT_ALIVE_DISPOSED"]
    expect(len(k0) == 1 and disposed and all(e["instance"] in k0 for e in disposed)
           and all(e["key"] == {"color": "K0"} for e in disposed if e["data"] is None),
           f"echo: Cyclone DDS 11's dispose of K0 (got {echo11})")
    if echo_fast is not None:
        expect(len(echo_fast) == 3 and all(e["data"]["y"] == 2 * e["data"]["x"] + 1
                                           and e["data"]["color"] == "F0" for e in echo_fast),
               f"echo --idl: 3 samples of Fast DDS 2.9's 'spy_fast' (got {echo_fast})")
        expect(no_idl.returncode != 0 and "--idl FILE" in no_idl.stderr,
               f"echo: without the IDL, Fast DDS 2.9's type cannot be had and spy says to give "
               f"it (exit {no_idl.returncode}: {no_idl.stderr.strip()[-300:]})")
    # hz: the 0.10 writer writes every 50 ms.
    rates = [h["rate_hz"] for h in hz if h.get("rate_hz")]
    expect(len(rates) == 2 and all(5 < r < 40 for r in rates),
           f"hz: two reports of about 20 Hz for 'spy' (got {hz})")
    rows = [l.split() for l in watch.splitlines()]
    spy_row = next((r for r in rows if r and r[0] == "spy"), None)
    expect(any(r[:2] == ["TOPIC", "TYPE"] for r in rows) and spy_row is not None
           and spy_row[1] == "ShapeType" and spy_row[5] == "Hz" and float(spy_row[4]) > 5,
           f"watch: the table in the terminal lists 'spy' with its rate (got {watch!r})")
    print(f"spy: {len(failures)} failed")
    sys.exit(1 if failures else 0)


def spy_lines(tachyon, what):
    """Runs `tachyon spy WHAT` and returns its JSON lines."""
    out = subprocess.run([tachyon, "spy", *what.split(), "--domain", str(DOMAIN), "--wait", "2"],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        sys.exit(f"tachyon spy {what} failed ({out.returncode}): {out.stderr}")
    return [json.loads(l) for l in out.stdout.splitlines() if l.strip()]


def watch_in_tmux(tachyon):
    """Starts `tachyon spy watch` in a detached tmux terminal (a server of its own, so it runs
    in this network namespace), waits for a few redraws and returns the screen."""
    sock = f"tachyon-spy-check-{os.getpid()}"
    cmd = f"{tachyon} spy watch --domain {DOMAIN} --wait 1 --interval 1"
    subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-s", "watch", "-x", "160", "-y",
                    "40", cmd], check=True, timeout=20)
    try:
        time.sleep(4.5)
        shot = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p", "-t", "watch"],
                              capture_output=True, text=True, timeout=20)
        return shot.stdout
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], timeout=20)


if __name__ == "__main__":
    main()
