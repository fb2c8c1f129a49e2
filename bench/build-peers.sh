#!/usr/bin/env bash
# Builds the benchmark programs of the other vendors into OUTDIR (default target/bench):
#   fastdds_perf  against Debian's Fast DDS 2.9 (libfastrtps-dev, libfastcdr-dev)
# (Cyclone DDS's ddsperf comes ready-made with Debian's cyclonedds-tools.)
# Installs the Debian packages when missing (as root). Rebuilds only when a source changed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-$HERE/../target/bench}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
SRC="$HERE/peers"

"$HERE/../scripts/ensure-packages.sh" libfastrtps-dev libfastcdr-dev g++

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
