#!/usr/bin/env bash
# Builds the other vendors' interop peers into OUTDIR (default target/interop):
#   cyclone_peer  against Debian's Cyclone DDS 0.10 (cyclonedds-dev: idlc, headers, libddsc)
#   fastdds_peer  against Debian's Fast DDS 2.9 (libfastrtps-dev, libfastcdr-dev)
#   cyclone11_peer  Cyclone DDS 11 (PyPI cyclonedds, which bundles its C library; Debian has
#                   only 0.10): a virtual environment in OUTDIR/cyclone11-venv and a launcher
#                   of peers/cyclone11_peer.py
# Installs the Debian packages when missing (as root). Rebuilds only when a source changed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-$HERE/../target/interop}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
SRC="$HERE/peers"

"$HERE/../scripts/ensure-packages.sh" cyclonedds-dev libfastrtps-dev libfastcdr-dev g++ gcc pkg-config \
    python3-venv

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

# Cyclone DDS 11, the current release. The package is installed once (outside any network
# namespace: it comes from PyPI); the launcher is rewritten when the script changed.
CYCLONE11_VERSION=11.0.1
VENV="$OUT/cyclone11-venv"
if ! "$VENV/bin/python3" -c "import sys, cyclonedds, importlib.metadata as m
sys.exit(m.version('cyclonedds') != '$CYCLONE11_VERSION')" 2>/dev/null; then
    echo "installing PyPI cyclonedds==$CYCLONE11_VERSION (Cyclone DDS 11) in $VENV" >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "cyclonedds==$CYCLONE11_VERSION" >&2
fi
if newer "$OUT/cyclone11_peer" "$SRC/cyclone11_peer.py"; then
    printf '#!/bin/sh\n# Cyclone DDS 11 interop peer (written by interop/build-peers.sh)\nexec "%s" "%s" "$@"\n' \
        "$VENV/bin/python3" "$SRC/cyclone11_peer.py" > "$OUT/cyclone11_peer"
    chmod +x "$OUT/cyclone11_peer"
fi
