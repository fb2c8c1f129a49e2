"""One adapter per implementation: which processes a case needs (command lines) and how to get the
`tachyon-perf/1` record out of them. The runner does the rest (namespaces, pinning, timeouts)."""
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Optional

from . import ddsperf
from .scenarios import TACHYON_ONLY

# Seconds a passive side (pong, pub) is told to run beyond the measuring side's warm-up and
# measured part; it is stopped with SIGTERM as soon as the measuring side is done.
PASSIVE_SLACK_S = 15


@dataclass
class ProcSpec:
    """A process of a run. `side` is "a" (measuring: ping, sub) or "b" (pong, pub); the runner
    pins it to the placement's CPU for that side and puts it in that side's namespace."""

    role: str
    argv: list
    side: str
    measuring: bool
    json_path: Optional[str] = None
    env: dict = field(default_factory=dict)
    # The CPUs it runs on (`taskset -c`), instead of its side's: a process that is both sides.
    cpus: Optional[str] = None


@dataclass
class RunContext:
    domain: int
    port: int  # first of two free UDP ports (raw-UDP floor)
    net: object  # netns.Loopback or netns.VethPair
    path_prefix: str  # runs/<run name>, to which the adapter appends "-ping.json" etc.


class NoResult(Exception):
    """Raised by `Impl.record` when a run produced no valid result; the message says why."""


def _fmt(x):
    return f"{x:g}" if isinstance(x, float) else str(x)


def _tachyon_only(impl, case):
    """Why `impl` cannot run a case of a Tachyon-only scenario (None when it can)."""
    if case.scenario == "interference":
        want = "tachyon-xdp" if case.spec.transport == "xdp" else "tachyon"
        if impl.name == want:
            return None
        if impl.name.startswith("tachyon"):
            return f"the {case.spec.transport} cases are {want}'s"
    if case.scenario in TACHYON_ONLY and impl.name != "tachyon":
        return (f"{impl.label} has no critical writers (TRANSPORT_PRIORITY threshold), no bulk writer in "
                "the pinging participant and no discovery storm in its measuring program")
    return None


def _in_process(impl, case):
    """Why `impl` cannot run a case of the in-process scenario, or run one of the others (None
    when it can); the same for the same-host scenario."""
    family = impl.name.split("-")[0]
    if case.spec.kind in ("intra", "intra-2p") and impl.name not in ("tachyon", "hdds"):
        return f"{impl.label} has no write-then-take program in one process here"
    if case.spec.kind == "intra-2p" and impl.name == "hdds":
        return "HDDS's latency_benchmark has its writer and reader in one participant"
    if case.spec.kind == "intra-rt" and family not in ("tachyon", "fastdds"):
        return f"{impl.label} has no ping-pong in one process here"
    if case.spec.kind == "intra-rt" and impl.name in ("tachyon-busy-poll", "tachyon-watch"):
        return ("in one process Tachyon delivers on the writing thread: how its receive threads "
                "wait does not apply (the polling case polls `take`)")
    if not case.spec.kind.startswith("intra") and impl.name == "hdds":
        return "HDDS is measured in process only (scenario 8)"
    return _same_host(impl, case)


def _same_host(impl, case):
    """Why `impl` cannot run a case of the same-host scenario (9), or run one of the others;
    the same for the AF_XDP scenario (10)."""
    family = impl.name.split("-")[0]
    xdp_impl = impl.name.startswith("tachyon-xdp") or family == "xdp"
    if case.scenario == "xdp":
        if family in ("fastdds", "hdds", "iceoryx2") or impl.name == "tachyon-loan":
            return f"scenario 10 compares Tachyon, Cyclone DDS and the floors: not {impl.label}"
        return None
    if xdp_impl and case.scenario != "interference":
        return "AF_XDP is measured in scenarios 10 and 11 only (across a veth pair, as root)"
    if case.scenario != "shm":
        if family == "iceoryx2":
            return "iceoryx2 is measured between processes of one host only (scenario 9)"
        return None
    if case.spec.transport == "udp" and family != "tachyon":
        return "the UDP reference of the same-host targets is Tachyon's own"
    if family in ("cyclone", "udp"):
        return (f"{impl.label} has no shared memory here (Cyclone DDS 0.10 from Debian has no "
                "PSMX plugin; Cyclone DDS 11 moves same-host data through iceoryx, with its daemon)"
                if family == "cyclone" else "no DDS: the raw-UDP floor has no shared memory")
    return None


