#!/usr/bin/env python3
"""Tachyon DDS benchmark harness: one command runs a matrix of scenarios for several
implementations, alternating them (A B C A B C ...), and writes a report folder.

Implementations (each skipped, with the reason, when it is not there):
  tachyon   target/release/tachyon perf MODE ...      (cargo build --release -p tachyon-cli)
  cyclone   Cyclone DDS 0.10.2: latency by target/bench/cyclone_ping ping|pong (bench/build-peers.sh:
            every round trip kept, exact percentiles); throughput by /usr/bin/ddsperf, whose
            per-second lines are converted (as latency's when cyclone_ping is not built)
  fastdds   target/bench/fastdds_perf MODE ...         (bench/build-peers.sh; `intra`: ping and pong
            in one process, scenario 8)
  udp       target/release/tachyon floor MODE ...      raw UDP, the floor (--udp-wake)
  hdds      target/bench/hdds_latency_benchmark       HDDS 1.1.2's own latency_benchmark example
            (bench/build-peers.sh builds it from crates.io): scenario 8 only
  iceoryx2  target/bench/iceoryx2_ping ping|pong       a busy-waiting ping-pong over iceoryx2 0.10
            (bench/build-peers.sh builds bench/peers/iceoryx2_ping): scenario 9 only
  (--tachyon-wake: `blocking`, Tachyon's receiving threads block at once (perf --spin 0us, as
  Cyclone DDS's do); `watch`, Tachyon as configured by default (they watch their sockets 20 µs
  before blocking, while that catches datagrams); `busy-poll`, they spin (perf --busy-poll 1ms))

Scenarios (--scenarios takes names or numbers):
  1 latency     round trip, 2 processes on loopback, RELIABLE KEEP_LAST(1),
                32 B, 1 KiB, 64 KiB, 1 MiB (short: 32 B, 1 KiB; 2 s each)
  2 bound       32 B at 1000 pings/s, RELIABLE KEEP_ALL: 1,000,000 round trips
                (about 17 min per run!; short: 5 s); max and max/mean. It makes most of the
                long form's hours: run it apart, e.g. --scenarios 2 --reps 1, and the rest
                with --scenarios 1,3,4,5,6
  3 throughput  pub -> sub, unlimited rate, RELIABLE KEEP_ALL, 32 B, 1 KiB, 64 KiB
  4 fanout      one pub, 1/4/8 sub processes (short: 4), 1 KiB, multicast vs --unicast
  5 variants    1 KiB round trip: simple vs complex type x listener vs waitset
                (short: same vCPU only)
  6 veth        scenario 1 between two network namespaces joined by a veth pair
                (short: 32 B only)
  7 isolation   Tachyon only: a critical writer (TRANSPORT_PRIORITY above the participant's
                threads.critical_priority, pong answering critically too; its receive threads
                and the pinging thread SCHED_FIFO 50) pings 32 B at 1000/s, RELIABLE KEEP_ALL:
                alone; with a bulk writer in the same participant writing
                64 KiB samples as fast as flow control allows to a `perf sub` of its own; and
                with that plus a discovery storm of 1,000 fake participants (`perf storm`). The
                three cases alternate within each repetition; ratios loaded / alone, target
                1.2x for p99.9 and max. 10 s measured per run (long: 60 s); ping on vCPU 0,
                the other processes on vCPU 1 (--placements does not apply)
  8 intra       in one process: write a sample, then take it on the same thread, BEST_EFFORT
                KEEP_LAST(1), 16 B (long: also 1 KiB, 64 KiB; HDDS 16 B only): Tachyon's
                `perf write-take` (writer and reader in one participant, as HDDS's; and,
                Tachyon alone, in two: the in-process transport) against HDDS's
                `latency_benchmark`, on vCPU 0; and a round trip, RELIABLE KEEP_LAST(1), ping
                and pong as two participants of one process: Tachyon's `perf intra` against
                `fastdds_perf intra` (Fast DDS's intraprocess delivery), answering from a
                listener on vCPU 0, and from two threads polling `take` (--delivery poll) on
                both vCPUs (--placements does not apply)
  9 shm         2 processes of the host through shared memory, RELIABLE KEEP_LAST(1), 32 B
                (long: also 64 KiB, 1 MiB, 4 MiB): Tachyon --transport shm, Fast DDS with its
                builtin shared memory, iceoryx2 (two vCPUs only); each case also Tachyon over
                UDP as the reference of the targets (0.5x UDP, 0.3x Fast DDS, busy-polling
                1.5x iceoryx2; 1 MiB and 4 MiB 0.2x UDP)
  10 xdp        AF_XDP across a veth pair (root): 32 B, 1 KiB, 64 KiB (short: 32 B) round
                trips of Tachyon over kernel UDP and over AF_XDP (poll() and spinning), Cyclone
                DDS, the raw-UDP and raw AF_XDP floors (`tachyon floor --xdp-interface`); and the
                latency bound over AF_XDP: 32 B at 1000/s, 1,000,000 round trips (short: 10 s),
                max / mean, the raw AF_XDP floor paced the same way beside it (the machine's own
                spread). Targets: XDP spinning p50 1.4x the raw AF_XDP floor and 0.5x Cyclone
                DDS; max / mean 3
  11 interference  Tachyon only, root, iperf3: the timing-isolation experiment. A critical
                32 B ping-pong every 500 µs (RELIABLE KEEP_ALL, critical threads SCHED_FIFO 50)
                across a veth pair whose ends `tachyon xdp setup --queues 2` prepared (queue 1
                reserved), alone, with iperf3 sending bidirectional UDP of 32 B datagrams as
                fast as it can on the same link, and with a 64 KiB bulk writer in the same
                participant; over kernel UDP and over AF_XDP on queue 1. min / median / max /
                variance; target: AF_XDP's max with iperf3 within 2x its max alone
In scenarios 1-7 Tachyon runs over kernel UDP (--transport udp), as the others do.
Latency scenarios run in both CPU placements (--placements): ping and pong on the same vCPU
(taskset -c 0 for both) and on two (0 and 1). Throughput: sub(s) on vCPU 0, pub on vCPU 1.
Every run gets its own DDS domain, a deadline, and its processes are stopped afterwards.

Everything runs inside a private network namespace (the script re-executes itself under
`unshare -n`, loopback with multicast on): DDS discovery multicast never leaves the machine.

Report: report/<timestamp>/ (or --out DIR)
  runs/*.json   one tachyon-perf/1 record per run (bench/SCHEMA.md) + a "harness" section
                (case, placement, commands, CPU and RSS of every process from wait4())
  raw/, logs/   what the programs wrote (JSON, stdout/stderr)
  summary.md    tables of medians over the repetitions, ratios tachyon / X, targets
  summary.json  the same as data
  *.png         plots by bench/plot (latency CCDF, throughput vs size, scenario-2 timeline,
                scenario 7's critical latency with and without the load)
The Markdown summary is printed at the end.

Examples:
  bench/run.py --short                          # the whole matrix, quick form (< 20 min)
  bench/run.py                                  # long form (hours: scenario 2 alone is long)
  bench/run.py --short --scenarios 1,3 --impls tachyon,cyclone --reps 5
  bench/run.py --short --dry-run                # the plan and its time estimate only
  bench/run.py --report report/20261122-1030    # redo summary and plots of an earlier run
"""
import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from harness import netns, report  # noqa: E402
from harness.impls import all_impls  # noqa: E402
from harness.runner import Runner  # noqa: E402
from harness.scenarios import (INTERFERENCE_NET, PLACEMENTS, SCENARIO_IDS, build_matrix, estimate, run_seconds,  # noqa: E402
                               schedule)

