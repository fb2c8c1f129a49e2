#!/usr/bin/env bash
# Builds target/bolt/tachyon: the `tachyon` command with its code laid out by BOLT (LLVM's
# post-link optimizer) from a profile of its own sample paths, for deployments that want the
# last few percent (`docs/hot-path.md`, "Layout: what BOLT shows"). Optional: the benchmarks,
# the tests and the README's figures use the plain release build.
#
#   scripts/bolt.sh            build, train, optimize (about 5 minutes on 2 cores)
#
# The steps, to adapt to an application of your own (train it on its own traffic):
#   1. a release build linked with `-Wl,--emit-relocs` (BOLT moves functions only then);
#   2. `llvm-bolt -instrument`: a copy that counts its branches and writes a profile at exit;
#   3. that copy run on the paths that matter (here `tachyon perf`: write -> take in one
#      process, round trips over shared memory and UDP, blocking and busy-polling), inside a
#      private network namespace;
#   4. `llvm-bolt` with the merged profile: hot blocks together, cold ones split off,
#      functions ordered by calls.
# Needs `llvm-bolt` and `merge-fdata` (Debian: `bolt-19`, installed here when missing and run
# as root) and `unshare` for the namespace.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '\n== %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

bolt_bin=""
for d in "" /usr/lib/llvm-19/bin/; do
    if command -v "${d}llvm-bolt" >/dev/null 2>&1; then bolt_bin="$d"; break; fi
done
if [ -z "$bolt_bin" ] && ! command -v llvm-bolt >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing bolt-19 (Debian)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q bolt-19 >/dev/null
        bolt_bin=/usr/lib/llvm-19/bin/
    else
        die "llvm-bolt not found: install Debian's bolt-19 (apt-get install bolt-19)"
    fi
fi
command -v unshare >/dev/null 2>&1 || die "unshare (util-linux) is needed to train in a private network namespace"

out=target/bolt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

say "release build with relocations (target dir $out/build)"
RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-Wl,--emit-relocs" \
    cargo build --release --locked -p tachyon-cli --target-dir "$out/build"
plain="$out/build/release/tachyon"

say "instrumenting"
"${bolt_bin}llvm-bolt" "$plain" -instrument -instrumentation-file="$work/prof" \
    -instrumentation-file-append-pid -o "$work/tachyon-inst" >/dev/null

say "training (a private network namespace; about 20 seconds)"
ns_flags=-n
[ "$(id -u)" = 0 ] || ns_flags=-rn
unshare "$ns_flags" -- bash -c '
    set -e
    ip link set lo up
    ip link set lo multicast on
    ip route add 224.0.0.0/4 dev lo
    t=$1
    $t perf write-take --same-participant --size 16 --reliability best-effort \
        --history keep-last --depth 1 --duration 2 --quiet >/dev/null 2>&1
    for args in "--transport shm --spin 0us" "--transport udp --spin 0us" \
                "--transport shm --busy-poll 1ms"; do
        $t perf pong $args --duration 7 --quiet >/dev/null 2>&1 &
        sleep 0.5
        $t perf ping $args --size 32 --duration 4 --quiet >/dev/null 2>&1
        wait
    done
' train "$work/tachyon-inst"
ls "$work"/prof.*.fdata >/dev/null 2>&1 || die "the instrumented runs wrote no profile"
"${bolt_bin}merge-fdata" "$work"/prof.*.fdata > "$work/all.fdata" 2>/dev/null

say "optimizing"
"${bolt_bin}llvm-bolt" "$plain" -o "$out/tachyon" -data="$work/all.fdata" \
    -reorder-blocks=ext-tsp -reorder-functions=cdsort -split-functions -split-all-cold \
    -split-eh -dyno-stats 2>&1 | grep -E "BOLT-INFO: (basic block reordering|splitting)" || true
say "done: $out/tachyon (compare with target/release/tachyon, alternating: docs/hot-path.md)"
