#!/usr/bin/env bash
# The project's main command: builds `tachyon perf` and runs a ping/pong between two processes
# in a private network namespace (so DDS discovery multicast stays on this machine), then prints
# the round-trip table. Any option is passed to `tachyon perf ping` (see docs/perf.md), e.g.
#   scripts/perf.sh --size 1024 --duration 5 --delivery waitset
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null 2>&1 || { [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"; }
command -v cargo >/dev/null 2>&1 || { echo "error: cargo not found: install Rust (https://rustup.rs)" >&2; exit 1; }
cargo build --release --locked -p tachyon-cli >&2
ns_flags=-n
[ "$(id -u)" = 0 ] || ns_flags=-rn
exec unshare "$ns_flags" -- bash -c '
    set -e
    ip link set lo up
    ip link set lo multicast on
    ip route add 224.0.0.0/4 dev lo
    duration=10
    args=("$@")
    for i in "${!args[@]}"; do
        [ "${args[$i]}" = --duration ] && duration="${args[$((i + 1))]}"
    done
    pong_for=$(( ${duration%.*} + 15 ))
    target/release/tachyon perf pong --quiet --duration "$pong_for" &
    pong=$!
    sleep 0.3
    status=0
    target/release/tachyon perf ping --size 32 "$@" || status=$?
    kill "$pong" 2>/dev/null || true
    wait "$pong" 2>/dev/null || true
    exit "$status"
' perf "$@"
