#!/usr/bin/env bash
# (Re)create the RTPS captures in this directory.
#
#   sudo interop/captures/capture.sh            # all scenarios
#   sudo interop/captures/capture.sh fastdds    # only some: cyclone-ddsperf cyclone-ddsperf-frag
#                                               #            fastdds cyclone-fastdds
#
# Needs root (network + mount namespaces, nft, tcpdump), Debian packages cyclonedds-tools,
# libfastrtps-dev, libfastcdr-dev, g++, tcpdump, nftables, python3.
#
# Every scenario runs in a private network namespace (only `lo`, multicast switched on) and a
# private mount namespace with its own tmpfs on /dev/shm, so no DDS traffic leaves the machine
# and no shared-memory segment outlives the scenario; both namespaces vanish with their last
# process. Packet loss is made inside the namespace with nftables (the kernel here has no
# netem): a rule on the INPUT hook drops a random share of UDP datagrams *after* tcpdump has
# seen them on lo, so a lost datagram appears once in the capture followed by its repair
# (ACKNACK / NACK_FRAG, retransmission or GAP).
#
# Loss is random, so a scenario is repeated (up to 4 times) until its capture holds the
# submessage kinds it is meant to show. Captures are classic pcap (link type EN10MB), trimmed to
# at most $MAXPKTS packets. No datagram exceeds the 65536-octet MTU of lo, so there is no IPv4
# fragmentation (rtps_summary.py checks).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MAXPKTS=${MAXPKTS:-300}

# ---------------------------------------------------------------------------------------------
# Inside the namespaces (the script re-executes itself as: capture.sh __inner SCENARIO OUT).
# ---------------------------------------------------------------------------------------------
ns_setup() {
    ip link set lo up
    ip link set lo multicast on
    ip route add 224.0.0.0/4 dev lo
    mount -t tmpfs -o size=64m tmpfs /dev/shm
}

# loss N [BIG_M]: drop 1 in N UDP datagrams; optionally also 1 in BIG_M datagrams whose UDP
# length exceeds 8000 octets (those that carry fragments of large samples).
loss() {
    nft add table inet loss
    nft add chain inet loss in '{ type filter hook input priority 0; }'
    nft add rule inet loss in meta l4proto udp numgen random mod "$1" 0 drop
    if [ -n "${2:-}" ]; then
        nft add rule inet loss in udp length gt 8000 numgen random mod "$2" 0 drop
    fi
}

TD=
start_capture() {
    tcpdump -i lo -w "$1" -U -Z root udp 2>"$1.log" &
    TD=$!
    sleep 1
}

stop_capture() {
    sleep 0.5
    kill -INT "$TD"
    wait "$TD" || true
}

P1= P2=
wait_peers() {
    # Wait for the background peers only (not for tcpdump).
    for p in $P1 $P2; do wait "$p" || true; done
}

