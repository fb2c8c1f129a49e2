#!/usr/bin/env python3
"""Atomic read-modify-writes per round trip, from two callgrind runs of the same binary.

An atomic read-modify-write (a `lock`-prefixed instruction, or `xchg` with memory, which a
`SeqCst` store compiles to) costs more than its share of the instruction count: it drains
the store buffer. callgrind with `--dump-instr=yes` gives each instruction's execution count;
`objdump -d` of the same binary says which instructions are atomic. Two runs that differ only
in how many round trips they serve (2,000 and 12,000 pings, say) cancel start-up and
discovery out: the difference divided by the difference in round trips is per round trip.

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=a.out \\
        target/profiling/tachyon perf pong ...        # answering 2,000 pings
    valgrind ... --callgrind-out-file=b.out ...       # answering 12,000
    scripts/count-atomics.py target/profiling/tachyon a.out b.out --round-trips 10000

docs/hot-path.md ("Atomic operations, counted") has the figures.
"""

import argparse
import collections
import re
import subprocess
import sys


def instruction_counts(path, functions=None):
    """Execution counts by (object, address) of a callgrind file written with --dump-instr;
    with a dict as `functions`, also the function each counted address belongs to, by
    (object, address) (`scripts/footprint.py`)."""
    counts = collections.Counter()
    objects = {}
    current = None
    names = {}
    function = None
    addr = 0
    after_call = False
    name_def = re.compile(r"(c?)(ob|fn|fl|fi|fe|cfi|cfl)=\((\d+)\)\s*(.*)")
    with open(path) as f:
        for line in f:
            m = name_def.match(line.strip())
            if m:
                called, kind, ident, name = m.groups()
                if kind == "ob":
                    if name:
                        objects[ident] = name
                    if not called:
                        current = objects.get(ident)
                elif kind == "fn":
                    if name:
                        names[ident] = name
                    if not called:
                        function = names.get(ident)
                continue
            if line.startswith("calls="):
                # The next cost line is the call's inclusive cost, not this instruction's.
                after_call = True
                continue
            if not line or line[0] not in "0123456789+-*":
                continue
            fields = line.split()
            pos = fields[0]
            if pos.startswith("0x"):
                addr = int(pos, 16)
            elif pos[0] in "+-":
                addr += int(pos)
            elif pos != "*":
                addr = int(pos)
            if after_call:
                after_call = False
                continue
            if len(fields) >= 2:
                counts[(current, addr)] += int(fields[-1])
                if functions is not None:
                    functions[(current, addr)] = function
    return counts


def atomic_instructions(binary):
    """(address, mnemonic, function) of every atomic read-modify-write in `binary`."""
    out = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", "-C", binary],
        capture_output=True, text=True, check=True,
    ).stdout
    function = None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:", line)
        if m:
            function = m.group(1)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+((?:lock )?\S+)(.*)", line)
        if not m:
            continue
        mnemonic, operands = m.group(2), m.group(3)
        if mnemonic.startswith("lock ") or (mnemonic.startswith("xchg") and "(" in operands):
            yield int(m.group(1), 16), mnemonic, function


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("binary", help="the binary both runs executed (a position-independent one)")
    p.add_argument("fewer", help="callgrind output of the run with fewer round trips")
    p.add_argument("more", help="callgrind output of the run with more round trips")
    p.add_argument("--round-trips", type=float, default=10000,
                   help="how many more round trips the second run served (default 10000)")
    p.add_argument("--top", type=int, default=30, help="lines of the breakdown")
    a = p.parse_args()
    fewer, more = instruction_counts(a.fewer), instruction_counts(a.more)
    objects = {o for (o, _) in more if o and o.endswith("/" + a.binary.split("/")[-1])}
    if len(objects) != 1:
        sys.exit(f"cannot tell which object of the runs is {a.binary}: {sorted(objects)}")
    obj = objects.pop()
    per = collections.Counter()
    total = 0.0
    for addr, mnemonic, function in atomic_instructions(a.binary):
        # valgrind maps a position-independent binary where objdump says (no offset).
        n = (more[(obj, addr)] - fewer[(obj, addr)]) / a.round_trips
        if n > 0.01:
            per[(function, mnemonic)] += n
            total += n
    print(f"atomic read-modify-writes per round trip in {a.binary}: {total:.1f}")
    for (function, mnemonic), n in per.most_common(a.top):
        print(f"{n:7.2f}  {mnemonic:14s} {function[:110]}")


if __name__ == "__main__":
    main()