PLOT_MANIFEST = os.path.join(HERE, "plot", "Cargo.toml")
IMPL_ORDER = ["tachyon", "cyclone", "fastdds", "udp", "xdp", "hdds", "iceoryx2"]
# Programs --bin can replace: one per implementation, and Cyclone's latency program.
BIN_NAMES = IMPL_ORDER + ["cyclone_ping"]


# --- command line ----------------------------------------------------------------------------

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="the quick form of every scenario (< 20 min in all)")
    ap.add_argument("--scenarios", default="all",
                    help="comma-separated names or numbers: " + ",".join(SCENARIO_IDS) + " (default all)")
    ap.add_argument("--impls", default="tachyon,cyclone,fastdds,udp,xdp,hdds,iceoryx2",
                    help="comma-separated implementations, in the order they alternate (default all)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of every run (default 3)")
    ap.add_argument("--storm", type=int, default=None, metavar="N",
                    help="scenario 7's discovery storm: N fake participants (default 1,000)")
    ap.add_argument("--placements", default="same,split",
                    help="CPU placements of the latency scenarios: same (ping and pong on vCPU 0), "
                         "split (vCPUs 0 and 1); default both")
    ap.add_argument("--duration", type=float,
                    help="measured seconds of every run (overrides the form's; not scenario 2's long form)")
    ap.add_argument("--warmup", type=float, help="warm-up seconds of every run (overrides the form's)")
    ap.add_argument("--udp-wake", default="blocking",
                    help="wake modes of the raw-UDP floor, comma-separated: blocking, busy-poll")
    ap.add_argument("--tachyon-wake", default="blocking",
                    help="wake modes of Tachyon's receiving threads, comma-separated: blocking "
                         "(block at once: tachyon perf --spin 0us), watch (the default "
                         "configuration: watch the socket 20 µs before blocking, while that "
                         "catches datagrams), busy-poll (tachyon perf --busy-poll 1ms: spin "
                         "before blocking; worth it with a vCPU per process)")
    ap.add_argument("--bin", action="append", default=[], metavar="IMPL=PATH",
                    help="run this program for an implementation instead of the default "
                         "(e.g. --bin fastdds=/tmp/fastdds_perf, --bin cyclone=/opt/bin/ddsperf, "
                         "--bin cyclone_ping=/tmp/cyclone_ping); repeatable")
    ap.add_argument("--build", action="store_true",
                    help="build tachyon (cargo build --release -p tachyon-cli) and the peers "
                         "(bench/build-peers.sh, if present) first")
    ap.add_argument("--out", help="report folder (default report/<timestamp>)")
    ap.add_argument("--no-plot", action="store_true", help="no PNG plots (skips building bench/plot)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and its time estimate, run nothing")
    ap.add_argument("--report", metavar="DIR",
                    help="run nothing: rebuild summary.md, summary.json and the plots of DIR "
                         "(with the same --short/--scenarios/... as the run that made it)")
    a = ap.parse_args(argv)
    a.scenarios = _pick(a.scenarios, SCENARIO_IDS, "scenario", numbered=True)
    a.impls = _pick(a.impls, IMPL_ORDER, "implementation")
    a.placements = [PLACEMENTS[p] for p in _pick(a.placements, list(PLACEMENTS), "placement")]
    a.udp_wake = _pick(a.udp_wake, ["blocking", "busy-poll"], "wake mode")
    a.tachyon_wake = _pick(a.tachyon_wake, ["blocking", "watch", "busy-poll"], "wake mode")
    if a.reps < 1:
        ap.error("--reps must be at least 1")
    a.bin = dict(_binary(ap, b) for b in a.bin)
    return a


