#!/usr/bin/env bash
# Builds the benchmark programs of the other vendors into OUTDIR (default target/bench):
#   fastdds_perf  against Debian's Fast DDS 2.9 (libfastrtps-dev, libfastcdr-dev)
#   cyclone_ping  against Debian's Cyclone DDS 0.10.2 (cyclonedds-dev: headers, libddsc, idlc)
#   fastdds_join, cyclone_join  one process of a discovery-at-scale run (bench/join.py)
#   hdds_latency_benchmark  HDDS 1.1.2's own latency_benchmark example, from its crates.io
#                 package (checksum pinned), built with cargo with the workspace's release
#                 profile (fat LTO; scenario 8: in process)
#   iceoryx2_ping  bench/peers/iceoryx2_ping: a ping-pong over iceoryx2 0.10 (crates.io, its
#                 lock file committed), built with cargo (scenario 9: same host)
#   futex_floor   bench/peers/futex_floor.c: the blocking floor between two processes, no
#                 DDS (docs/hot-path.md; run by hand, not by the harness)
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
# Scenarios 10 and 11 (AF_XDP): ethtool for `tachyon xdp setup`, iperf3 for the interference.
"$HERE/../scripts/ensure-packages.sh" ethtool iperf3 ||
    echo "ethtool or iperf3 missing: scenario 11 cannot run" >&2

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

if newer "$OUT/fastdds_join" "$SRC/fastdds_join.cpp"; then
    echo "building fastdds_join" >&2
    g++ -O2 -Wall -Werror -std=c++17 -o "$OUT/fastdds_join.tmp" "$SRC/fastdds_join.cpp" \
        -lfastrtps -lfastcdr -lpthread
    mv "$OUT/fastdds_join.tmp" "$OUT/fastdds_join"
fi

if newer "$OUT/futex_floor" "$SRC/futex_floor.c"; then
    echo "building futex_floor" >&2
    gcc -O2 -Wall -Wextra -Werror -std=gnu11 -o "$OUT/futex_floor.tmp" "$SRC/futex_floor.c"
    mv "$OUT/futex_floor.tmp" "$OUT/futex_floor"
fi

if newer "$OUT/cyclone_join" "$SRC/cyclone_join.c" "$SRC/cyclone_ping_types.idl" \
    "$OUT/cyclone_ping"; then
    echo "building cyclone_join" >&2
    gen="$OUT/cyclone_ping.gen" # the types cyclone_ping's build generated
    gcc -O2 -Wall -Wextra -Werror -std=gnu11 -I"$gen" -o "$OUT/cyclone_join.tmp" "$SRC/cyclone_join.c" \
        "$gen/cyclone_ping_types.o" -lddsc -lpthread
    mv "$OUT/cyclone_join.tmp" "$OUT/cyclone_join"
fi

# The Rust peers are built as Tachyon's own binaries are (the workspace's [profile.release]:
# fat LTO, one codegen unit), so that a comparison with them is like for like. Binaries built
# another way are built again.
RUST_PROFILE="lto=fat codegen-units=1"
export CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
if [ "$(cat "$OUT/rust-profile" 2>/dev/null)" != "$RUST_PROFILE" ]; then
    rm -f "$OUT/hdds_latency_benchmark" "$OUT/iceoryx2_ping"
    echo "$RUST_PROFILE" > "$OUT/rust-profile"
fi

# HDDS: its package from crates.io, checked against the checksum the registry's index gives,
# unpacked and its example built as published (nothing of it is kept in this repository).
HDDS_VERSION=1.1.2
HDDS_SHA256=c3c8d32afb6f5f141a8e86a19a11b9658ce4e675e1c3c6e9917b753ee8458404
if [ ! -x "$OUT/hdds_latency_benchmark" ]; then
    echo "building HDDS $HDDS_VERSION latency_benchmark" >&2
    # Outside this repository: inside it, cargo would take the package for a member of our
    # workspace.
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    curl -sSfL -o "$work/hdds.crate" "https://static.crates.io/crates/hdds/hdds-$HDDS_VERSION.crate"
    echo "$HDDS_SHA256  $work/hdds.crate" | sha256sum -c --quiet -
    tar xzf "$work/hdds.crate" -C "$work"
    (cd "$work/hdds-$HDDS_VERSION" && cargo build --release --example latency_benchmark \
        --target-dir "$work/target")
    cp "$work/target/release/examples/latency_benchmark" "$OUT/hdds_latency_benchmark"
    rm -rf "$work"
fi

# iceoryx2: our ping-pong program over the crate (a package of its own, outside the workspace,
# with its own lock file), built into OUT's cargo target directory.
ICE="$SRC/iceoryx2_ping"
if newer "$OUT/iceoryx2_ping" "$ICE/Cargo.toml" "$ICE/Cargo.lock" "$ICE/src/main.rs"; then
    echo "building iceoryx2_ping" >&2
    cargo build --release --locked --manifest-path "$ICE/Cargo.toml" --target-dir "$OUT/iceoryx2-target"
    cp "$OUT/iceoryx2-target/release/iceoryx2_ping" "$OUT/iceoryx2_ping"
fi
