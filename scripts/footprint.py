#!/usr/bin/env python3
"""The code a round trip runs: instructions and distinct 64-byte lines of code per round trip.

On one vCPU a round trip costs about 40 ns per KiB of code each side runs per message, on top
of the kernel's switches (`docs/hot-path.md`, "Code per message, and the kernel's wake-up"):
the size of the sample's path in lines of code is the figure to watch, and unlike a time it
does not move with the machine's noise. This runs `tachyon perf pong` under callgrind twice,
answering two numbers of pings (the difference cancels start-up and discovery out), each in a
private network namespace, and prints per round trip of the pong: instructions, hot lines
(those of instructions executed at least 0.9 times per round trip) and their KiB, then the
functions with the most hot lines. The ping's side runs the same code.

    cargo build --profile profiling -p tachyon-cli
    scripts/footprint.py                              # shared memory, blocking
    scripts/footprint.py --transport udp --top 40

Needs valgrind and unshare (root, or unprivileged user namespaces).
"""

import argparse
import collections
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# The pong under callgrind in a private network namespace (loopback up, multicast routed to
# it), answering `pings` pings of one ping process, then stopped.
NAMESPACE_RUN = r'''
set -e
ip link set lo up
ip link set lo multicast on
ip route add 224.0.0.0/4 dev lo
bin=$1; transport=$2; pings=$3; out=$4
valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$out" \
    "$bin" perf pong --transport "$transport" --spin 0us --duration 120 --quiet \
    >/dev/null 2>&1 &
pong=$!
sleep 4
"$bin" perf ping --transport "$transport" --spin 0us --size 32 --count "$pings" \
    --warmup 0 --quiet >/dev/null 2>&1
sleep 1
kill -INT "$pong" 2>/dev/null || true
wait "$pong" 2>/dev/null || true
'''


def load_parser():
    """`instruction_counts` of `count-atomics.py` (a file name no import statement takes)."""
    spec = importlib.util.spec_from_file_location("count_atomics",
                                                  os.path.join(HERE, "count-atomics.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.instruction_counts


def run_pong(binary, transport, pings, out):
    flags = "-n" if os.geteuid() == 0 else "-rn"
    subprocess.run(["unshare", flags, "--", "bash", "-c", NAMESPACE_RUN, "footprint",
                    binary, transport, str(pings), out], check=True)
    if not os.path.exists(out):
        sys.exit(f"error: callgrind wrote no {out}: did the pong start?")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--binary", default="target/profiling/tachyon",
                   help="the tachyon command, with symbols (default target/profiling/tachyon)")
    p.add_argument("--transport", default="shm", choices=["shm", "udp"],
                   help="transport of the ping-pong (default shm)")
    p.add_argument("--pings", type=int, nargs=2, default=[2000, 7000], metavar=("FEWER", "MORE"),
                   help="pings answered in the two runs (default 2000 7000)")
    p.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    a = p.parse_args()
    for tool in ("valgrind", "unshare"):
        if shutil.which(tool) is None:
            sys.exit(f"error: {tool} not found")
    if not os.access(a.binary, os.X_OK):
        sys.exit(f"error: no {a.binary}: cargo build --profile profiling -p tachyon-cli")
    fewer, more = sorted(a.pings)
    if more <= fewer:
        sys.exit("error: --pings needs two different numbers")
    instruction_counts = load_parser()
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for n in (fewer, more):
            out = os.path.join(tmp, f"pong-{n}.out")
            run_pong(a.binary, a.transport, n, out)
            functions = {}
            runs.append((instruction_counts(out, functions), functions))
    (before, _), (after, functions) = runs
    rounds = float(more - fewer)
    total = (sum(after.values()) - sum(before.values())) / rounds
    hot = [k for k, n in after.items() if n - before.get(k, 0) >= 0.9 * rounds]
    lines = {(obj, addr // 64) for obj, addr in hot}
    by_function = collections.defaultdict(set)
    instructions = collections.Counter()
    for obj, addr in hot:
        f = functions.get((obj, addr)) or f"? in {os.path.basename(obj or '?')}"
        by_function[f].add((obj, addr // 64))
        instructions[f] += 1
    print(f"pong, {a.transport}, blocking, per round trip: {total:,.0f} instructions, "
          f"{len(hot):,} of them distinct and hot, in {len(lines):,} lines of code "
          f"({len(lines) * 64 / 1024:.1f} KiB)")
    print("lines  instructions  per line  function")
    rows = sorted(((len(s), instructions[f], f) for f, s in by_function.items()), reverse=True)
    for n_lines, n_instr, f in rows[:a.top]:
        print(f"{n_lines:5d}  {n_instr:12d}  {n_instr / n_lines:8.1f}  {f[:110]}")


if __name__ == "__main__":
    main()
