"""The matrix: scenarios, their cases (one table block each) and the time they take."""
from dataclasses import dataclass, field, replace
from typing import Optional

KIB = 1024


@dataclass(frozen=True)
class Spec:
    """What one run measures; maps one to one onto `tachyon perf`'s options."""

    # "latency" (ping/pong), "throughput" (pub/sub); in one process (scenario 8): "intra"
    # (write, then take on the same thread, writer and reader in one participant), "intra-2p"
    # (the same in two participants) and "intra-rt" (ping and pong as two participants)
    kind: str
    size: int
    type: str = "simple"
    reliability: str = "reliable"
    history: str = "keep-last"
    depth: int = 1
    delivery: str = "listener"
    rate: Optional[float] = None
    burst: int = 1
    duration: float = 5.0
    warmup: float = 1.0
    count: Optional[int] = None
    subscribers: int = 1
    unicast: bool = False
    keys: int = 1
    # Scenario 7 (isolation): the ping and pong writers critical (`--critical`); a bulk writer
    # of this many octets per sample in the pinging participant (`--bulk-size`) to a `sub` of
    # its own; a discovery storm of this many fake participants (`perf storm`), each announced
    # every `storm_period` seconds.
    critical: bool = False
    bulk_size: Optional[int] = None
    storm: int = 0
    storm_period: float = 1.0
    # Scenario 11 (interference): a load on the same link besides the critical ping, "iperf3"
    # (bidirectional UDP as fast as it goes, datagrams of the ping's size).
    load: Optional[str] = None
    # Tachyon's `--transport`: kernel UDP wherever the others run on it (scenarios 1-7: the
    # same path for everyone; by default Tachyon would take shared memory between two
    # processes of the host); "auto" in process (scenario 8).
    transport: str = "udp"

    def measured_seconds(self):
        """Seconds the measured part is expected to take."""
        if self.count is not None and self.rate:
            return min(self.count / self.rate, self.duration)
        return self.duration


@dataclass(frozen=True)
class Placement:
    """CPUs of the measuring side (ping, sub) and of the other side (pong, pub)."""

    name: str
    label: str
    active_cpu: int
    passive_cpu: int


SAME = Placement("same", "same vCPU", 0, 0)
SPLIT = Placement("split", "two vCPUs", 0, 1)
PLACEMENTS = {"same": SAME, "split": SPLIT}


@dataclass(frozen=True)
class Case:
    """One row group of a summary table: a spec, a placement and a network."""

    scenario: str
    case_id: str
    label: str
    spec: Spec
    placement: Placement
    net: str = "lo"  # "lo" or "veth"


@dataclass
class Scenario:
    id: str
    number: int
    title: str
    kind: str  # latency | throughput
    note: str
    cases: list = field(default_factory=list)
    # The cases alternate within each repetition (A B C A B C ...) instead of each case's
    # repetitions running back to back: for cases compared with each other (isolation).
    interleave: bool = False


def size_label(size):
    if size >= KIB * KIB and size % (KIB * KIB) == 0:
        return f"{size // (KIB * KIB)} MiB"
    if size >= KIB and size % KIB == 0:
        return f"{size // KIB} KiB"
    return f"{size} B"


def _latency_cases(sid, sizes, placements, base, net="lo", extra_label=""):
    cases = []
    for size in sizes:
        for p in placements:
            spec = replace(base, size=size)
            label = f"{size_label(size)}{extra_label}, {p.label}"
            cases.append(Case(sid, f"{sid}-{size}-{p.name}", label, spec, p, net))
    return cases