inner() {
    local scenario=$1 out=$2
    ns_setup
    unset CYCLONEDDS_URI FASTRTPS_DEFAULT_PROFILES_FILE FASTDDS_DEFAULT_PROFILES_FILE \
        ROS_DISCOVERY_SERVER || true
    mkdir -p "$WORK/$scenario" && cd "$WORK/$scenario"
    cp "$WORK/fastdds_pingpong" . 2>/dev/null || true
    case $scenario in
    cyclone-ddsperf)
        # Cyclone ddsperf ping/pong, reliable (ddsperf default), KS topic, 10 Hz; two ping
        # processes one after the other with 12-octet and 4 KiB payloads; 10 % loss.
        loss 10
        start_capture "$out"
        timeout 9 ddsperf -D7 pong >pong.log 2>&1 &
        P1=$!
        sleep 0.5
        timeout 4 ddsperf -D2 ping 10Hz size 0 >ping1.log 2>&1 || true
        timeout 4 ddsperf -D2 ping 10Hz size 4k >ping2.log 2>&1 || true
        wait_peers
        stop_capture
        ;;
    cyclone-ddsperf-frag)
        # Cyclone ddsperf pub/sub, reliable, 16 KiB samples at 5 Hz: each sample is 13
        # fragments of 1344 octets in two datagrams (max message size 14720). 10 % loss plus
        # 1 in 3 of the large datagrams.
        loss 10 3
        start_capture "$out"
        timeout 9 ddsperf -D6 sub >sub.log 2>&1 &
        P2=$!
        sleep 0.5
        timeout 5 ddsperf -D2 pub 5Hz size 16k >pub.log 2>&1 || true
        wait_peers
        stop_capture
        ;;
    fastdds)
        # Fast DDS 2.9 fastdds_pingpong pub/sub (UDPv4 only): 50 keyed + 10 unkeyed samples,
        # one of 70000 octets (DATA_FRAG, 65468-octet datagram), unregister + dispose,
        # endpoint and participant deletion. 10 % loss plus 1 in 2 of the large datagrams.
        loss 10 2
        start_capture "$out"
        timeout 14 ./fastdds_pingpong sub 12 >sub.log 2>&1 &
        P2=$!
        sleep 0.3
        timeout 12 ./fastdds_pingpong pub >pub.log 2>&1 || true
        wait_peers
        stop_capture
        ;;
    cyclone-fastdds)
        # Cross-vendor discovery: Cyclone ddsperf pong and the Fast DDS pub/sub pair in one
        # domain. Different topics, so only SPDP/SEDP and their HEARTBEAT/ACKNACK cross vendors.
        start_capture "$out"
        timeout 9 ddsperf -D6 pong >pong.log 2>&1 &
        P1=$!
        timeout 10 ./fastdds_pingpong sub 8 >sub.log 2>&1 &
        P2=$!
        sleep 0.3
        timeout 8 ./fastdds_pingpong pub >pub.log 2>&1 || true
        wait_peers
        stop_capture
        ;;
    *)
        echo "unknown scenario $scenario" >&2
        exit 3
        ;;
    esac
    cat ./*.log 2>/dev/null | tail -n 4 || true
}

if [ "${1:-}" = __inner ]; then
    inner "$2" "$3"
    exit 0
fi

# ---------------------------------------------------------------------------------------------
# Outside: build, run each scenario in fresh namespaces, trim, check.
# ---------------------------------------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
    echo "capture.sh: needs root (namespaces, nft, tcpdump)" >&2
    exit 1
fi
"$(dirname "$(readlink -f "$0")")/../../scripts/ensure-packages.sh" \
    cyclonedds-tools libfastrtps-dev libfastcdr-dev tcpdump nftables g++ python3 util-linux \
    iproute2
for t in ddsperf tcpdump nft g++ python3 unshare; do
    command -v "$t" >/dev/null || { echo "capture.sh: $t not found" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/rtps-captures.XXXXXX)
export WORK
trap 'rm -rf "$WORK"' EXIT

scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(cyclone-ddsperf cyclone-ddsperf-frag fastdds cyclone-fastdds)

for s in "${scenarios[@]}"; do
    case $s in
    fastdds | cyclone-fastdds)
        if [ ! -x "$WORK/fastdds_pingpong" ]; then
            echo "== building fastdds_pingpong"
            nice g++ -O1 -std=c++17 -o "$WORK/fastdds_pingpong" "$HERE/fastdds_pingpong.cpp" \
                -lfastrtps -lfastcdr -lpthread
        fi
        ;;
    esac
done

# Submessage kinds each capture must contain (otherwise the scenario is run again).
required() {
    case $1 in
    cyclone-ddsperf) echo DATA,HEARTBEAT,ACKNACK,INFO_TS,INFO_DST ;;
    cyclone-ddsperf-frag) echo DATA,DATA_FRAG,HEARTBEAT,HEARTBEAT_FRAG,ACKNACK,NACK_FRAG ;;
    fastdds) echo DATA,DATA_FRAG,HEARTBEAT,ACKNACK,GAP,NACK_FRAG,INFO_TS,INFO_DST ;;
    cyclone-fastdds) echo DATA,HEARTBEAT,ACKNACK ;;
    esac
}

for s in "${scenarios[@]}"; do
    ok=
    for attempt in 1 2 3 4; do
        echo "== $s (attempt $attempt)"
        raw="$WORK/$s.raw.pcap"
        rm -f "$raw"
        # Fresh network + mount namespaces; they disappear when the scenario's processes end.
        timeout 30 unshare --net --mount --propagation private -- "$0" __inner "$s" "$raw"
        tcpdump -r "$raw" -w "$HERE/$s.pcap" -c "$MAXPKTS" -Z root 2>/dev/null
        if python3 "$HERE/rtps_summary.py" --require "$(required "$s")" "$HERE/$s.pcap"; then
            ok=1
            break
        fi
    done
    [ -n "$ok" ] || echo "capture.sh: $s: required submessages still missing after 4 attempts" >&2
done
ls -l "$HERE"/*.pcap