class Impl:
    name = "?"
    label = "?"

    def unavailable(self):
        """Why this implementation cannot run at all (None: it can)."""
        return None

    def unsupported(self, case):
        """Why this implementation cannot run `case` (None: it can)."""
        return None

    def deviations(self, case):
        """What of the case this implementation runs differently (listed in the report)."""
        return []

    def plan(self, case, ctx):
        raise NotImplementedError

    def record(self, case, ctx, procs):
        """The run's record from the finished processes (None when there is none)."""
        raise NotImplementedError

    def cleanup(self):
        pass


class BuiltPeer(Impl):
    """A program of another project that bench/build-peers.sh builds into `binary_path`."""

    binary_path = None

    def __init__(self, root):
        self.binary = os.path.join(root, self.binary_path)

    def unavailable(self):
        if not os.access(self.binary, os.X_OK):
            return f"{self.binary} not built (bench/build-peers.sh)"
        return None


# --- tachyon perf and programs with the same command line -----------------------------------------

class PerfProgram(Impl):
    """`tachyon perf` and `fastdds_perf`: the same options, the same JSON (docs/perf.md)."""

    build_hint = ""
    # The program, relative to the repository root, and the words before its mode.
    binary_path = None
    subcommand = ()

    def __init__(self, root):
        self.root = root
        if self.binary_path:
            self.binary = os.path.join(root, self.binary_path)

    @property
    def argv0(self):
        return [self.binary, *self.subcommand]

    def unavailable(self):
        if not os.access(self.binary, os.X_OK):
            return f"{self.binary} not built{self.build_hint}"
        return None

    def unsupported(self, case):
        return _tachyon_only(self, case) or _in_process(self, case)

    def common_options(self, spec, ctx):
        o = ["--domain", str(ctx.domain), "--size", str(spec.size), "--type", spec.type,
             "--reliability", spec.reliability, "--history", spec.history,
             "--delivery", spec.delivery, "--keys", str(spec.keys), "--quiet"]
        if spec.history == "keep-last":
            o += ["--depth", str(spec.depth)]
        if spec.unicast:
            o.append("--unicast")
        return o

    def measuring_options(self, spec, json_path):
        o = ["--duration", _fmt(spec.duration), "--warmup", _fmt(spec.warmup), "--json", json_path]
        if spec.count is not None:
            o += ["--count", str(spec.count)]
        return o

    def passive_options(self, spec):
        seconds = spec.warmup + spec.measured_seconds() + PASSIVE_SLACK_S
        return ["--duration", _fmt(float(seconds)), "--warmup", _fmt(spec.warmup)]

    def subscriber_options(self, n):
        return ["--subscribers", str(n)]

    def rate_options(self, spec):
        o = []
        if spec.rate:
            o += ["--rate", _fmt(spec.rate)]
        if spec.burst != 1:
            o += ["--burst", str(spec.burst)]
        return o

    def plan(self, case, ctx):
        spec = case.spec
        common = self.common_options(spec, ctx)
        if spec.kind in ("intra", "intra-2p"):
            # In one participant, as HDDS's benchmark has them; or in two.
            path = f"{ctx.path_prefix}-write-take.json"
            one = ["--same-participant"] if spec.kind == "intra" else []
            return [ProcSpec("write-take", self.argv0 + ["write-take"] + one + common
                             + self.measuring_options(spec, path), "a", True, path)]
        if spec.kind == "intra-rt":
            # Ping and pong in one process: on the measuring vCPU, or on both when they differ.
            path = f"{ctx.path_prefix}-intra.json"
            pl = case.placement
            cpus = str(pl.active_cpu) if pl.active_cpu == pl.passive_cpu else f"{pl.active_cpu},{pl.passive_cpu}"
            return [ProcSpec("intra", self.argv0 + ["intra"] + common + self.rate_options(spec)
                             + self.subscriber_options(1) + self.measuring_options(spec, path),
                             "a", True, path, cpus=cpus)]
        if spec.kind == "latency":
            ping_json = f"{ctx.path_prefix}-ping.json"
            return [
                ProcSpec("pong", self.argv0 + ["pong"] + common + self.passive_options(spec), "b", False),
                ProcSpec("ping", self.argv0 + ["ping"] + common + self.rate_options(spec)
                         + self.subscriber_options(1) + self.measuring_options(spec, ping_json),
                         "a", True, ping_json),
            ]
        subs = []
        for i in range(spec.subscribers):
            path = f"{ctx.path_prefix}-sub{i}.json"
            subs.append(ProcSpec(f"sub{i}", self.argv0 + ["sub"] + common
                                 + self.measuring_options(spec, path), "a", True, path))
        pub = ProcSpec("pub", self.argv0 + ["pub"] + common + self.rate_options(spec)
                       + self.subscriber_options(spec.subscribers) + self.passive_options(spec), "b", False)
        return subs + [pub]

    def record(self, case, ctx, procs):
        records = []
        for p in procs:
            if p.spec.measuring:
                rec = _load_json(p.spec.json_path)
                if rec is None:
                    return None
                records.append(rec)
        return merge_subscribers(records)