def _binary(ap, text):
    name, sep, path = text.partition("=")
    if not sep or name not in BIN_NAMES or not path:
        ap.error(f"--bin {text!r}: expected IMPL=PATH with IMPL one of {', '.join(BIN_NAMES)}")
    return name, path


def _pick(text, known, what, numbered=False):
    if text == "all":
        return list(known)
    out = []
    for item in text.split(","):
        item = item.strip()
        if numbered and item.isdigit() and 1 <= int(item) <= len(known):
            item = known[int(item) - 1]
        if item not in known:
            sys.exit(f"unknown {what} {item!r}: choose from {', '.join(known)}")
        out.append(item)
    return out


# --- the plan --------------------------------------------------------------------------------

def select_scenarios(args):
    scenarios = [s for s in build_matrix(args.short, args.placements, args.storm)
                 if s.id in args.scenarios]
    if args.duration is not None or args.warmup is not None:
        from dataclasses import replace
        for s in scenarios:
            s.cases = [replace(c, spec=_override(c.spec, args)) for c in s.cases]
    return scenarios


def _override(spec, args):
    from dataclasses import replace
    if args.duration is not None and spec.count is None:
        spec = replace(spec, duration=args.duration)
    if args.warmup is not None:
        spec = replace(spec, warmup=args.warmup)
    return spec


def select_impls(args):
    impls = [i for i in all_impls(ROOT, args.udp_wake, args.bin, args.tachyon_wake)
             if i.name.split("-")[0] in args.impls]
    impls.sort(key=lambda i: args.impls.index(i.name.split("-")[0]))
    available, skipped = [], {}
    for impl in impls:
        why = impl.unavailable()
        if why:
            skipped[impl.name] = why
        else:
            available.append(impl)
    return impls, available, skipped


def make_plan(scenarios, impls):
    """[(scenario, case, [impls that run it], {impl name: why not})]"""
    plan = []
    for s in scenarios:
        for case in s.cases:
            runs, why_not = [], {}
            for impl in impls:
                why = impl.unsupported(case)
                if why:
                    why_not[impl.name] = why
                else:
                    runs.append(impl)
            plan.append((s, case, runs, why_not))
    return plan


def plan_seconds(plan, reps):
    return estimate({id(c): [c] * len(runs) for _, c, runs, _ in plan}, reps)


