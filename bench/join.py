#!/usr/bin/env python3
"""Discovery at scale with real processes (issue 18, part 2): P processes of E endpoints each,
started together in one network namespace, for Tachyon (`tachyon perf join`), Cyclone DDS
(`target/bench/cyclone_join`) and Fast DDS (`target/bench/fastdds_join`), alternating the
implementations run by run (A B C A B C ...).

Each process creates E/2 writers and E/2 readers on topics laid out as in the simulator's
scale scenario (every endpoint expects exactly one match, every process discovers all P·E
endpoints: crates/tachyon-cli/src/perf/join.rs) and prints the time at which all of its
endpoints were matched. For each run the harness reports:

  - full match: seconds from starting the first process until the last one was matched
    (starting P processes is part of it, the same for every implementation);
  - CPU per process (its threads' time on a CPU, /proc/PID/task/*/schedstat) and RSS per
    process (VmRSS) at the moment the last process was matched, mean over the processes;
  - UDP datagrams sent and received in the namespace during the run, per process
    (/proc/net/snmp: the namespace holds nothing else; a multicast datagram counts once sent
    and once per receiving socket), and those the kernel dropped because a socket's receive
    buffer was full (RcvbufErrors). Fast DDS sends what it can through its shared-memory
    transport (SEDP to processes of the host included), which these counters do not see.

Standard-library Python; run as root (it re-executes itself in a private network namespace,
loopback with multicast on). Builds nothing: `cargo build --release -p tachyon-cli` and
`bench/build-peers.sh` do (a program that is missing is skipped and said so).

    bench/join.py                                  # P = 10, 50, 100; E = 10; 3 repetitions
    bench/join.py --processes 50 --reps 5 --impls tachyon,cyclone
    bench/join.py --out report/join                # also writes runs.jsonl and summary.md
"""
import argparse
import json
import os
import selectors
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.netns import enter_private_namespace  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
IMPLS = {
    "tachyon": os.path.join(ROOT, "target", "release", "tachyon"),
    "cyclone": os.path.join(ROOT, "target", "bench", "cyclone_join"),
    "fastdds": os.path.join(ROOT, "target", "bench", "fastdds_join"),
}
LABELS = {"tachyon": "Tachyon", "cyclone": "Cyclone DDS 0.10", "fastdds": "Fast DDS 2.9"}


def argv_of(impl, path, i, p, e, domain, timeout):
    common = ["--index", str(i), "--processes", str(p), "--endpoints", str(e), "--domain", str(domain),
              "--duration", str(timeout + 30), "--match-timeout", str(timeout)]
    if impl == "tachyon":
        # Kernel UDP, as the others' discovery: no shared-memory segments to create.
        return [path, "perf", "join", "--transport", "udp"] + common
    return [path] + common


def udp_counters():
    """(InDatagrams, OutDatagrams, RcvbufErrors) of this network namespace."""
    with open("/proc/net/snmp", encoding="ascii") as f:
        rows = [line.split() for line in f if line.startswith("Udp:")]
    head, values = rows[0], rows[1]
    v = dict(zip(head[1:], (int(x) for x in values[1:])))
    return v["InDatagrams"], v["OutDatagrams"], v["RcvbufErrors"]


def cpu_and_rss(pid):
    """(CPU seconds, RSS KiB) of a running process, or None once it is gone. CPU is the sum
    of its threads' time on a CPU in nanoseconds (/proc/PID/task/*/schedstat): /proc/PID/stat
    counts in clock ticks (10 ms), too coarse for a process that joins in milliseconds."""
    try:
        cpu_ns = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as f:
                cpu_ns += int(f.read().split()[0])
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        return cpu_ns / 1e9, rss
    except (OSError, StopIteration, IndexError, ValueError):
        return None


def shm_files():
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def run_once(impl, path, p, e, domain, timeout, log_dir):
    """One run; returns its record (with an `error` when it failed)."""
    shm_before = shm_files()
    in0, out0, drop0 = udp_counters()
    sel = selectors.DefaultSelector()
    procs = []
    logs = []
    t0 = time.time()
    try:
        for i in range(p):
            log = open(os.path.join(log_dir, f"{impl}-p{p}-d{domain}-{i}.log"), "w", encoding="utf-8")
            logs.append(log)
            proc = subprocess.Popen(argv_of(impl, path, i, p, e, domain, timeout), stdout=subprocess.PIPE,
                                    stderr=log, text=True, bufsize=1)
            procs.append(proc)
            sel.register(proc.stdout, selectors.EVENT_READ, i)
        matched = {}
        deadline = time.monotonic() + timeout + 5
        open_streams = p
        while len(matched) < p and open_streams and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=0.5):
                line = key.fileobj.readline()
                if not line:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                try:
                    matched[key.data] = float(json.loads(line)["matched_at"])
                except (ValueError, KeyError, TypeError):
                    pass
        usage = [cpu_and_rss(proc.pid) for proc in procs]
        in1, out1, drop1 = udp_counters()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        stop_by = time.monotonic() + 10
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, stop_by - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in logs:
            log.close()
        sel.close()
        # Fast DDS's shared-memory files of this run (its participants delete most on exit).
        for name in shm_files() - shm_before:
            if name.startswith(("fastrtps_", "sem.fastrtps_", "fast_datasharing")):
                try:
                    os.unlink(os.path.join("/dev/shm", name))
                except OSError:
                    pass
    alive = [u for u in usage if u is not None]
    record = {"impl": impl, "processes": p, "endpoints": e, "domain": domain,
              "matched": len(matched), "error": None}
    if len(matched) < p:
        record["error"] = f"{p - len(matched)} of {p} processes not matched within {timeout} s"
        return record
    times = sorted(t - t0 for t in matched.values())
    record.update({
        "full_match_s": round(times[-1], 4),
        "median_match_s": round(statistics.median(times), 4),
        "cpu_s_per_process": round(sum(u[0] for u in alive) / max(len(alive), 1), 4),
        "rss_kib_per_process": round(sum(u[1] for u in alive) / max(len(alive), 1)),
        "udp_in_per_process": round((in1 - in0) / p, 1),
        "udp_out_per_process": round((out1 - out0) / p, 1),
        # Datagrams the kernel dropped because a socket's receive buffer was full.
        "udp_dropped_per_process": round((drop1 - drop0) / p, 1),
    })
    return record