# Scenario 7: the SCHED_FIFO priority of the critical threads (`tachyon perf --rt-priority`).
ISOLATION_RT_PRIORITY = 50


# `--tachyon-wake busy-poll`: how long Tachyon's receiving threads spin before blocking.
TACHYON_BUSY_POLL = "1ms"


class Tachyon(PerfProgram):
    name = "tachyon"
    label = "Tachyon"
    build_hint = " (cargo build --release -p tachyon-cli, or run.py --build)"

    def __init__(self, root, wake="blocking"):
        super().__init__(root)
        self.binary = os.path.join(root, "target/release/tachyon")
        self.wake = wake
        if wake != "blocking":
            self.name = f"tachyon-{wake}"
            self.label = "Tachyon (watch, the default)" if wake == "watch" else f"Tachyon ({wake})"

    def unsupported(self, case):
        only = _tachyon_only(self, case) or _in_process(self, case)
        if only:
            return only
        if self.wake == "busy-poll" and case.placement.active_cpu == case.placement.passive_cpu:
            return "busy polling needs a vCPU per process (on one, each end spins away the other's time)"
        return None

    def transport(self, spec):
        """Its `--transport`: the scenario's (scenario 10's plain Tachyon runs over UDP)."""
        return "udp" if spec.transport == "xdp" else spec.transport

    def common_options(self, spec, ctx):
        o = super().common_options(spec, ctx) + ["--transport", self.transport(spec)]
        if self.wake == "busy-poll":
            o += ["--busy-poll", TACHYON_BUSY_POLL]
        elif self.wake == "blocking":
            # Block at once, as Cyclone DDS's receive threads do (the default watches first).
            o += ["--spin", "0us"]
        return o

    @property
    def argv0(self):
        return [self.binary, "perf"]

    # Scenario 7: the bulk writer's topic, read by a `perf sub --topic` of its own.
    BULK_TOPIC = "DDSPerfRBulkKS"

    # Scenario 11: the reserved queue of the veth ends (`tachyon xdp setup --queues 2`).
    RESERVED_QUEUE = 1

    def plan(self, case, ctx):
        spec = case.spec
        if case.scenario not in ("isolation", "interference"):
            return super().plan(case, ctx)
        # The critical lane as a user would set it up: its receive threads (and the pinging
        # thread) SCHED_FIFO, above the bulk writer, the discovery work and the load.
        common = self.common_options(spec, ctx) + (
            ["--critical", "--rt-priority", str(ISOLATION_RT_PRIORITY)] if spec.critical else [])
        if case.scenario == "interference" and self.transport(spec) == "xdp":
            common += ["--xdp-queue", str(self.RESERVED_QUEUE)]
        procs = [ProcSpec("pong", self.argv0 + ["pong"] + common + self.passive_options(spec), "b", False)]
        if spec.load == "iperf3":
            # The server (one client, then it exits) beside the pong; the client beside the
            # ping, sending both ways for longer than the measured part.
            seconds = int(spec.warmup + spec.measured_seconds() + PASSIVE_SLACK_S)
            port = str(ctx.port)
            procs.append(ProcSpec("iperf3-server", ["iperf3", "-s", "-1", "-p", port], "b", False))
            procs.append(ProcSpec("iperf3-client", [
                "iperf3", "-c", ctx.net.address("b"), "-p", port, "-u", "-b", "0",
                "-l", str(spec.size), "--bidir", "-t", str(seconds)], "a", False))
        ping_extra = []
        if spec.bulk_size:
            path = f"{ctx.path_prefix}-bulk.json"
            procs.append(ProcSpec("bulk-sub", self.argv0 + [
                "sub", "--topic", self.BULK_TOPIC, "--domain", str(ctx.domain), "--size", str(spec.bulk_size),
                # One process per interface holds the XDP program (the pong's): the bulk
                # subscriber beside it receives over kernel UDP.
                "--transport", "udp" if self.transport(spec) == "xdp" else self.transport(spec),
                "--type", spec.type, "--reliability", "reliable", "--history", "keep-all",
                "--delivery", spec.delivery, "--quiet"] + self.measuring_options(spec, path), "b", True, path))
            ping_extra = ["--bulk-size", str(spec.bulk_size), "--bulk-topic", self.BULK_TOPIC]
        ping_json = f"{ctx.path_prefix}-ping.json"
        procs.append(ProcSpec("ping", self.argv0 + ["ping"] + common + self.rate_options(spec) + ping_extra
                              + self.subscriber_options(1) + self.measuring_options(spec, ping_json),
                              "a", True, ping_json))
        if spec.storm:
            # Silent during the ping's warm-up, then announcing until after the measured part
            # (it is stopped, and writes its record, when the measuring processes are done).
            path = f"{ctx.path_prefix}-storm.json"
            seconds = spec.measured_seconds() + PASSIVE_SLACK_S
            procs.append(ProcSpec("storm", self.argv0 + [
                "storm", "--domain", str(ctx.domain), "--participants", str(spec.storm),
                "--announce-period", _fmt(spec.storm_period), "--warmup", _fmt(spec.warmup),
                "--duration", _fmt(float(seconds)), "--quiet", "--json", path], "b", False, path))
        return procs

    def record(self, case, ctx, procs):
        if case.scenario not in ("isolation", "interference"):
            return super().record(case, ctx, procs)
        by_role = {p.spec.role: p.spec for p in procs}
        rec = _load_json(by_role["ping"].json_path)
        if rec is None:
            return None
        spec = case.spec
        if spec.bulk_size:
            bulk = rec.get("bulk")
            if not bulk or not bulk.get("samples"):
                raise NoResult("the bulk writer wrote nothing during the measured part: the load was not there")
            sub = _load_json(by_role["bulk-sub"].json_path)
            if sub is None or not sub.get("throughput"):
                raise NoResult("the bulk subscriber wrote no record")
            rec["bulk_received"] = sub["throughput"]
        if spec.storm:
            storm = _load_json(by_role["storm"].json_path)
            if storm is None or not (storm.get("storm") or {}).get("announcements"):
                raise NoResult("the storm announced nothing (see its log)")
            rec["storm"] = storm["storm"]
        return rec


