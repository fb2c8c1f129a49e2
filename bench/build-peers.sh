#!/usr/bin/env bash
# Builds the benchmark programs of the other vendors into OUTDIR (default target/bench):
#   fastdds_perf  against Debian's Fast DDS 2.9 (libfastrtps-dev, libfastcdr-dev)
#   cyclone_ping  against Debian's Cyclone DDS 0.10.2 (cyclonedds-dev: headers, libddsc, idlc)
# and installs Cyclone DDS's ddsperf (cyclonedds-tools), which the harness runs ready-made.
# Installs the Debian packages when missing (as root). Rebuilds only when a source changed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-$HERE/../target/bench}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
SRC="$HERE/peers"

"$HERE/../scripts/ensure-packages.sh" libfastrtps-dev libfastcdr-dev g++ \
    cyclonedds-dev cyclonedds-tools gcc

newer() { # newer TARGET SOURCES...: true when TARGET is missing or older than a source
    local t="$1"; shift
    [ -e "$t" ] || return 0
    for s in "$@"; do [ "$s" -nt "$t" ] && return 0; done
    return 1
}

if newer "$OUT/fastdds_perf" "$SRC/fastdds_perf.cpp"; then
    echo "building fastdds_perf" >&2
    g++ -O2 -Wall -Werror -std=c++17 -o "$OUT/fastdds_perf.tmp" "$SRC/fastdds_perf.cpp" \
        -lfastrtps -lfastcdr -lpthread
    mv "$OUT/fastdds_perf.tmp" "$OUT/fastdds_perf"
fi

if newer "$OUT/cyclone_ping" "$SRC/cyclone_ping.c" "$SRC/cyclone_ping_types.idl"; then
    echo "building cyclone_ping" >&2
    # The type support comes from idlc; its generated code is not ours to hold to -Werror.
    gen="$OUT/cyclone_ping.gen"
    rm -rf "$gen"
    mkdir -p "$gen"
    idlc -o "$gen" "$SRC/cyclone_ping_types.idl"
    gcc -O2 -std=gnu11 -c -o "$gen/cyclone_ping_types.o" "$gen/cyclone_ping_types.c"
    gcc -O2 -Wall -Wextra -Werror -std=gnu11 -I"$gen" -o "$OUT/cyclone_ping.tmp" "$SRC/cyclone_ping.c" \
        "$gen/cyclone_ping_types.o" -lddsc -lpthread -lm
    mv "$OUT/cyclone_ping.tmp" "$OUT/cyclone_ping"
fi
