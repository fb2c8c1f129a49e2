#!/usr/bin/env bash
# The project's one test command: installs what the tests need when it is missing, then runs
# formatting, lints and every test of the workspace. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n== %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# --- what the tests need -------------------------------------------------------------------
if ! command -v cargo >/dev/null 2>&1; then
    [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust (https://rustup.rs) and re-run"

if command -v rustup >/dev/null 2>&1; then
    for c in rustfmt clippy; do
        if ! rustup component list --installed 2>/dev/null | grep -q "^$c"; then
            say "installing rust component $c"
            rustup component add "$c"
        fi
    done
fi
cargo fmt --version >/dev/null 2>&1 || die "rustfmt missing: rustup component add rustfmt"
cargo clippy --version >/dev/null 2>&1 || die "clippy missing: rustup component add clippy"

# Debian packages the tests use: a C/C++ toolchain, Python for the interop driver, and the
# network tools that isolate networked tests. The peers' own packages (Cyclone DDS, Fast DDS)
# are installed by interop/build-peers.sh.
need_pkgs=()
command -v cc >/dev/null 2>&1 || need_pkgs+=(build-essential)
command -v python3 >/dev/null 2>&1 || need_pkgs+=(python3)
# `tachyon spy watch` is checked in a real terminal.
command -v tmux >/dev/null 2>&1 || need_pkgs+=(tmux)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing ${need_pkgs[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq "${need_pkgs[@]}" || apt-get install -y -qq "${need_pkgs[@]}"
    else
        die "missing Debian packages: ${need_pkgs[*]} (run as root, or apt-get install them)"
    fi
fi

# --- checks ----------------------------------------------------------------------------------
say "cargo fmt --check"
cargo fmt --all --check

say "bench harness: unit tests, plotter formatting"
# bench/run.py's converter of ddsperf output, medians, ratios, targets and the short form's time
# budget (standard-library Python); bench/plot is a crate of its own, outside the workspace.
(cd bench && python3 -m unittest discover -s harness -t .)
cargo fmt --manifest-path bench/plot/Cargo.toml --check
cargo fmt --manifest-path bench/peers/iceoryx2_ping/Cargo.toml --check

say "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

say "cargo doc -- -D warnings (every intra-doc link resolves, none to a private item)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

say "cargo test (in an isolated network namespace)"
# Networked tests must never reach a real network: DDS discovery multicast would otherwise
# leave through the first non-loopback interface (../shared/FACTS.md). Build outside (crates
# may need fetching), then run every test in a fresh namespace whose only interface is
# loopback with multicast on.
cargo test --workspace --locked --no-run
command -v unshare >/dev/null 2>&1 || die "unshare (util-linux) is needed to isolate networked tests"
command -v ip >/dev/null 2>&1 || die "ip (iproute2) is needed to isolate networked tests"
# As root a plain network namespace; otherwise inside a user namespace (where allowed).
ns_flags=-n
[ "$(id -u)" = 0 ] || ns_flags=-rn
# Runs a command in a new network namespace of its own: loopback up, multicast through it.
in_netns() {
    unshare "$ns_flags" -- bash -c '
        set -e
        ip link set lo up
        ip link set lo multicast on
        ip route add 224.0.0.0/4 dev lo
        export TACHYON_TEST_NETNS=1
        exec "$@"
    ' netns "$@"
}
unshare "$ns_flags" -- bash -c '
    set -e
    ip link set lo up
    ip link set lo multicast on
    ip route add 224.0.0.0/4 dev lo
    export TACHYON_TEST_NETNS=1
    cargo test --workspace --locked --offline
    # The behaviour tests of the DCPS crate run with participants of one process, which the
    # in-process transport connects by default; once more over shared memory, and once more
    # over UDP, as between processes.
    over_shm=$(mktemp --suffix=.toml)
    over_udp=$(mktemp --suffix=.toml)
    trap "rm -f $over_shm $over_udp" EXIT
    printf "[transports]\nintra = false\n" > "$over_shm"
    printf "[transports]\nintra = false\nshm = false\n" > "$over_udp"
    echo "== the tachyon crate tests again, over shared memory (TACHYON_CONFIG: [transports] intra = false)"
    TACHYON_CONFIG="$over_shm" cargo test -p tachyon --tests --locked --offline
    echo "== the tachyon crate tests again, over UDP (TACHYON_CONFIG: [transports] intra = false, shm = false)"
    TACHYON_CONFIG="$over_udp" cargo test -p tachyon --tests --locked --offline
'

say "interop matrix against Cyclone DDS and Fast DDS (in an isolated network namespace)"
# The other vendors' peers come from Debian's packages (installed when missing); each case runs
# publisher and subscriber processes of two implementations and checks what they print.
bash interop/build-peers.sh target/interop
cargo build -p tachyon-interop-peer --locked --offline
peer_args=(--peer tachyon=target/debug/tachyon_peer --peer cyclone=target/interop/cyclone_peer
    --peer cyclone11=target/interop/cyclone11_peer)
[ -x target/interop/fastdds_peer ] && peer_args+=(--peer fastdds=target/interop/fastdds_peer)
in_netns python3 interop/matrix.py "${peer_args[@]}"

say "discovery servers without multicast: Fast DDS's and Tachyon's, Tachyon and Fast DDS clients (in a network namespace where multicast cannot work)"
# Fast DDS's discovery server comes from Debian's fastdds-tools (the script says so and runs
# Tachyon's alone when it cannot be installed). Clients find the server through
# ROS_DISCOVERY_SERVER; the namespace's loopback has no multicast route, so nothing can
# depend on multicast.
bash scripts/ensure-packages.sh fastdds-tools || echo "fastdds-tools missing: Fast DDS's server is skipped"
cargo build -p tachyon-cli --locked --offline
if [ -x target/interop/fastdds_peer ]; then
    unshare "$ns_flags" -- bash -c '
        set -e
        ip link set lo up
        export TACHYON_TEST_NETNS=1
        exec "$@"
    ' netns python3 interop/discovery_server.py --tachyon target/debug/tachyon \
        --peer tachyon=target/debug/tachyon_peer --peer fastdds=target/interop/fastdds_peer \
        --logs "${TMPDIR:-/tmp}/tachyon-discovery-server"
else
    echo "skipped: the Fast DDS peer (target/interop/fastdds_peer) was not built"
fi

say "tachyon spy against Cyclone DDS 0.10 and 11, Fast DDS and Tachyon (in an isolated network namespace)"
# Their peers run on one domain; `tachyon spy ls|topics --json` must name each one's vendor,
# release, host and process, and the pair of a topic that does not match, and why; `echo`
# print Cyclone DDS 11's samples and dispose, `hz` a rate, and `watch` (in tmux) its table.
cargo build -p tachyon-cli --locked --offline
in_netns python3 interop/spy_check.py --tachyon target/debug/tachyon "${peer_args[@]}"

say "cyclonedds typeof of Tachyon topics: Cyclone DDS 11 fetches their types with TypeLookup (in an isolated network namespace)"
# Cyclone DDS 11's own tool rebuilds the IDL of each matrix type from the complete TypeObjects
# a Tachyon writer's participant serves.
in_netns python3 interop/typeof_check.py --cyclonedds target/interop/cyclone11-venv/bin/cyclonedds "${peer_args[@]}"

say "tachyon perf against Cyclone DDS's ddsperf, all four directions (in an isolated network namespace)"
# ping->pong, pong<-ping, pub->sub, sub<-pub and a mixed fan-out: same topics, types, partitions
# and timestamps as ddsperf, and ddsperf's own check that every endpoint it expects matched.
cargo build -p tachyon-cli --locked --offline
in_netns python3 interop/ddsperf.py --tachyon target/debug/tachyon

say "AF_XDP: Tachyon over real veth pairs with its XDP program, against itself and against Cyclone DDS on kernel sockets, and 4 MiB samples through 10% loss (three network namespaces of its own, joined by a bridge)"
# The namespaces are joined only to each other; the script removes them. Root is needed to
# create them and attach XDP: elsewhere this step says it is skipped.
if [ "$(id -u)" = 0 ]; then
    # Its lossy bridge drops datagrams with an nftables rule.
    bash scripts/ensure-packages.sh nftables iproute2
    python3 interop/xdp_check.py --tachyon target/debug/tachyon
else
    echo "skipped (not passed): needs root (namespaces, veth, XDP)"
fi

say "interop matrix across two network namespaces joined by a veth pair losing 10% each way"
# Multicast discovery over a real multicast-capable link, and reliable delivery through loss.
# The namespaces and the veth pair are the script's own; nothing touches the host's network.
if [ "$(id -u)" = 0 ]; then
    bash scripts/ensure-packages.sh nftables iproute2
    # Tachyon's processes in the two namespaces share /dev/shm: over shared memory their pairs
    # would never cross the lossy link. This run is about the link, so shared memory is off.
    no_shm=$(mktemp --suffix=.toml)
    printf "[transports]\nshm = false\n" > "$no_shm"
    TACHYON_CONFIG="$no_shm" python3 interop/matrix.py "${peer_args[@]}" --veth-loss 10 \
        --logs "${TMPDIR:-/tmp}/tachyon-interop-veth"
    rm -f "$no_shm"
else
    echo "skipped: creating network namespaces and veth pairs needs root"
fi

say "interop matrix over the lossy veth pair again, Tachyon's user data on AF_XDP (each Tachyon peer's socket must carry traffic of every case it passes)"
# Tachyon transmits past its veth end's qdisc, so the loss applies to the peers' datagrams;
# Cyclone DDS 0.10 and Fast DDS (Cyclone DDS 11 is left out: the run is about the path).
if [ "$(id -u)" = 0 ]; then
    on_xdp=$(mktemp --suffix=.toml)
    # fallback: a second Tachyon process on one side (ownership's second writer) cannot have
    # the interface's XDP program and runs on kernel UDP.
    printf "[transports]\nshm = false\n[xdp]\ntraffic = \"user\"\nfallback = true\n" > "$on_xdp"
    xdp_peers=(--peer tachyon=target/debug/tachyon_peer --peer cyclone=target/interop/cyclone_peer)
    [ -x target/interop/fastdds_peer ] && xdp_peers+=(--peer fastdds=target/interop/fastdds_peer)
    TACHYON_CONFIG="$on_xdp" python3 interop/matrix.py "${xdp_peers[@]}" --veth-loss 10 \
        --require-xdp --logs "${TMPDIR:-/tmp}/tachyon-interop-xdp"
    rm -f "$on_xdp"
else
    echo "skipped (not passed): AF_XDP needs root"
fi

say "tachyon-bridge: two DDS sites through a Zenoh router, both ways, across a bridge restart (three network namespaces)"
# A crate of its own (bridge/, outside the workspace: Zenoh's dependencies stay out of the
# library's builds), built into the workspace's target directory so the Tachyon crates are
# not built twice; its unit tests, lints and formatting here too.
cargo fmt --manifest-path bridge/Cargo.toml --check
cargo clippy --manifest-path bridge/Cargo.toml --target-dir target --all-targets --locked -- -D warnings
cargo test --manifest-path bridge/Cargo.toml --target-dir target --locked
cargo build --manifest-path bridge/Cargo.toml --target-dir target --locked
if [ "$(id -u)" = 0 ]; then
    python3 bridge/check.py --bridge target/debug/tachyon-bridge --peer target/debug/tachyon_peer \
        --logs "${TMPDIR:-/tmp}/tachyon-bridge-check"
    # The same with the restarted bridge's Zenoh subscriber asking for no history: the
    # bridge's own recovery of a publisher's missed samples must bring them all.
    python3 bridge/check.py --bridge target/debug/tachyon-bridge --peer target/debug/tachyon_peer \
        --restart-args=--no-subscriber-history --logs "${TMPDIR:-/tmp}/tachyon-bridge-check-recovery"
    # Other vendors' programs at both ends of the bridges: Cyclone DDS 0.10 publishing in
    # site A, Fast DDS 2.9 subscribing in site B.
    if [ -x target/interop/cyclone_peer ] && [ -x target/interop/fastdds_peer ]; then
        python3 bridge/check.py --bridge target/debug/tachyon-bridge \
            --peer target/debug/tachyon_peer --ab-pub target/interop/cyclone_peer \
            --ab-sub target/interop/fastdds_peer --logs "${TMPDIR:-/tmp}/tachyon-bridge-check-cf"
    fi
else
    echo "skipped: creating network namespaces and veth pairs needs root"
fi

say "shared memory: a full tmpfs and another user (root only: a mount namespace, setpriv)"
# The shared-memory tests that need root are #[ignore]d in a plain `cargo test`: a segment that
# does not fit its tmpfs, and a user who may neither create segments in a directory that is not
# theirs nor open another user's segment; each error names the segment and the fix.
if [ "$(id -u)" = 0 ]; then
    bash scripts/ensure-packages.sh util-linux mount
    cargo test -p tachyon-transport --lib --locked --offline shm:: -- --ignored
else
    echo "skipped: mounting a tmpfs and running a process as another user need root"
fi

say "nothing of Tachyon's left in /dev/shm"
# Every participant deletes its segment when it closes; a killed process's segment is deleted
# by the survivors (or by the next participant of the same user).
left=$(find /dev/shm -maxdepth 1 -name 'tachyon-*' 2>/dev/null || true)
if [ -n "$left" ]; then
    ls -l $left >&2
    die "shared-memory segments left behind (above)"
fi
echo "none"

say "all checks passed"