class TachyonXdp(Tachyon):
    """Tachyon with `--transport xdp` (scenario 10): user data through an AF_XDP socket on the
    veth end of each namespace (the interface the UDP transport chooses there), discovery over
    kernel UDP; waiting in poll(), or spinning on the RX ring (`--busy-poll`)."""

    def __init__(self, root, wake="blocking"):
        super().__init__(root, wake)
        self.name = "tachyon-xdp" if wake == "blocking" else f"tachyon-xdp-{wake}"
        self.label = {"blocking": "Tachyon AF_XDP (poll)",
                      "watch": "Tachyon AF_XDP (watch, then poll: the default)"}.get(
                          wake, f"Tachyon AF_XDP ({wake})")

    def unavailable(self):
        missing = super().unavailable()
        if missing:
            return missing
        if os.geteuid() != 0:
            return "AF_XDP needs root (or CAP_NET_ADMIN, CAP_BPF, ...: docs/xdp.md)"
        return None

    def unsupported(self, case):
        if case.scenario == "interference":
            return super().unsupported(case) if self.wake == "blocking" else \
                "the interference cases wait in poll() (a spinning SCHED_FIFO thread would starve its vCPU)"
        if self.wake == "watch" and case.spec.rate:
            return "the bound runs waiting in poll() and spinning (at 1000/s a watch catches nothing)"
        if case.scenario != "xdp":
            return "AF_XDP is measured in scenarios 10 and 11 only (across a veth pair, as root)"
        return super().unsupported(case)

    def transport(self, spec):
        return "xdp"