def build_matrix(short, placements, storm_size=None):
    """All scenarios, long or short form. `placements` applies to the latency scenarios;
    `storm_size` is scenario 7's storm (default ISOLATION_STORM participants)."""
    storm_size = storm_size or ISOLATION_STORM
    dur, warm = (2.0, 0.5) if short else (10.0, 1.0)
    lat = Spec("latency", 32, history="keep-last", depth=1, duration=dur, warmup=warm)
    thr = Spec("throughput", 32, history="keep-all", depth=1, duration=dur, warmup=warm)
    scenarios = []

    s = Scenario("latency", 1, "Latency, 2 processes on loopback, RELIABLE KEEP_LAST(1)", "latency",
                 "round trip in µs")
    sizes = [32, KIB] if short else [32, KIB, 64 * KIB, KIB * KIB]
    s.cases = _latency_cases(s.id, sizes, placements, lat)
    scenarios.append(s)

    s = Scenario("bound", 2, "Latency bound: 32 B at 1000 pings/s, RELIABLE KEEP_ALL", "latency",
                 "round trip in µs; max/mean is the spread of the worst case")
    bound = replace(lat, history="keep-all", rate=1000.0)
    # Long form: 1,000,000 round trips (1000 s); the duration only bounds it should pings fall behind.
    bound = replace(bound, duration=5.0) if short else replace(bound, count=1_000_000, duration=1060.0)
    s.cases = _latency_cases(s.id, [32], placements, bound, extra_label=" at 1000/s")
    scenarios.append(s)

    s = Scenario("throughput", 3, "Throughput, unlimited rate, RELIABLE KEEP_ALL, pub → sub", "throughput",
                 "pub on vCPU 1, sub on vCPU 0")
    s.cases = [Case(s.id, f"{s.id}-{size}", size_label(size), replace(thr, size=size), SPLIT)
               for size in (32, KIB, 64 * KIB)]
    scenarios.append(s)

    s = Scenario("fanout", 4, "1 to n: one pub, n sub processes, 1 KiB, RELIABLE KEEP_ALL, multicast vs unicast",
                 "throughput", "samples/s and Mbit/s per subscriber; pub on vCPU 1, subs on vCPU 0")
    counts = [4] if short else [1, 4, 8]
    s.cases = []
    for n in counts:
        for unicast in (False, True):
            cast = "unicast" if unicast else "multicast"
            spec = replace(thr, size=KIB, subscribers=n, unicast=unicast, duration=dur + (1 if short else 0))
            s.cases.append(Case(s.id, f"{s.id}-{n}-{cast}", f"{n} sub, {cast}", spec, SPLIT))
    scenarios.append(s)

    s = Scenario("variants", 5, "Type and delivery: simple vs complex type, listener vs waitset, 1 KiB, RELIABLE KEEP_LAST(1)",
                 "latency", "round trip in µs")
    s.cases = []
    for p in ([SAME] if short else placements):
        for type_ in ("simple", "complex"):
            for delivery in ("listener", "waitset"):
                spec = replace(lat, size=KIB, type=type_, delivery=delivery)
                s.cases.append(Case(s.id, f"{s.id}-{type_}-{delivery}-{p.name}",
                                    f"{type_}, {delivery}, {p.label}", spec, p))
    scenarios.append(s)

    s = Scenario("veth", 6, "Latency across two network namespaces (veth pair), RELIABLE KEEP_LAST(1)",
                 "latency", "round trip in µs; veth MTU 1500")
    vsizes = [32] if short else [32, KIB, 64 * KIB, KIB * KIB]
    s.cases = _latency_cases(s.id, vsizes, placements, lat, net="veth", extra_label=" veth")
    scenarios.append(s)

    s = Scenario("isolation", 7, "Isolation: critical 32 B ping-pong at 1000/s, RELIABLE KEEP_ALL, "
                 "alone / with a 64 KiB bulk writer in the same participant / and a discovery storm "
                 f"of {storm_size:,} participants", "latency",
                 "round trip in µs of the critical writer (TRANSPORT_PRIORITY above "
                 "`threads.critical_priority`, both directions; the critical receive threads and "
                 "the pinging thread SCHED_FIFO 50, `--rt-priority`); ping process (and its bulk "
                 "writer) on vCPU 0, pong, bulk subscriber and storm on vCPU 1; the three cases "
                 "alternate within each repetition; ratio rows: loaded / alone", interleave=True)
    crit = replace(lat, history="keep-all", rate=1000.0, critical=True,
                   duration=ISOLATION_SHORT_S if short else ISOLATION_LONG_S, warmup=1.0)
    bulk = replace(crit, bulk_size=ISOLATION_BULK)
    storm = replace(bulk, storm=storm_size)
    s.cases = [Case(s.id, f"{s.id}-{name}", label, spec, SPLIT)
               for name, label, spec in (("alone", "critical alone", crit),
                                         ("bulk", f"+ {size_label(ISOLATION_BULK)} bulk", bulk),
                                         ("storm", f"+ bulk + storm of {storm_size:,}", storm))]
    scenarios.append(s)

    s = Scenario("intra", 8, "In process: write → take on one thread (BEST_EFFORT KEEP_LAST(1)); "
                 "round trip between two participants (RELIABLE KEEP_LAST(1))",
                 "latency", "write → take: µs from the call to write until take returned the sample, "
                 "one process on vCPU 0, writer and reader in one participant (as HDDS's, bound in "
                 "memory; Tachyon hands the sample over directly) and, Tachyon alone, in two (a DATA "
                 "through the in-process transport); round trip: ping and pong in two participants of one process, answering "
                 "from a listener (one vCPU) or from two threads polling `take` (the process on "
                 "both vCPUs), Tachyon's `perf intra` against `fastdds_perf intra` (Fast DDS's "
                 "intraprocess delivery)")
    intra = Spec("intra", INTRA_SIZE, reliability="best-effort", history="keep-last", depth=1,
                 duration=dur, warmup=warm, transport="auto")
    s.cases = [Case(s.id, f"{s.id}-{size}", f"write → take, {size_label(size)}",
                    replace(intra, size=size), SAME)
               for size in ([INTRA_SIZE] if short else [INTRA_SIZE, KIB, 64 * KIB])]
    s.cases.append(Case(s.id, f"{s.id}-2p-{INTRA_SIZE}",
                        f"write → take, {size_label(INTRA_SIZE)}, two participants",
                        replace(intra, kind="intra-2p"), SAME))
    rt = Spec("intra-rt", INTRA_SIZE, history="keep-last", depth=1, duration=dur, warmup=warm,
              transport="auto")
    for size in ([INTRA_SIZE] if short else [INTRA_SIZE, KIB, 64 * KIB]):
        s.cases.append(Case(s.id, f"{s.id}-rt-{size}-listener",
                            f"round trip, {size_label(size)}, listener, one vCPU",
                            replace(rt, size=size), SAME))
        s.cases.append(Case(s.id, f"{s.id}-rt-{size}-poll",
                            f"round trip, {size_label(size)}, two threads polling, two vCPUs",
                            replace(rt, size=size, delivery="poll"), SPLIT))
    scenarios.append(s)

    s = Scenario("shm", 9, "Same host, 2 processes: shared memory, RELIABLE KEEP_LAST(1)", "latency",
                 "round trip in µs; Tachyon `--transport shm` (blocking: futex wake-ups; "
                 "`--tachyon-wake busy-poll` adds it busy-polling), Fast DDS with its builtin "
                 "shared-memory transport, iceoryx2 0.10 publish-subscribe busy-waiting (two vCPUs "
                 "only); each size also over UDP, Tachyon alone, as the reference of the ratio targets")
    shm = replace(lat, transport="shm")
    ssizes = [32] if short else [32, 64 * KIB, KIB * KIB, 4 * KIB * KIB]
    s.cases = []
    for size in ssizes:
        for p in placements:
            label = f"{size_label(size)}, {p.label}"
            s.cases.append(Case(s.id, f"{s.id}-{size}-{p.name}", label, replace(shm, size=size), p))
            s.cases.append(Case(s.id, f"{s.id}-{size}-{p.name}-udp", f"{label}, over UDP (reference)",
                                replace(shm, size=size, transport="udp"), p))
    scenarios.append(s)

    s = Scenario("xdp", 10, "AF_XDP across a veth pair, RELIABLE KEEP_LAST(1); the latency bound at 1000/s",
                 "latency", "round trip in µs between two network namespaces; Tachyon over kernel UDP "
                 "(blocking, and busy-polling with --tachyon-wake busy-poll), over AF_XDP waiting in "
                 "poll() and spinning on its RX ring (--transport xdp, user data through the ring, "
                 "discovery over kernel UDP), Cyclone DDS, and the floors: raw UDP (--udp-wake) and "
                 "raw AF_XDP (`tachyon floor --xdp-interface`, poll() and spinning); spinning variants "
                 "on two vCPUs only. The bound: 32 B at 1000 pings/s, RELIABLE KEEP_ALL, max / mean")
    xdp = replace(lat, transport="xdp")
    xsizes = [32] if short else [32, KIB, 64 * KIB]
    s.cases = _latency_cases(s.id, xsizes, placements, xdp, net="veth", extra_label=" veth")
    xbound = replace(xdp, history="keep-all", rate=1000.0)
    xbound = replace(xbound, duration=XDP_BOUND_SHORT_S) if short else replace(
        xbound, count=1_000_000, duration=1060.0)
    s.cases += [Case(s.id, f"{s.id}-bound", "bound: 32 B at 1000/s, veth, two vCPUs", xbound, SPLIT, "veth")]
    scenarios.append(s)

    s = Scenario("interference", 11, "Interference on the link: critical 32 B ping-pong every 500 µs across a "
                 "veth pair with a reserved queue, RELIABLE KEEP_ALL, alone / with iperf3 sending "
                 "bidirectional UDP as fast as it can (32 B datagrams) / with a 64 KiB bulk writer in the "
                 "same participant; kernel UDP and AF_XDP", "latency",
                 "round trip in µs of the critical writer (both directions critical, the critical threads "
                 "SCHED_FIFO 50); the veth's ends set up by `tachyon xdp setup --queues 2` (queue 1 "
                 "reserved: mqprio maps the critical socket priority to it, pfifo under each queue); "
                 "Tachyon over kernel UDP, and over AF_XDP on queue 1 (poll()); ping, iperf3 client "
                 "on vCPU 0, pong, iperf3 server on vCPU 1; the cases alternate within each repetition; "
                 "ratio rows: loaded / alone, same path", interleave=True)
    icrit = replace(lat, history="keep-all", rate=2000.0, critical=True,
                    duration=ISOLATION_SHORT_S if short else ISOLATION_LONG_S, warmup=1.0)
    s.cases = []
    for transport, path in (("udp", "kernel UDP"), ("xdp", "AF_XDP")):
        alone = replace(icrit, transport=transport)
        for name, label, spec in (("alone", f"{path}, alone", alone),
                                  ("iperf3", f"{path}, + iperf3 bidirectional", replace(alone, load="iperf3")),
                                  ("bulk", f"{path}, + {size_label(ISOLATION_BULK)} bulk",
                                   replace(alone, bulk_size=ISOLATION_BULK))):
            s.cases.append(Case(s.id, f"{s.id}-{transport}-{name}", label, spec, SPLIT, INTERFERENCE_NET))
    scenarios.append(s)
    return scenarios


