#!/usr/bin/env python3
"""Discovery without multicast, through a discovery server: Fast DDS's protocol, both ways.

For each server -- Fast DDS's own (`fastdds discovery`, Debian's fastdds-tools) and Tachyon's
(`tachyon discovery-server`) -- and each pair of clients (Tachyon and Fast DDS, publisher >
subscriber, all four), it starts the server, then a subscriber and a publisher of the interop
peers (interop/peers/peer_options.h) as its clients: ROS_DISCOVERY_SERVER names the server,
as ROS 2 users set it, and Tachyon's multicast is off. The publisher writes 3 reliable
samples; the case passes when the subscriber receives all of them and the publisher sees them
acknowledged. It prints how long the pair took to match.

Run it where multicast cannot work at all, to show nothing depends on it: scripts/test.sh
runs it in a network namespace whose loopback has no multicast route. It refuses to run
unless TACHYON_TEST_NETNS=1.

    interop/discovery_server.py --tachyon target/debug/tachyon
        --peer tachyon=target/debug/tachyon_peer --peer fastdds=target/interop/fastdds_peer
        [--fastdds-server fastdds] [--logs DIR]
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SHORT = {"tachyon": "T", "fastdds": "F"}
PORT = 11811
SAMPLES = 3


def start_server(kind, args, log):
    if kind == "fastdds":
        argv = [args.fastdds_server, "discovery", "-i", "0", "-l", "127.0.0.1", "-p", str(PORT)]
    else:
        argv = [args.tachyon, "discovery-server", "-i", "0", "-p", str(PORT)]
    p = subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True)
    time.sleep(0.5)
    if p.poll() is not None:
        raise RuntimeError(f"{kind} server exited at once (status {p.returncode}): see {log.name}")
    return p


def stop(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def run_case(server, pub, sub, args, env, logs):
    """Returns (passed, seconds to match, detail)."""
    topic = f"ds_{server}_{SHORT[pub]}{SHORT[sub]}"
    name = f"{server}-server_{SHORT[pub]}-{SHORT[sub]}"
    with open(os.path.join(logs, name + ".server.log"), "w") as slog:
        srv = start_server(server, args, slog)
        try:
            start = time.monotonic()
            sub_p = subprocess.Popen(
                [args.peers[sub], "sub", "--topic", topic, "--expect", str(SAMPLES),
                 "--timeout-s", "15"],
                stdout=subprocess.PIPE, stderr=open(os.path.join(logs, name + ".sub.log"), "w"),
                text=True, env=env)
            pub_p = subprocess.Popen(
                [args.peers[pub], "pub", "--topic", topic, "--count", str(SAMPLES),
                 "--wait-match", "1", "--timeout-s", "15"],
                stdout=subprocess.PIPE, stderr=open(os.path.join(logs, name + ".pub.log"), "w"),
                text=True, env=env)
            matched = None
            pub_lines = []
            for line in pub_p.stdout:
                pub_lines.append(line.strip())
                if line.startswith("MATCHED") and matched is None:
                    matched = time.monotonic() - start
            pub_p.wait(timeout=20)
            sub_out, _ = sub_p.communicate(timeout=20)
        finally:
            stop(srv)
    sub_lines = [l.strip() for l in sub_out.splitlines()]
    got = sum(1 for l in sub_lines if l.startswith("SAMPLE") and l.endswith("ok"))
    ok = (got == SAMPLES and "ACKED" in pub_lines and pub_p.returncode == 0
          and sub_p.returncode == 0)
    detail = f"pub: {' | '.join(pub_lines)}; sub: {' | '.join(sub_lines)}"
    return ok, matched, detail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tachyon", required=True, help="the tachyon command (discovery-server)")
    ap.add_argument("--peer", action="append", default=[], help="NAME=PATH (tachyon, fastdds)")
    ap.add_argument("--fastdds-server", default="fastdds", help="Fast DDS's `fastdds` tool")
    ap.add_argument("--logs", default=None, help="keep the processes' logs here")
    args = ap.parse_args()
    if os.environ.get("TACHYON_TEST_NETNS") != "1":
        sys.exit("refusing to run outside an isolated network namespace (TACHYON_TEST_NETNS=1)")
    args.peers = dict(p.split("=", 1) for p in args.peer)
    for need in ("tachyon", "fastdds"):
        if need not in args.peers:
            sys.exit(f"--peer {need}=PATH is needed")
    servers = ["tachyon"]
    if shutil.which(args.fastdds_server):
        servers.insert(0, "fastdds")
    else:
        print(f"skipped: the Fast DDS server ({args.fastdds_server}, Debian's fastdds-tools) "
              "is not installed; only Tachyon's server runs")
    logs = args.logs or tempfile.mkdtemp(prefix="tachyon-ds-")
    os.makedirs(logs, exist_ok=True)
    config = os.path.join(logs, "multicast_off.toml")
    with open(config, "w") as f:
        f.write('[udp]\nmulticast = "off"\n')
    env = dict(os.environ, ROS_DISCOVERY_SERVER=f"127.0.0.1:{PORT}", TACHYON_CONFIG=config)
    failed = 0
    for server in servers:
        for pub, sub in [("tachyon", "fastdds"), ("fastdds", "tachyon"),
                         ("tachyon", "tachyon"), ("fastdds", "fastdds")]:
            ok, matched, detail = run_case(server, pub, sub, args, env, logs)
            when = f"matched in {matched:.2f} s" if matched is not None else "never matched"
            pair = f"{SHORT[pub]}>{SHORT[sub]}"
            print(f"{server} server, {pair}: {'pass' if ok else 'FAIL'} ({when})", flush=True)
            if not ok:
                failed += 1
                print(f"  {detail}\n  logs: {logs}", flush=True)
    total = 4 * len(servers)
    print(f"{total - failed} of {total} passed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