class FastDds(PerfProgram):
    name = "fastdds"
    label = "Fast DDS"
    build_hint = " (bench/build-peers.sh)"
    binary_path = "target/bench/fastdds_perf"

    def common_options(self, spec, ctx):
        # Shared memory in the same-host scenario: Fast DDS's builtin transports, as it runs by
        # default; UDPv4 alone everywhere else.
        return super().common_options(spec, ctx) + ["--transport", "shm" if spec.transport == "shm" else "udp"]

    def cleanup(self):
        # Killed Fast DDS processes leave shared-memory segments behind (shared/FACTS.md).
        if shutil.which("fastdds"):
            subprocess.run(["fastdds", "shm", "clean"], capture_output=True, check=False)


class UdpFloor(PerfProgram):
    """`tachyon floor`: raw UDP ping/pong and flood, no DDS: the floor under every DDS figure."""

    name = "udp"
    label = "raw UDP"
    MAX_DATAGRAM = 65507

    xdp = False

    def __init__(self, root, wake="blocking"):
        super().__init__(root)
        self.binary = os.path.join(root, "target/release/tachyon")
        self.wake = wake
        if wake != "blocking":
            self.name = f"udp-{wake}"
            self.label = f"raw UDP ({wake})"

    @property
    def argv0(self):
        return [self.binary, "floor"]

    def unavailable(self):
        missing = super().unavailable()
        if missing:
            return missing
        r = subprocess.run([self.binary, "floor", "--help"], capture_output=True, check=False)
        if r.returncode != 0:
            return f"{self.binary} has no `floor` command yet"
        return None

    def unsupported(self, case):
        only = _tachyon_only(self, case) or _in_process(self, case)
        if only:
            return only
        if case.scenario in ("fanout", "variants"):
            return "no DDS: no subscribers to fan out to, no types or delivery modes"
        if case.spec.size > self.MAX_DATAGRAM:
            return f"{case.spec.size} B does not fit one UDP datagram"
        if self.wake == "busy-poll" and case.placement.active_cpu == case.placement.passive_cpu:
            return "busy polling needs a vCPU per process (on one, each end spins away the other's time)"
        if case.scenario == "xdp" and case.spec.rate and not self.xdp:
            # The raw AF_XDP floor's bound is the machine's own: what a program with no DDS
            # at all gets at 1 kHz on this link (Tachyon's max / mean is read against it).
            return "the raw UDP floor's bound is not measured (the AF_XDP floor's is the machine's own)"
        return None

    def common_options(self, spec, ctx):
        return ["--size", str(spec.size), "--wake", self.wake, "--quiet"]

    def subscriber_options(self, n):
        return []

    def plan(self, case, ctx):
        procs = super().plan(case, ctx)
        net = ctx.net
        if self.xdp:
            for p in procs:
                p.argv += ["--xdp-interface", net.dev[p.side]]
        a = f"{net.address('a')}:{ctx.port}"
        b = f"{net.address('b')}:{ctx.port + 1}"
        for p in procs:
            p.argv += ["--bind", a, "--peer", b] if p.side == "a" else ["--bind", b, "--peer", a]
        return procs


class Iceoryx2(BuiltPeer):
    """iceoryx2 0.10 (crates.io), `bench/peers/iceoryx2_ping` built by bench/build-peers.sh: a
    ping-pong through publish-subscribe services of `[u8]` slices, both sides busy-waiting on
    `receive` (the way its own benchmark runs), so only with a vCPU per process."""

    name = "iceoryx2"
    label = "iceoryx2"
    binary_path = "target/bench/iceoryx2_ping"

    def unsupported(self, case):
        why = _tachyon_only(self, case) or _in_process(self, case)
        if why:
            return why
        if case.scenario != "shm":
            return "iceoryx2 is measured between processes of one host only (scenario 9)"
        if case.placement.active_cpu == case.placement.passive_cpu:
            return "it busy-waits: on one vCPU each end spins away the other's time"
        return None

    def deviations(self, case):
        return ["no DDS: raw publish-subscribe of byte slices, no reliability protocol; both sides busy-wait"]

    def plan(self, case, ctx):
        spec = case.spec
        service = ["--service", f"tachyon-bench-{ctx.domain}-{os.getpid()}", "--size", str(spec.size)]
        ping_json = f"{ctx.path_prefix}-ping.json"
        seconds = spec.warmup + spec.measured_seconds() + PASSIVE_SLACK_S
        return [
            ProcSpec("pong", [self.binary, "pong", "--duration", _fmt(float(seconds)), "--warmup", "0"]
                     + service, "b", False),
            ProcSpec("ping", [self.binary, "ping", "--duration", _fmt(spec.duration),
                              "--warmup", _fmt(spec.warmup), "--json", ping_json] + service,
                     "a", True, ping_json),
        ]

    def record(self, case, ctx, procs):
        return _load_json(procs[-1].spec.json_path)