def summarize(records, impls):
    """A markdown table per P: medians over the repetitions, and Tachyon's ratios."""
    out = []
    for p in sorted({r["processes"] for r in records}):
        rows = [r for r in records if r["processes"] == p]
        e = rows[0]["endpoints"]
        out.append(f"### {p} processes × {e} endpoints\n")
        out.append("| implementation | runs ok | full match (s) | median process matched (s) | "
                   "CPU per process (ms) | RSS per process (MiB) | UDP out / in per process | "
                   "UDP dropped per process |")
        out.append("|---|--:|--:|--:|--:|--:|--:|--:|")
        med = {}
        for impl in impls:
            ok = [r for r in rows if r["impl"] == impl and not r["error"]]
            n = len([r for r in rows if r["impl"] == impl])
            if not n:
                continue
            if not ok:
                out.append(f"| {LABELS[impl]} | 0 / {n} | — | — | — | — | — | — |")
                continue

            def m(key):
                return statistics.median(r[key] for r in ok)

            med[impl] = {k: m(k) for k in ("full_match_s", "cpu_s_per_process")}
            out.append(f"| {LABELS[impl]} | {len(ok)} / {n} | {m('full_match_s'):.3f} | "
                       f"{m('median_match_s'):.3f} | {1000 * m('cpu_s_per_process'):.0f} | "
                       f"{m('rss_kib_per_process') / 1024:.1f} | "
                       f"{m('udp_out_per_process'):.0f} / {m('udp_in_per_process'):.0f} | "
                       f"{m('udp_dropped_per_process'):.0f} |")
        if "tachyon" in med:
            for impl in impls:
                if impl != "tachyon" and impl in med:
                    t, o = med["tachyon"], med[impl]
                    out.append(f"\nTachyon / {LABELS[impl]}: full match "
                               f"{t['full_match_s'] / o['full_match_s']:.2f}×, CPU per process "
                               f"{t['cpu_s_per_process'] / max(o['cpu_s_per_process'], 1e-9):.2f}×")
        out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--processes", default="10,50,100", help="P values, comma-separated")
    ap.add_argument("--endpoints", type=int, default=10, help="endpoints per process (half writers)")
    ap.add_argument("--impls", default="tachyon,cyclone,fastdds")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a run may take to match")
    ap.add_argument("--tachyon", default=IMPLS["tachyon"], help="the tachyon binary")
    ap.add_argument("--out", help="directory for runs.jsonl, summary.md and the processes' logs")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/join.py: run as root (it creates a network namespace)")
    enter_private_namespace()
    IMPLS["tachyon"] = a.tachyon
    ps = [int(x) for x in a.processes.split(",")]
    impls = []
    for impl in a.impls.split(","):
        if impl not in IMPLS:
            sys.exit(f"bench/join.py: unknown implementation {impl} (tachyon, cyclone, fastdds)")
        if not os.access(IMPLS[impl], os.X_OK):
            print(f"skipping {impl}: {IMPLS[impl]} is not built "
                  "(cargo build --release -p tachyon-cli; bench/build-peers.sh)", flush=True)
            continue
        impls.append(impl)
    out = a.out or os.path.join("/tmp", f"tachyon-join-{os.getpid()}")
    log_dir = os.path.join(out, "logs")
    os.makedirs(log_dir, exist_ok=True)
    records = []
    domain = 1 + os.getpid() % 200
    for rep in range(a.reps):
        for p in ps:
            for impl in impls:
                domain = 1 + domain % 230
                r = run_once(impl, IMPLS[impl], p, a.endpoints, domain, a.timeout, log_dir)
                r["rep"] = rep + 1
                records.append(r)
                shown = r["error"] or (f"full match {r['full_match_s']:.3f} s, CPU "
                                       f"{1000 * r['cpu_s_per_process']:.0f} ms/process, RSS "
                                       f"{r['rss_kib_per_process'] / 1024:.1f} MiB/process, UDP out/in "
                                       f"{r['udp_out_per_process']:.0f}/{r['udp_in_per_process']:.0f} per process, "
                                       f"{r['udp_dropped_per_process']:.0f} dropped")
                print(f"rep {rep + 1} P={p} {impl}: {shown}", flush=True)
                time.sleep(1)  # the last run's sockets and threads gone
    summary = summarize(records, impls)
    print("\n" + summary)
    with open(os.path.join(out, "runs.jsonl"), "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(out, "summary.md"), "w", encoding="utf-8") as f:
        f.write(summary + "\n")
    print(f"records and logs in {out}")
    sys.exit(1 if any(r["error"] for r in records) else 0)


if __name__ == "__main__":
    main()