SCENARIO_IDS = ["latency", "bound", "throughput", "fanout", "variants", "veth", "isolation", "intra", "shm",
                "xdp", "interference"]

# Scenario 11's network: a veth pair whose ends `tachyon xdp setup --queues 2` prepared.
INTERFERENCE_NET = "veth-reserved"

# Scenario 10: the short form's bound run (10,000 round trips at 1000/s).
XDP_BOUND_SHORT_S = 10.0

# Scenario 8: the size HDDS's `latency_benchmark` writes (two 64-bit integers), the one size
# it has.
INTRA_SIZE = 16

# Scenario 7: measured seconds (at 1000 pings/s: 10,000 round trips in the short form, so p99.9
# is the 10th worst), the bulk sample size and the storm's participants.
ISOLATION_SHORT_S = 10.0
ISOLATION_LONG_S = 60.0
ISOLATION_BULK = 64 * KIB
ISOLATION_STORM = 1000
ISOLATION_BASELINE = "isolation-alone"
# Scenarios only Tachyon runs (no other program has the options they need).
TACHYON_ONLY = {"isolation", "interference"}

# Seconds a run costs beyond its warm-up and measured part: process start, discovery, the pause
# between starting the two sides, reading the result (measured here: about 1 s for two processes).
RUN_OVERHEAD_S = 1.2
# Each further process of a run (the bulk subscriber, the storm): its start gap and its stop.
EXTRA_PROCESS_S = 0.4