def _load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def merge_subscribers(records):
    """One record for a run: the ping's, or the subscribers' merged (throughput per subscriber
    is the mean over them; samples, bytes and lost are summed; each is kept in `per_subscriber`)."""
    if not records:
        return None
    if len(records) == 1:
        return records[0]
    first = dict(records[0])
    tps = [r.get("throughput") for r in records]
    if any(t is None for t in tps):
        return None
    n = len(tps)
    first["throughput"] = {
        "samples": sum(t["samples"] for t in tps),
        "lost": sum(t["lost"] for t in tps),
        "bytes": sum(t["bytes"] for t in tps),
        "seconds": max(t["seconds"] for t in tps),
        "samples_per_s": sum(t["samples_per_s"] for t in tps) / n,
        "mbit_per_s": sum(t["mbit_per_s"] for t in tps) / n,
        "aggregate_samples_per_s": sum(t["samples_per_s"] for t in tps),
        "aggregate_mbit_per_s": sum(t["mbit_per_s"] for t in tps),
        "per_subscriber": tps,
    }
    return first


# --- Cyclone DDS: cyclone_ping (latency) and ddsperf (throughput) -------------------------------

class CyclonePing(PerfProgram):
    """`target/bench/cyclone_ping` (bench/peers/cyclone_ping.c): ping and pong on Cyclone DDS's C
    API with `tachyon perf`'s options and JSON, every round trip kept (full distribution)."""

    name = "cyclone"
    label = "Cyclone DDS"
    build_hint = " (bench/build-peers.sh)"
    binary_path = "target/bench/cyclone_ping"


# The sizes of `tachyon perf --type fixed` (its fixed-size types).
LOAN_SIZES = (32, 1024, 64 * 1024, 1024 * 1024, 4 * 1024 * 1024)


class XdpFloor(UdpFloor):
    """`tachyon floor --xdp-interface`: the raw AF_XDP ping-pong (no DDS), each side on its
    veth end, waiting in poll() or spinning on the RX ring: the floor of scenario 10."""

    xdp = True

    def __init__(self, root, wake="blocking"):
        super().__init__(root, wake)
        self.name = "xdp" if wake == "blocking" else f"xdp-{wake}"
        self.label = "raw AF_XDP (poll)" if wake == "blocking" else f"raw AF_XDP ({wake})"

    def unavailable(self):
        if os.geteuid() != 0:
            return "AF_XDP needs root"
        return super().unavailable()

    def unsupported(self, case):
        if case.scenario != "xdp":
            return "AF_XDP is measured in scenario 10 only (across a veth pair, as root)"
        if case.spec.size > 1472:
            return f"{case.spec.size} B does not fit one Ethernet frame (the floor sends one datagram)"
        return super().unsupported(case)


class TachyonLoan(Tachyon):
    """Tachyon writing loaned samples of a fixed-size type in place and taking them in place
    (`tachyon perf --type fixed --loan`): nothing copied or serialized between the processes.
    Scenario 9 only, through shared memory. Always blocking (`--spin 0us`, whatever
    `--tachyon-wake` says), as its targets' reference, Tachyon over UDP, runs: its label says
    so, next to the watching or busy-polling cases."""

    def __init__(self, root):
        super().__init__(root)
        self.name = "tachyon-loan"
        self.label = "Tachyon (loaned, blocking)"

    def unsupported(self, case):
        if case.scenario != "shm" or case.spec.transport != "shm":
            return "loans are measured between processes of one host, through shared memory (scenario 9)"
        if case.spec.size not in LOAN_SIZES:
            return f"tachyon perf has no fixed-size type of {case.spec.size} bytes"
        return super().unsupported(case)

    def common_options(self, spec, ctx):
        o = super().common_options(spec, ctx)
        o[o.index("--type") + 1] = "fixed"
        return o + ["--loan"]


