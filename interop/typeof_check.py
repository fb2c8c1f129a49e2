#!/usr/bin/env python3
"""Cyclone DDS 11's own `cyclonedds typeof` prints the IDL of Tachyon topics: it fetches the
complete TypeObjects from the Tachyon participant with the XTypes TypeLookup service and
rebuilds the IDL from them. A Tachyon writer of each matrix type runs; the IDL printed must be
the type's declaration in `interop/peers/interop.idl`.

    interop/typeof_check.py --peer tachyon=PATH --cyclonedds PATH-TO-cyclonedds-CLI

Run it where DDS traffic cannot leave the machine (scripts/test.sh runs it in a network
namespace): it refuses to run unless TACHYON_TEST_NETNS=1.
"""

import argparse
import os
import re
import subprocess
import sys
import time

DOMAIN = 78

# What `cyclonedds typeof` must print for each type (whitespace-normalized; its printer
# states @final and spells octet "byte").
EXPECTED = {
    "shape": ["@final", "struct ShapeType {", "@key string<128> color;", "long x;", "long y;",
              "long shapesize;", "};"],
    "ashape": ["@appendable", "struct AppendableShape {", "@key string<128> color;",
               "long x;", "long y;", "long shapesize;", "};"],
    "large": ["@appendable", "struct LargeData {", "@key long id;", "unsigned long seq;",
              "sequence<byte> data;", "};"],
}


def normalized(text):
    lines = []
    for line in text.splitlines():
        line = re.sub(r"\s+", " ", line).strip()
        if line:
            lines.append(line)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--peer", action="append", default=[], help="NAME=PATH of a peer program")
    ap.add_argument("--cyclonedds", required=True, help="Cyclone DDS 11's cyclonedds command")
    a = ap.parse_args()
    if os.environ.get("TACHYON_TEST_NETNS") != "1":
        sys.exit("typeof_check.py: run it inside an isolated network namespace (scripts/test.sh does)")
    peers = dict(p.split("=", 1) for p in a.peer)
    procs = []
    failures = []
    try:
        for t in EXPECTED:
            procs.append(subprocess.Popen(
                [peers["tachyon"], "pub", "--domain", str(DOMAIN), "--type", t, "--topic",
                 f"typeof_{t}", "--count", "1000000", "--period-ms", "200", "--size", "16",
                 "--wait-match", "0", "--timeout-s", "60"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(1.0)
        for t, want in EXPECTED.items():
            out = subprocess.run(
                [a.cyclonedds, "typeof", f"typeof_{t}", "-i", str(DOMAIN), "-r", "3",
                 "--suppress-progress-bar", "--color", "none"],
                capture_output=True, text=True, timeout=60)
            got = normalized(out.stdout)
            # The declaration follows an "As defined in participant(s) ..." line.
            body = [l for l in got if not l.startswith("As defined in")]
            ok = out.returncode == 0 and body == want
            print(f"{'pass' if ok else 'FAIL'}  cyclonedds typeof typeof_{t}")
            if not ok:
                failures.append(t)
                print(f"      want {want}\n      got  {got}\n      stderr {out.stderr.strip()[-300:]}")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
    if failures:
        sys.exit(f"typeof_check: {len(failures)} of {len(EXPECTED)} failed")
    print(f"typeof_check: all {len(EXPECTED)} passed")


if __name__ == "__main__":
    main()