def run_seconds(case):
    spec = case.spec
    extra = (1 if spec.bulk_size else 0) + (1 if spec.storm else 0) + (2 if spec.load else 0)
    return (RUN_OVERHEAD_S + spec.warmup + spec.measured_seconds() + 0.1 * spec.subscribers
            + EXTRA_PROCESS_S * extra)


def schedule(plan, reps):
    """The order of the runs of `plan` ([(scenario, case, impls, why_not)]): per case its
    repetitions, implementations alternating in each (A B C A B C); the cases of an
    `interleave` scenario alternate too (case 1 A B, case 2 A B, ..., then the next
    repetition). Yields (scenario, case, impl, rep)."""
    i = 0
    while i < len(plan):
        s = plan[i][0]
        if s.interleave:
            group = []
            while i < len(plan) and plan[i][0] is s:
                group.append(plan[i])
                i += 1
            for rep in range(reps):
                for _, case, impls, _ in group:
                    for impl in impls:
                        yield s, case, impl, rep
        else:
            _, case, impls, _ = plan[i]
            i += 1
            for rep in range(reps):
                for impl in impls:
                    yield s, case, impl, rep


def estimate(cases_by_impl, reps):
    """Seconds for the given {impl name: [cases]}."""
    return sum(run_seconds(c) for cases in cases_by_impl.values() for c in cases) * reps