class Cyclone(Impl):
    """Cyclone DDS 0.10.2. Latency runs use cyclone_ping on both sides when it is built (exact
    percentiles, p99.9 and max, the harness's QoS); otherwise, and for throughput, `ddsperf`,
    whose per-second lines `ddsperf.py` converts (approximate percentiles, no p99.9)."""

    name = "cyclone"
    label = "Cyclone DDS"
    binary = "/usr/bin/ddsperf"

    def __init__(self, root):
        self.ping = CyclonePing(root)

    def _ddsperf_missing(self):
        if not os.access(self.binary, os.X_OK):
            return f"{self.binary} not installed (apt-get install cyclonedds-tools, or bench/build-peers.sh)"
        return None

    def uses_cyclone_ping(self, case):
        return case.spec.kind == "latency" and self.ping.unavailable() is None

    def unavailable(self):
        ping_missing, ddsperf_missing = self.ping.unavailable(), self._ddsperf_missing()
        if ping_missing and ddsperf_missing:
            return f"{ddsperf_missing}; {ping_missing}"
        return None

    def unsupported(self, case):
        only = _tachyon_only(self, case) or _in_process(self, case)
        if only:
            return only
        if self.uses_cyclone_ping(case):
            return None
        missing = self._ddsperf_missing()
        if missing:
            return missing
        if case.spec.type != "simple":
            return "ddsperf has no equivalent of the complex type"
        return None

    def deviations(self, case):
        spec = case.spec
        if spec.kind == "latency" and spec.history != "keep-last" and not self.uses_cyclone_ping(case):
            return ["ddsperf's ping and pong are always KEEP_LAST(1)"]
        return []

    def env(self, spec, subscribers):
        if not spec.unicast:
            return {}
        # No multicast: unicast discovery to this host's participant ports.
        uri = ("<CycloneDDS><Domain id=\"any\"><General><AllowMulticast>false</AllowMulticast></General>"
               "<Discovery><ParticipantIndex>auto</ParticipantIndex>"
               f"<MaxAutoParticipantIndex>{subscribers + 10}</MaxAutoParticipantIndex>"
               "<Peers><Peer address=\"localhost\"/></Peers></Discovery></Domain></CycloneDDS>")
        return {"CYCLONEDDS_URI": uri}

    def global_options(self, spec, ctx, seconds):
        o = [self.binary, "-i", str(ctx.domain), "-D", str(int(seconds))]
        if spec.reliability == "best-effort":
            o.append("-u")
        if spec.kind == "throughput":
            o += ["-k", "all"] if spec.history == "keep-all" else ["-k", str(spec.depth)]
        return o

    def plan(self, case, ctx):
        if self.uses_cyclone_ping(case):
            return self.ping.plan(case, ctx)
        spec = case.spec
        env = self.env(spec, spec.subscribers)
        measuring_s = ddsperf.run_seconds(spec)
        passive_s = measuring_s + PASSIVE_SLACK_S
        if spec.kind == "latency":
            rate = [f"{_fmt(spec.rate)}Hz"] if spec.rate else []
            return [
                ProcSpec("pong", self.global_options(spec, ctx, passive_s) + ["pong", spec.delivery],
                         "b", False, env=env),
                ProcSpec("ping", self.global_options(spec, ctx, measuring_s)
                         + ["ping"] + rate + ["size", str(spec.size), spec.delivery], "a", True, env=env),
            ]
        subs = [ProcSpec(f"sub{i}", self.global_options(spec, ctx, measuring_s + 1) + ["sub", spec.delivery],
                         "a", True, env=env) for i in range(spec.subscribers)]
        wait = [f"-Qminmatch:{spec.subscribers}", "-Qinitwait:10"]
        rate = [f"{_fmt(spec.rate)}Hz"] if spec.rate else []
        burst = ["burst", str(spec.burst)] if spec.burst != 1 else []
        pub = ProcSpec("pub", self.global_options(spec, ctx, passive_s) + wait
                       + ["pub"] + rate + ["size", str(spec.size)] + burst, "b", False, env=env)
        return subs + [pub]

    def config(self, case):
        spec = case.spec
        history = "keep-last" if spec.kind == "latency" else spec.history
        return {"size": spec.size, "payload_bytes": max(spec.size, 12), "type": spec.type,
                "reliability": spec.reliability, "history": history,
                "depth": 1 if spec.kind == "latency" else spec.depth, "durability": "volatile",
                "keys": spec.keys, "rate": spec.rate, "burst": spec.burst, "delivery": spec.delivery,
                "multicast": not spec.unicast, "subscribers": spec.subscribers,
                "warmup_s": spec.warmup, "duration_s": spec.measured_seconds()}

    def record(self, case, ctx, procs):
        if self.uses_cyclone_ping(case):
            return self.ping.record(case, ctx, procs)
        role = "ping" if case.spec.kind == "latency" else "sub"
        records = []
        for p in procs:
            if p.spec.measuring:
                rec = ddsperf.record(role, case.spec, self.config(case), p.output())
                if rec is None:
                    return None
                records.append(rec)
        return merge_subscribers(records)