def print_plan(plan, reps, all_plan, skipped):
    for name, why in skipped.items():
        print(f"skipped: {name}: {why}")
    runs = sum(len(r) for _, _, r, _ in plan) * reps
    secs = plan_seconds(plan, reps)
    full = plan_seconds(all_plan, reps)
    print(f"plan: {runs} runs ({reps} repetitions), estimated {secs / 60:.1f} min"
          + (f" (with every implementation built: {full / 60:.1f} min)" if full != secs else ""))
    for s, case, impls, why_not in plan:
        names = ", ".join(i.name for i in impls) or "nothing"
        print(f"  {s.number}. {case.label:34} {names:36} {run_seconds(case):5.1f} s/run")


# --- running ---------------------------------------------------------------------------------

def build(args):
    """Builds before entering the namespace (cargo may have to fetch crates)."""
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(ROOT, "target"))
    if args.build:
        _check(["nice", "-n", "10", "cargo", "build", "--release", "-p", "tachyon-cli"], env)
        peers = os.path.join(HERE, "build-peers.sh")
        if os.access(peers, os.X_OK):
            _check(["nice", "-n", "10", peers], env)
    if not args.no_plot:
        _check(["nice", "-n", "10", "cargo", "build", "--release", "--quiet", "--manifest-path", PLOT_MANIFEST], env)


def _check(cmd, env):
    print("+ " + " ".join(cmd), flush=True)
    if subprocess.run(cmd, cwd=ROOT, env=env).returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}")


def run_matrix(plan, runner, reps):
    total = sum(len(r) for _, _, r, _ in plan) * reps
    done, started = 0, time.monotonic()
    left = plan_seconds(plan, reps)
    nets = {"lo": netns.Loopback()}
    no_net = set()
    try:
        # Implementations alternate (A B C A B C ...); so do the cases of an interleaved scenario.
        for s, case, impl, rep in schedule(plan, reps):
            done += 1
            left -= run_seconds(case)
            if case.net in no_net:
                continue
            try:
                net = _network(nets, case.net)
            except RuntimeError as e:
                print(f"skipped: {case.case_id}: no {case.net} network: {e}", flush=True)
                no_net.add(case.net)
                continue
            rec = runner.run(case, impl, rep, net)
            elapsed = time.monotonic() - started
            print(f"[{done}/{total} {elapsed / 60:4.1f} min, ~{max(left, 0) / 60:.1f} left] "
                  f"{case.case_id} {impl.name} r{rep + 1}: {_one_line(rec)}", flush=True)
    finally:
        for net in nets.values():
            net.close()


def _network(nets, name):
    if name not in nets:
        if name == INTERFERENCE_NET:
            # Queue 1 of each end reserved for critical traffic (tachyon xdp setup).
            tachyon = os.path.join(ROOT, "target/release/tachyon")
            nets[name] = netns.VethPair(subnet="10.213.78", name=name,
                                        setup=[tachyon, "xdp", "setup", "{dev}", "--queues", "2"])
        else:
            nets[name] = netns.VethPair()
    return nets[name]


def _one_line(rec):
    h = rec["harness"]
    if h["error"]:
        return "FAILED " + h["error"][:200]
    lat, tp = rec.get("latency"), rec.get("throughput")
    if lat:
        p999 = lat.get("p99_9")
        bulk, storm = rec.get("bulk"), rec.get("storm")
        return (f"p50 {lat['p50'] / 1e3:.1f} µs"
                + (f"  p99.9 {p999 / 1e3:.1f} µs" if p999 is not None else "")
                + f"  max {lat['max'] / 1e3:.1f} µs  n {lat['count']}"
                + (f"  lost {lat['lost']}" if lat.get("lost") else "")
                + (f"  bulk {bulk['samples_per_s']:,.0f}/s {bulk['mbit_per_s']:,.0f} Mbit/s" if bulk else "")
                + (f"  storm {storm['announcements_per_s']:,.0f} SPDP/s" if storm else ""))
    if tp:
        return f"{tp['samples_per_s']:,.0f} samples/s  {tp['mbit_per_s']:.1f} Mbit/s  lost {tp['lost']}"
    return "no figures"


STALLS_SECONDS = 2.0


