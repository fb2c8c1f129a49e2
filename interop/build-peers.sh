#!/usr/bin/env bash
# Builds the other vendors' interop peers into OUTDIR (default target/interop):
#   cyclone_peer  against Debian's Cyclone DDS 0.10 (cyclonedds-dev: idlc, headers, libddsc)
#   fastdds_peer  against Debian's Fast DDS 2.9 (libfastrtps-dev, libfastcdr-dev)
# Installs the Debian packages when missing (as root). Rebuilds only when a source changed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-$HERE/../target/interop}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
SRC="$HERE/peers"

"$HERE/../scripts/ensure-packages.sh" cyclonedds-dev libfastrtps-dev libfastcdr-dev g++ gcc pkg-config

newer() { # newer TARGET SOURCES...: true when TARGET is missing or older than a source
    local t="$1"; shift
    [ -e "$t" ] || return 0
    for s in "$@"; do [ "$s" -nt "$t" ] && return 0; done
    return 1
}

if newer "$OUT/cyclone_peer" "$SRC/cyclone_peer.c" "$SRC/peer_options.h" "$SRC/interop.idl"; then
    echo "building cyclone_peer" >&2
    ( cd "$OUT" && idlc "$SRC/interop.idl" 2>&1 | grep -v "default extensibility" >&2 || true )
    gcc -O2 -Wall -Werror -I"$OUT" -I"$SRC" $(pkg-config --cflags CycloneDDS) -o "$OUT/cyclone_peer" \
        "$SRC/cyclone_peer.c" "$OUT/interop.c" $(pkg-config --libs CycloneDDS)
fi

if [ -f "$SRC/fastdds_peer.cpp" ] &&
    newer "$OUT/fastdds_peer" "$SRC/fastdds_peer.cpp" "$SRC/peer_options.h"; then
    echo "building fastdds_peer" >&2
    g++ -O2 -Wall -Werror -std=c++17 -I"$SRC" -o "$OUT/fastdds_peer" "$SRC/fastdds_peer.cpp" \
        -lfastrtps -lfastcdr -lpthread
fi