class Hdds(BuiltPeer):
    """HDDS 1.1.2's own `latency_benchmark` example (crates.io `hdds`, built by
    bench/build-peers.sh): one participant, its writer and reader bound to each other in memory,
    best effort, keep-last 1, 1,000 messages of warm-up then 10,000 measured, each written and
    taken on one thread, the time from before the write to after the take. It prints min, mean,
    p50, p95, p99 and max; the record takes those."""

    name = "hdds"
    label = "HDDS"
    binary_path = "target/bench/hdds_latency_benchmark"

    def unsupported(self, case):
        why = _tachyon_only(self, case) or _in_process(self, case)
        if why:
            return why
        if case.spec.size != 16:
            return "HDDS's benchmark writes one type only, of 16 B"
        return None

    def deviations(self, case):
        return ["its own example program: one participant, writer and reader bound in memory; "
                "10,000 messages after 1,000 of warm-up (not --duration); no p90, p99.9 or histogram"]

    def plan(self, case, ctx):
        return [ProcSpec("latency_benchmark", [self.binary], "a", True)]

    def record(self, case, ctx, procs):
        return parse_hdds(procs[0].output())


# The lines of HDDS's latency_benchmark the record takes, and their keys.
HDDS_LINES = {"Messages:": "count", "Min latency:": "min", "Mean latency:": "mean",
              "p50 latency:": "p50", "p99 latency:": "p99", "Max latency:": "max"}


def parse_hdds(text):
    """The `tachyon-perf/1` record of a latency_benchmark run from what it printed."""
    found = {}
    for line in text.splitlines():
        line = line.strip()
        for prefix, key in HDDS_LINES.items():
            if line.startswith(prefix):
                words = line[len(prefix):].split()
                try:
                    found[key] = int(words[0])
                except (IndexError, ValueError):
                    raise NoResult(f"cannot read {line!r}") from None
    missing = [k for k in HDDS_LINES.values() if k not in found]
    if missing:
        raise NoResult("latency_benchmark printed no " + ", ".join(missing))
    latency = {"count": found.pop("count"), "lost": 0, "p90": None, "p99_9": None, "p99_99": None,
               "stddev": None, **found}
    return {"schema": "tachyon-perf/1", "implementation": "hdds", "role": "write-take",
            "config": {"size": 16, "payload_bytes": 16, "reliability": "best-effort",
                       "history": "keep-last", "depth": 1},
            "latency": latency, "histogram": None, "throughput": None, "timeline": [],
            "process": {}}


def all_impls(root, udp_wakes=("blocking",), binaries=None, tachyon_wakes=("blocking",)):
    """Every adapter; `binaries` ({"tachyon": path, ...}) replaces the default programs
    (the udp floor is `tachyon floor`: it follows "tachyon" unless "udp" is given; "cyclone" is
    ddsperf, "cyclone_ping" Cyclone's latency program)."""
    binaries = binaries or {}
    impls = [Tachyon(root, wake) for wake in tachyon_wakes] + [TachyonLoan(root)]
    # Over AF_XDP: waiting in poll() at once and spinning always; watching the ring before
    # poll() (the default) only when asked for (`--tachyon-wake watch`).
    xdp_wakes = ("blocking", "busy-poll") + (("watch",) if "watch" in tachyon_wakes else ())
    impls += [TachyonXdp(root, wake) for wake in xdp_wakes] + [Cyclone(root), FastDds(root)]
    impls += [UdpFloor(root, wake) for wake in udp_wakes]
    impls += [XdpFloor(root, wake) for wake in ("blocking", "busy-poll")] + [Hdds(root), Iceoryx2(root)]
    for impl in impls:
        family = impl.name.split("-")[0]
        path = binaries.get(family) or (binaries.get("tachyon") if family in ("udp", "xdp") else None)
        if path:
            impl.binary = os.path.abspath(path)
        if family == "cyclone" and binaries.get("cyclone_ping"):
            impl.ping.binary = os.path.abspath(binaries["cyclone_ping"])
    return impls