def measure_stalls(out_dir, scenarios):
    """The machine's own stalls under busy-polling, before the matrix: `tachyon floor stalls` on
    each vCPU at once (raw/machine-stalls-cpuN.json), for the scenarios that busy-poll."""
    tachyon = os.path.join(ROOT, "target/release/tachyon")
    if not any(s.id in report.STALL_SCENARIOS for s in scenarios) or not os.access(tachyon, os.X_OK):
        return
    procs = []
    for cpu in range(os.cpu_count() or 1):
        path = os.path.join(out_dir, "raw", f"machine-stalls-cpu{cpu}.json")
        procs.append(subprocess.Popen(
            [tachyon, "floor", "stalls", "--cpu", str(cpu), "--duration", str(STALLS_SECONDS),
             "--warmup", "0.2", "--quiet", "--json", path],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for p in procs:
        try:
            p.wait(timeout=STALLS_SECONDS + 30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    stalls = report.machine_stalls(out_dir)
    print("machine stalls: " + ("; ".join(f"vCPU {x['cpu']} {x['per_s']:,.0f}/s p50 {x['p50'] / 1e3:.1f} µs"
                                          for x in stalls) or "not measured"), flush=True)


# --- report ----------------------------------------------------------------------------------

def load_records(out_dir):
    records = []
    for path in sorted(glob.glob(os.path.join(out_dir, "runs", "*.json"))):
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
        rec["_file"] = os.path.relpath(path, out_dir)
        records.append(rec)
    return records


def write_report(out_dir, args, plan, skipped, elapsed_s, command, load_start=None):
    scenarios = []
    for s, _, _, _ in plan:
        if s not in scenarios:
            scenarios.append(s)
    unsupported = {case.case_id: why for _, case, _, why in plan}
    agg = report.aggregate(load_records(out_dir))
    target_rows = report.targets(scenarios, agg)
    info = report.machine_info(ROOT)
    info["stalls"] = report.machine_stalls(out_dir)
    options = {"form": "short" if args.short else "long", "reps": args.reps, "command": command,
               "elapsed_s": round(elapsed_s, 1), "load_start": load_start}
    order = [i for name in IMPL_ORDER for i in agg_impls(agg) if i.split("-")[0] == name]
    md = report.markdown(info, options, scenarios, agg, skipped, unsupported, target_rows, order, elapsed_s)
    with open(os.path.join(out_dir, "summary.md"), "w", encoding="utf-8") as f:
        f.write(md)
    summary = report.summary_json(info, options, scenarios, agg, skipped, unsupported, target_rows)
    with open(os.path.join(out_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    return md


def previous_elapsed(out_dir):
    """The running time recorded by the run that made `out_dir` (for --report)."""
    try:
        with open(os.path.join(out_dir, "summary.json"), encoding="utf-8") as f:
            return json.load(f)["options"].get("elapsed_s", 0.0)
    except (OSError, ValueError, KeyError):
        return 0.0


def agg_impls(agg):
    names = []
    for cells in agg.values():
        for name in cells:
            if name not in names:
                names.append(name)
    return names


def plot(out_dir):
    binary = os.path.join(ROOT, "target", "release", "plot")
    if not os.access(binary, os.X_OK):
        print(f"no plots: {binary} not built (cargo build --release --manifest-path {PLOT_MANIFEST})")
        return
    r = subprocess.run([binary, out_dir], capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    if r.returncode != 0:
        print(f"plot failed (status {r.returncode}): {r.stderr.strip()}")


# --- main ------------------------------------------------------------------------------------

def _terminate_on_sigterm():
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, handler)


def main():
    args = parse_args()
    command = "bench/run.py " + " ".join(sys.argv[1:])
    scenarios = select_scenarios(args)
    impls, available, skipped = select_impls(args)
    plan = make_plan(scenarios, available)
    if args.report:
        print(write_report(args.report, args, plan, skipped, previous_elapsed(args.report), command))
        if not args.no_plot:
            plot(args.report)
        return
    if os.environ.get(netns.ENV_FLAG) != "1":
        if not args.dry_run:
            build(args)
            impls, available, skipped = select_impls(args)  # what the build made is there now
            plan = make_plan(scenarios, available)
        print_plan(plan, args.reps, make_plan(scenarios, impls), skipped)
        if args.dry_run:
            return
        netns.enter_private_namespace()  # does not return: re-executes this script in a netns
    _terminate_on_sigterm()
    out_dir = os.path.abspath(args.out or os.path.join(ROOT, "report", time.strftime("%Y%m%d-%H%M%S")))
    runner = Runner(out_dir)
    print(f"report folder: {out_dir}", flush=True)
    started, load_start = time.monotonic(), report.load_average()
    try:
        measure_stalls(out_dir, [s for s, _, _, _ in plan])
        run_matrix(plan, runner, args.reps)
    except KeyboardInterrupt:
        print("interrupted: the report covers the runs done so far", flush=True)
    md = write_report(out_dir, args, plan, skipped, time.monotonic() - started, command, load_start)
    if not args.no_plot:
        plot(out_dir)
    print()
    print(md)


if __name__ == "__main__":
    main()
