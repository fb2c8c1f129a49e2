#!/usr/bin/env python3
"""The interop matrix: every case, between every pair of implementations, in both directions.

Each implementation has a peer program with one command line (interop/peers/peer_options.h):
Tachyon's `tachyon_peer`, Cyclone DDS 0.10's `cyclone_peer` (Debian), Cyclone DDS 11's
`cyclone11_peer` (PyPI `cyclonedds`, through its Python binding), Fast DDS's `fastdds_peer`. This script
starts a publisher of one and a subscriber of another, reads what they print, and decides from
that alone whether the case passed. It prints a table (case x pair) and exits non-zero when a
case failed.

Run it where DDS traffic cannot leave the machine (scripts/test.sh runs it inside a network
namespace of its own): it refuses to run unless TACHYON_TEST_NETNS=1.

    interop/matrix.py --peer tachyon=PATH --peer cyclone=PATH [--peer cyclone11=PATH]
                      [--peer fastdds=PATH] [--case NAME ...] [--pair T>C ...] [--verbose]
"""

import argparse
import os
import shlex
import signal
import subprocess
import sys
import threading
import time

SHORT = {"tachyon": "T", "cyclone": "C", "cyclone11": "C11", "fastdds": "F"}
CELL = {True: "pass", False: "FAIL", None: "n/a"}
POLICY_DEADLINE = 4
POLICY_RELIABILITY = 11
POLICY_DATA_REPRESENTATION = 23
POLICY_TYPE_CONSISTENCY = 24
LARGE = 4 * 1024 * 1024


class Proc:
    """A peer process whose stdout lines are collected as they come."""

    def __init__(self, name, argv, log):
        self.name = name
        self.argv = argv
        self.lines = []
        self.started = time.monotonic()
        self.p = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True
        )
        self.cond = threading.Condition()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            with self.cond:
                self.lines.append((time.monotonic(), line.rstrip("\n")))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_line(self, pred, timeout):
        """Waits until a line satisfies `pred`; returns its time, or None."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for t, line in self.lines:
                    if pred(line):
                        return t
                left = end - time.monotonic()
                if left <= 0 or (self.p.poll() is not None and not self.t.is_alive()):
                    return None
                self.cond.wait(min(left, 0.1))

    def finish(self, timeout):
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.t.join(2)
        return self.p.returncode

    def go(self):
        """Lets a publisher started with --wait-go write."""
        try:
            self.p.stdin.write("go\n")
            self.p.stdin.flush()
        except OSError:
            pass

    def kill(self, sig=signal.SIGKILL):
        if self.p.poll() is None:
            self.p.send_signal(sig)

    def out(self):
        return [line for _, line in self.lines]

    def samples(self):
        """(key, seq, len, ok) of every SAMPLE line."""
        got = []
        for line in self.out():
            f = line.split()
            if f[:1] == ["SAMPLE"] and len(f) == 5:
                got.append((f[1], int(f[2]), int(f[3]), f[4] == "ok"))
        return got

    def has(self, word, *args):
        want = [word, *map(str, args)]
        return any(line.split()[: len(want)] == want for line in self.out())


class Failure(Exception):
    pass


class NotApplicable(Exception):
    """A case that does not apply to a pair (reported n/a, with the reason)."""


class VethPair:
    """Two network namespaces joined by a veth pair that loses `loss` percent of the UDP
    datagrams arriving at each end: the publisher runs in one, the subscriber in the other, and
    DDS discovers by multicast over a real multicast-capable link. Nothing is attached to the
    namespace this script runs in.

    The loss is an nftables rule (`numgen random`) on each namespace's input hook, not
    `tc netem`: the kernels here are built without sch_netem. Both drop independently at random
    per packet, which is what the reliable protocol has to repair."""

    def __init__(self, loss):
        tag = f"{os.getpid() % 100000}"
        self.ns = (f"tmx{tag}a", f"tmx{tag}b")
        self.loss = loss
        try:
            self._setup()
        except subprocess.CalledProcessError as e:
            self.close()
            sys.exit(f"matrix.py: setting up the veth pair failed: {' '.join(e.cmd)}: {e.stderr}")

    def _setup(self):
        a, b = self.ns
        self._run("ip", "netns", "add", a)
        self._run("ip", "netns", "add", b)
        self._run("ip", "-n", a, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", b)
        per_mille = round(self.loss * 10)
        rules = (
            "table inet lossy {\n chain input {\n"
            "  type filter hook input priority 0; policy accept;\n"
            f"  meta l4proto udp numgen random mod 1000 < {per_mille} counter drop\n }}\n}}\n"
        )
        for ns, dev, addr in ((a, "va", "10.77.0.1/24"), (b, "vb", "10.77.0.2/24")):
            self._run("ip", "-n", ns, "link", "set", "lo", "up")
            self._run("ip", "-n", ns, "addr", "add", addr, "dev", dev)
            self._run("ip", "-n", ns, "link", "set", dev, "up")
            if per_mille:
                self._run("ip", "netns", "exec", ns, "nft", "-f", "-", stdin=rules)
        # A veth end has carrier a moment after both ends are up. Fast DDS 2.x lists the
        # interfaces once, at start, and leaves out one without carrier: a peer started before
        # it then announces and listens on loopback only, and never finds the other namespace.
        for ns, dev in ((a, "va"), (b, "vb")):
            self._wait_running(ns, dev)

    def _wait_running(self, ns, dev, timeout=5.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            out = subprocess.run(
                ["ip", "-n", ns, "-br", "link", "show", "dev", dev],
                capture_output=True,
                text=True,
            ).stdout.split()
            if len(out) > 1 and out[1] == "UP":
                return
            time.sleep(0.01)
        raise subprocess.CalledProcessError(1, ["ip", "-n", ns, "link", "show", dev], stderr="no carrier")

    def dropped(self):
        """Datagrams the loss rules dropped so far, in both namespaces."""
        total = 0
        for ns in self.ns:
            out = subprocess.run(
                ["ip", "netns", "exec", ns, "nft", "list", "table", "inet", "lossy"],
                capture_output=True,
                text=True,
            ).stdout
            for word, nxt in zip(out.split(), out.split()[1:]):
                if word == "packets" and nxt.isdigit():
                    total += int(nxt)
        return total

    @staticmethod
    def _run(*argv, stdin=None):
        subprocess.run(
            argv, input=stdin, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )

    def prefix(self, role):
        return ["ip", "netns", "exec", self.ns[0] if role == "pub" else self.ns[1]]

    def close(self):
        for ns in self.ns:
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


def expect(cond, what):
    if not cond:
        raise Failure(what)


# After both sides matched, how long the publisher waits before writing. A Cyclone DDS
# VOLATILE reader of a non-Cyclone writer starts from the first sample it receives unless a
# HEARTBEAT reached it first ("the first samples written after matching the reader may be
# lost", its reader_add_connection says); Tachyon's writer sends one every 100 ms until the
# reader answers, and this leaves room for that exchange over the lossy link.
SETTLE = 0.5


def start_writing(p, s, timeout=20):
    """Both sides matched, the publisher (started with --wait-go) may write: samples written
    before the subscriber knows the writer need not reach it (VOLATILE), on any vendor."""
    end = time.monotonic() + timeout
    while not (p.has("READY") and s.has("MATCHED", 1)):
        # One that exits (UNSUPPORTED, an error) will never match: no point waiting.
        for pr in (p, s):
            expect(pr.p.poll() is None, f"{pr.name} exited with {pr.p.returncode} before matching")
        expect(time.monotonic() < end, "the writer never matched" if not p.has("READY")
               else "the reader never matched")
        time.sleep(0.02)
    time.sleep(SETTLE)
    p.go()


def all_ok(samples):
    bad = [s for s in samples if not s[3]]
    expect(not bad, f"{len(bad)} samples with wrong content, first {bad[:1]}")


def in_order_per_key(samples):
    last = {}
    for key, seq, _, _ in samples:
        expect(seq > last.get(key, -1), f"key {key}: seq {seq} after {last.get(key)}")
        last[key] = seq


# --- the cases --------------------------------------------------------------------------------
# Each case gets a runner `run(start_pub, start_sub)` that starts the processes, waits, and
# raises Failure with the reason when the case failed. start_* take the options of one process.


def case_reliable(pub, sub):
    """Reliable keyed topic: 50 samples over 5 instances, every one, in order per instance."""
    s = sub("--expect 50")
    p = pub("--count 50 --instances 5 --wait-go")
    start_writing(p, s)
    expect(p.finish(40) == 0 and p.has("ACKED"), "publisher: not acknowledged")
    expect(s.finish(40) == 0, "subscriber: " + (s.out()[-1:] or ["no output"])[0])
    got = s.samples()
    all_ok(got)
    in_order_per_key(got)
    expect(sorted(x[1] for x in got) == list(range(50)), f"got {len(got)} of 50 samples")


def case_dispose(pub, sub):
    """Dispose: the reader learns that instance C0 was disposed after its samples."""
    # The writer stays: deleting it would unregister, and so (autodispose) dispose, C1 too.
    s = sub("--expect 10 --expect-dispose --timeout-s 15")
    p = pub("--count 10 --instances 2 --dispose --timeout-s 15 --linger-ms 3000 --wait-go")
    start_writing(p, s)
    expect(s.finish(20) == 0, "subscriber: " + (s.out()[-1:] or ["no output"])[0])
    # The last acknowledgement may still be on its way (or repaired, on the lossy link).
    expect(p.wait_line(lambda l: l == "ACKED", 15) is not None, "publisher: not acknowledged")
    all_ok(s.samples())
    expect(s.has("DISPOSED", "C0"), "the dispose of C0 did not arrive")
    expect(not s.has("DISPOSED", "C1"), "C1 was reported disposed")


def case_dispose_appendable(pub, sub):
    """Dispose of an instance of the OMG suite's @appendable ShapeType: its key, a string<128>,
    hashes by MD5, so the reader needs the serialized key, whose form differs between the
    vendors' releases in XCDR2 — Cyclone DDS 11 frames it with a DHEADER (XTypes 1.3's key
    holder) and drops a bare one, Cyclone DDS 0.10 writes and reads the bare key. Tachyon
    reads both and writes what the matched readers require."""
    s = sub("--type ashape --expect 10 --expect-dispose --timeout-s 15")
    p = pub("--type ashape --count 10 --instances 2 --dispose --timeout-s 15 --linger-ms 3000 "
            "--wait-go")
    start_writing(p, s)
    expect(s.finish(20) == 0, "subscriber: " + (s.out()[-1:] or ["no output"])[0])
    expect(p.wait_line(lambda l: l == "ACKED", 15) is not None, "publisher: not acknowledged")
    all_ok(s.samples())
    expect(s.has("DISPOSED", "C0"), "the dispose of C0 did not arrive")
    expect(not s.has("DISPOSED", "C1"), "C1 was reported disposed")


def case_evolution(pub, sub):
    """Type evolution (XTypes assignability): a writer of AppendableShape with a member
    appended and a reader of the four-member version match (the reader's side fetches the
    writer's type with TypeLookup when it does not know it) and every sample decodes."""
    twenty_samples(pub, sub, "ashape5", "ashape")


def twenty_samples(pub, sub, pub_type, sub_type):
    """20 samples of `pub_type` on 2 instances to a reader of `sub_type`: acknowledged, each
    arrived once, and every one decodes to what was written."""
    s = sub(f"--type {sub_type} --expect 20")
    p = pub(f"--type {pub_type} --count 20 --instances 2 --wait-go")
    start_writing(p, s)
    expect(p.finish(40) == 0 and p.has("ACKED"), "publisher: not acknowledged")
    expect(s.finish(40) == 0, "subscriber: " + (s.out()[-1:] or ["no output"])[0])
    got = s.samples()
    all_ok(got)
    expect(sorted(x[1] for x in got) == list(range(20)), f"got {len(got)} of 20 samples")


def case_uint8(pub, sub):
    """The OMG suite's ShapeType exactly (SuiteShape, with sequence<uint8>): Cyclone DDS 0.10
    describes uint8 as octet and cannot read a TypeObject with XTypes 1.3's uint8, so
    Tachyon announces that type to it without its TypeInformation and takes octet for uint8;
    the endpoints match both ways and every sample (its four octets included) decodes."""
    twenty_samples(pub, sub, "sshape", "sshape")


def case_type_mismatch(pub, sub):
    """A member whose type changed (x a long long): the types are not assignable, the
    endpoints do not match, and both sides report TYPE_CONSISTENCY_ENFORCEMENT incompatible."""
    both_report_incompatible(pub, sub, "--type ashape", "--type ashape_x64",
                             POLICY_TYPE_CONSISTENCY)


def case_best_effort(pub, sub):
    """Best-effort: 200 samples at 2 ms intervals; on loopback at least half arrive."""
    s = sub("--best-effort --expect 100 --timeout-s 15")
    p = pub("--best-effort --count 200 --period-ms 2 --linger-ms 200 --wait-go")
    start_writing(p, s)
    p.finish(40)
    s.finish(20)
    got = s.samples()
    all_ok(got)
    in_order_per_key(got)
    expect(len(got) >= 100, f"only {len(got)} of 200 samples arrived")


def case_transient_local(pub, sub):
    """TRANSIENT_LOCAL: 10 samples written before any reader exists reach a late joiner."""
    p = pub("--transient-local --depth 10 --count 10 --wait-match 0 --linger-ms 20000")
    expect(p.wait_line(lambda l: l.startswith("WRITTEN"), 20), "publisher wrote nothing")
    time.sleep(0.5)
    s = sub("--transient-local --depth 10 --expect 10")
    rc = s.finish(40)
    p.kill(signal.SIGTERM)
    p.finish(5)
    expect(rc == 0, "subscriber: " + (s.out()[-1:] or ["no output"])[0])
    got = s.samples()
    all_ok(got)
    expect([x[1] for x in got] == list(range(10)), f"late joiner got {[x[1] for x in got]}")


def case_large(pub, sub):
    """A 4 MiB sample (fragmented on the wire), three of them, reliable. LargeData is
    @appendable: Tachyon and Cyclone DDS write it as XCDR2, so a Tachyon writer converts every
    sample to XCDR1 for a Fast DDS 2.9 reader."""
    s = sub("--type large --expect 3 --timeout-s 60")
    p = pub(f"--type large --size {LARGE} --count 3 --instances 3 --timeout-s 60 --wait-go")
    start_writing(p, s)
    expect(p.finish(90) == 0 and p.has("ACKED"), "publisher: not acknowledged")
    expect(s.finish(90) == 0, "subscriber: " + (s.out()[-1:] or ["no output"])[0])
    got = s.samples()
    all_ok(got)
    expect([x[2] for x in got] == [LARGE] * 3, f"sizes {[x[2] for x in got]}")


def case_partition(pub, sub):
    """PARTITION: a reader in part_a gets the part_a writer's samples and none of part_b's."""
    s = sub("--partition part_a --expect 10 --linger-ms 1000")
    b = pub("--partition part_b --prefix B --count 60 --period-ms 20 --wait-match 0")
    a = pub("--partition part_a --prefix A --count 10 --wait-go")
    start_writing(a, s)
    expect(a.finish(40) == 0 and a.has("ACKED"), "part_a publisher: not acknowledged")
    expect(s.finish(40) == 0, "subscriber: " + (s.out()[-1:] or ["no output"])[0])
    b.finish(10)
    got = s.samples()
    all_ok(got)
    leaked = [x for x in got if x[0].startswith("B")]
    expect(not leaked, f"{len(leaked)} samples of partition part_b reached the part_a reader")
    expect(len(got) == 10, f"got {len(got)} of 10 part_a samples")
    expect(not b.has("MATCHED", 1), "the part_b writer matched the part_a reader")


def both_report_incompatible(pub, sub, pub_opts, sub_opts, policy):
    """Starts a reader and a writer whose QoS do not match; both must report `policy`
    incompatible. Each side stays until both have reported: over a lossy link one side may
    need a repair of the other's announcement, which only a participant still running sends
    (with a fixed linger of 1.5 s, a side that saw the other early left before the other had
    its announcement in about one run in fifteen at 10 % loss)."""
    s = sub(f"{sub_opts} --expect-incompatible --timeout-s 15 --linger-ms 30000")
    p = pub(f"{pub_opts} --expect-incompatible --timeout-s 15 --linger-ms 30000")
    reported = lambda l: l.startswith("INCOMPATIBLE")
    has_reported = lambda pr: any(reported(l) for l in pr.out())
    end = time.monotonic() + 20
    # Until both reported, or one side exited (a peer that says UNSUPPORTED leaves at once:
    # no point waiting for the other).
    while time.monotonic() < end and not (has_reported(p) and has_reported(s)):
        if any(pr.p.poll() is not None for pr in (p, s)):
            break
        time.sleep(0.05)
    writer, reader = has_reported(p), has_reported(s)
    for pr in (p, s):
        pr.kill()
        pr.finish(5)
    expect(writer, "the writer reported no incompatible QoS")
    expect(reader, "the reader reported no incompatible QoS")
    expect(p.has("INCOMPATIBLE", policy), f"writer: {p.out()}")
    expect(s.has("INCOMPATIBLE", policy), f"reader: {s.out()}")


def case_incompatible(pub, sub):
    """A BEST_EFFORT writer and a RELIABLE reader: both report RELIABILITY incompatible."""
    both_report_incompatible(pub, sub, "--best-effort", "", POLICY_RELIABILITY)


# Strong samples that make up the takeover in case_ownership (see there).
TAKEOVER = 10


def case_ownership(pub, sub):
    """OWNERSHIP EXCLUSIVE: a weak writer (strength 1, shapesize 10) is taken over by a strong
    one (strength 5, shapesize 50) while it writes, and the reader fails over back to the weak
    writer once the strong one has left.

    The weak writer writes for up to 40 s and the subscriber listens as long; both are stopped
    as soon as the failover is seen. The strong writer leaves only once its last sample is
    acknowledged, which on the lossy link can take a few of Fast DDS's 3 s heartbeat periods."""
    s = sub("--exclusive --expect 1000000 --timeout-s 45")
    weak = pub("--strength 1 --shapesize 10 --count 2000 --period-ms 20 --wait-go --timeout-s 50")
    start_writing(weak, s)
    expect(
        s.wait_line(lambda l: l.startswith("SAMPLE"), 20) is not None,
        "no sample of the weak writer arrived",
    )
    strong = pub("--strength 5 --shapesize 50 --count 100 --period-ms 20 --timeout-s 30")
    expect(strong.finish(35) == 0, "strong writer: " + (strong.out()[-1:] or ["no output"])[0])
    end = time.monotonic() + 15
    while time.monotonic() < end and s.p.poll() is None:
        sizes = [x[2] for x in s.samples()]
        if 50 in sizes and 10 in sizes[len(sizes) - 1 - sizes[::-1].index(50):]:
            break
        time.sleep(0.1)
    time.sleep(0.2)
    weak.kill(signal.SIGTERM)
    s.kill(signal.SIGTERM)
    weak.finish(5)
    s.finish(5)
    got = s.samples()
    all_ok(got)
    sizes = [x[2] for x in got]
    expect(10 in sizes, "no sample of the weak writer")
    expect(50 in sizes, "no sample of the strong writer")
    strong_at = [i for i, size in enumerate(sizes) if size == 50]
    first, last = strong_at[0], strong_at[-1]
    # The takeover: a weak sample the reader accepted just before the strong writer's first
    # sample reached it (that one was lost and repaired, or sent before the reader matched the
    # writer) can still be in the reader's history beside it. Fast DDS 2.9 returns a take's
    # samples of several writers in source-timestamp order (`history_order_cmp`), so that weak
    # sample, written later, comes out after the strong writer's first samples. Within the
    # strong writer's first TAKEOVER samples (written over 200 ms at 20 ms) that is the reader's
    # order, not ownership broken; after them, a weak sample is. A reader that ignored
    # ownership would show the weak writer's ~100 samples written meanwhile.
    zone_end = strong_at[min(TAKEOVER, len(strong_at)) - 1]
    during = sizes[zone_end:last].count(10)
    expect(during == 0, f"{during} samples of the weak writer arrived while the strong one owned the instance")
    at_takeover = sizes[first:zone_end].count(10)
    after = sizes[last + 1:].count(10)
    expect(after > 0, "no failover: nothing of the weak writer after the strong one left")
    note = f", {at_takeover} weak sorted among the strong's first" if at_takeover else ""
    return f"{sizes[:first].count(10)} weak, {sizes.count(50)} strong{note}, {after} weak after"


def case_content_filter(pub, sub):
    """A content-filtered topic, DDS SQL with parameters: the reader gets exactly the samples its
    filter accepts, x < 10 or x >= 40 of x = 0..59. A Tachyon writer matched with a reader that
    announced its filter (Tachyon's, Fast DDS's) filters on its side and says so (FILTERED)."""
    s = sub('--filter "x < %0 OR x >= %1" --filter-param 10 --filter-param 40 --expect 30 '
            "--linger-ms 1000")
    p = pub("--count 60 --wait-go")
    start_writing(p, s)
    expect(p.finish(40) == 0 and p.has("ACKED"), "publisher: not acknowledged")
    expect(s.finish(40) == 0, "subscriber: " + (s.out()[-1:] or ["no output"])[0])
    got = s.samples()
    all_ok(got)
    xs = [x[1] for x in got]
    refused = [x for x in xs if 10 <= x < 40]
    expect(not refused, f"{len(refused)} samples the filter refuses arrived, first x = {refused[:1]}")
    expect(sorted(xs) == list(range(10)) + list(range(40, 60)), f"got x = {xs}")
    filtered = [l for l in p.out() if l.startswith("FILTERED")]
    if p.name.startswith("tachyon") and not s.name.startswith("cyclone"):
        expect(filtered, "the Tachyon writer did not filter for the reader's announced filter")
    return filtered[0].lower() + " on the writer" if filtered else "filtered on the reader"


def case_ordered(pub, sub):
    """PRESENTATION TOPIC ordered_access: samples of three instances, written in turn, are
    taken in the order written even when each take finds several instances' samples (the
    subscriber takes every 150 ms). A reader without ordered access returns them instance by
    instance."""
    s = sub("--ordered --read-period-ms 150 --expect 30 --linger-ms 300")
    p = pub("--ordered --instances 3 --count 30 --period-ms 10 --wait-go")
    start_writing(p, s)
    expect(p.finish(30) == 0 and p.has("ACKED"), "publisher: not acknowledged")
    expect(s.finish(30) == 0, "subscriber: " + (s.out()[-1:] or ["no output"])[0])
    got = s.samples()
    all_ok(got)
    xs = [x[1] for x in got]
    expect(xs == list(range(30)), f"not in the order written: x = {xs}")


def case_deadline(pub, sub):
    """DEADLINE: a writer promising 200 ms writes every 600 ms: writer and reader both report
    missed deadlines."""
    s = sub("--deadline-ms 200 --expect 4 --linger-ms 700 --timeout-s 15")
    p = pub("--deadline-ms 200 --count 4 --period-ms 600 --linger-ms 700 --wait-go --timeout-s 15")
    start_writing(p, s)
    p.finish(20)
    s.finish(20)
    all_ok(s.samples())
    expect(p.has("DEADLINE_MISSED"), "the writer reported no offered deadline missed")
    expect(s.has("DEADLINE_MISSED"), "the reader reported no requested deadline missed")


def case_deadline_incompatible(pub, sub):
    """DEADLINE offered 500 ms, requested 200 ms: both report DEADLINE (4) incompatible."""
    both_report_incompatible(pub, sub, "--deadline-ms 500", "--deadline-ms 200", POLICY_DEADLINE)


def case_liveliness(pub, sub):
    """A writer with a 1 s AUTOMATIC lease is SIGKILLed: the reader sees it not alive in time."""
    s = sub("--lease-ms 1000 --expect 5 --expect-not-alive --timeout-s 30")
    p = pub("--lease-ms 1000 --count 5 --linger-ms 30000 --wait-go")
    start_writing(p, s)
    expect(
        s.wait_line(lambda l: l.startswith("SAMPLE"), 20) is not None,
        "no sample before the kill",
    )
    expect(p.wait_line(lambda l: l.startswith("ACKED"), 20) is not None, "not acknowledged")
    time.sleep(0.3)
    p.kill()
    killed = time.monotonic()
    p.finish(5)
    expect(s.finish(30) == 0, "the reader never saw the writer lose liveliness")
    lost = s.wait_line(lambda l: l.split()[:2] == ["LIVELINESS", "0"], 0)
    expect(lost is not None, "no LIVELINESS line with alive_count 0")
    delay = lost - killed
    expect(delay < 4.0, f"liveliness lost {delay:.1f} s after the kill (lease 1 s)")
    return f"{delay:.1f}s"


def case_representation(version):
    def run(pub, sub):
        s = sub("--expect 10 --timeout-s 15")
        p = pub(f"--representation {version} --count 10 --instances 2 --timeout-s 15 --wait-go")
        p.wait_line(lambda l: l == "READY" or l.startswith("INCOMPATIBLE"), 20)
        if not p.has("INCOMPATIBLE"):
            start_writing(p, s)
        p.finish(20)
        expect(
            not p.has("INCOMPATIBLE", POLICY_DATA_REPRESENTATION),
            f"the reader does not accept XCDR{version}: the writer reported DATA_REPRESENTATION "
            "incompatible",
        )
        expect(p.has("ACKED"), "publisher: not acknowledged")
        expect(s.finish(20) == 0, "subscriber: " + (s.out()[-1:] or ["no output"])[0])
        got = s.samples()
        all_ok(got)
        expect(len(got) == 10, f"got {len(got)} of 10")

    run.__doc__ = f"The writer offers only XCDR{version}; the reader accepts what it can."
    return run


def case_three_paths(pub, sub, tachyon_sub, pub_impl, sub_impl):
    """One Tachyon writer, three readers at once, each on its own path: one in a second
    participant of the writer's process (in process), one in another Tachyon process (shared
    memory) and the pair's subscriber (Cyclone DDS or Fast DDS: UDP; for T>T a second Tachyon
    process): every reader gets all 50 samples, in order, and the writer's participant sent
    through each path."""
    if pub_impl != "tachyon":
        raise NotApplicable("the writer must be Tachyon's (in-process and shared-memory readers)")
    s = sub("--expect 50")
    t = tachyon_sub("--expect 50")
    p = pub("--count 50 --instances 5 --wait-go --wait-match 3 --local-reader")
    start_writing(p, s)
    expect(p.finish(40) == 0 and p.has("ACKED"), "publisher: not acknowledged")
    for r in (s, t):
        expect(r.finish(40) == 0, f"{r.name}: " + (r.out()[-1:] or ["no output"])[0])
        got = r.samples()
        all_ok(got)
        in_order_per_key(got)
        expect(sorted(x[1] for x in got) == list(range(50)), f"{r.name}: got {len(got)} of 50 samples")
    local = [tuple(l.split()[1:]) for l in p.out() if l.startswith("LOCAL ")]
    local = [(k, int(q), int(n), ok == "ok") for k, q, n, ok in local]
    all_ok(local)
    in_order_per_key(local)
    expect(sorted(x[1] for x in local) == list(range(50)), f"in-process reader: got {len(local)} of 50")
    paths = next((l for l in p.out() if l.startswith("PATHS ")), None)
    expect(paths is not None, "publisher: no PATHS line")
    sent = dict(w.split("=") for w in paths.split()[1:])
    expect(int(sent["intra"]) > 0, f"nothing in process: {paths}")
    expect(int(sent["shm"]) > 0, f"nothing through shared memory: {paths}")
    if sub_impl != "tachyon":
        expect(int(sent["other"]) > 0, f"nothing over UDP: {paths}")
    return paths


CASES = {
    "reliable": case_reliable,
    "dispose": case_dispose,
    "dispose_appendable": case_dispose_appendable,
    "evolution": case_evolution,
    "type_mismatch": case_type_mismatch,
    "uint8": case_uint8,
    "best_effort": case_best_effort,
    "transient_local": case_transient_local,
    "large": case_large,
    "partition": case_partition,
    "incompatible": case_incompatible,
    "liveliness": case_liveliness,
    "ownership": case_ownership,
    "content_filter": case_content_filter,
    "ordered": case_ordered,
    "deadline": case_deadline,
    "deadline_rxo": case_deadline_incompatible,
    "xcdr1": case_representation(1),
    "xcdr2": case_representation(2),
    "three_paths": case_three_paths,
}


# `--require-xdp`: every Tachyon peer runs with an AF_XDP transport (TACHYON_CONFIG's [xdp]) and
# must say, when it exits, that its socket carried traffic of the case.
REQUIRE_XDP = False


def check_xdp(procs, note):
    """Stops the Tachyon peers of a passed case (SIGTERM: they report as they exit) and checks
    their `XDP sent N received M kernel K` lines: when user data flowed (a subscriber printed
    samples), on each side (pub, sub) with Tachyon one of its peers' AF_XDP socket carried
    traffic. One process per interface has the socket: a second Tachyon publisher on the same
    side, as in `ownership`, runs on kernel UDP with `xdp.fallback`. A peer the case killed
    with SIGKILL cannot report; cases where nothing matches (`incompatible`) send no user data.
    Returns the case's note with the figures."""
    for pr in procs:
        if pr.name.startswith("tachyon "):
            pr.kill(signal.SIGTERM)
            pr.finish(5)
    flowed = any(pr.samples() for pr in procs if pr.name.endswith(" sub"))
    figures = []
    for role in ("pub", "sub"):
        mine = [pr for pr in procs if pr.name == f"tachyon {role}"]
        reporting = [pr for pr in mine if pr.p.returncode != -signal.SIGKILL]
        if not mine:
            continue
        if not flowed or not reporting:
            figures.append(f"{role} xdp unchecked ({'no user data' if not flowed else 'killed'})")
            continue
        best = 0
        for pr in reporting:
            for line in pr.out():
                if line.startswith("XDP sent "):
                    w = line.split()
                    best = max(best, int(w[2]) + int(w[4]))
        expect(best > 0, f"tachyon {role}: nothing went through an AF_XDP socket")
        figures.append(f"{role} xdp {best}")
    return ", ".join(x for x in [note or ""] + figures if x)


def run_case(name, pub_impl, sub_impl, peers, domain, logdir, veth):
    """Runs one case between two implementations; returns (passed, note, details)."""
    procs = []
    log = open(os.path.join(logdir, f"{name}.{pub_impl}-{sub_impl}.stderr"), "w")

    def start(impl, role, opts):
        where = veth.prefix(role) if veth else []
        argv = [*where, peers[impl], role, "--domain", str(domain), *shlex.split(opts)]
        pr = Proc(f"{impl} {role}", argv, log)
        procs.append(pr)
        return pr

    try:
        case = CASES[name]
        pub, sub = (lambda o: start(pub_impl, "pub", o)), (lambda o: start(sub_impl, "sub", o))
        if case is case_three_paths:
            note = case(pub, sub, lambda o: start("tachyon", "sub", o), pub_impl, sub_impl)
        else:
            note = case(pub, sub)
        if REQUIRE_XDP:
            note = check_xdp(procs, note)
        return True, note or "", ""
    except NotApplicable as n:
        return None, str(n), ""
    except Failure as f:
        for pr in procs:
            pr.finish(1)
            why = [l for l in pr.out() if l.startswith("UNSUPPORTED")]
            if why:
                return None, f"{pr.name}: {why[0][len('UNSUPPORTED '):]}", ""
        details = []
        for pr in procs:
            details.append(f"    $ {' '.join(pr.argv)}  (exit {pr.p.poll()})")
            details += [f"      {l}" for l in pr.out()[-8:]]
        return False, str(f), "\n".join(details)
    finally:
        # SIGTERM first: the peers then close their participants (Tachyon's delete their
        # shared-memory segments); what is still running 5 s later is killed.
        for pr in procs:
            pr.kill(signal.SIGTERM)
        for pr in procs:
            pr.finish(5)
        log.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--peer", action="append", default=[], help="NAME=PATH of a peer program")
    ap.add_argument("--case", action="append", help="run only these cases")
    ap.add_argument("--pair", action="append", help="run only these pairs, e.g. T>C")
    ap.add_argument("--logs", default=os.environ.get("TMPDIR", "/tmp") + "/tachyon-interop")
    ap.add_argument("--require-xdp", action="store_true",
                    help="Tachyon runs with [xdp] (TACHYON_CONFIG): a case passes only if each Tachyon "
                    "peer's AF_XDP socket carried some of its traffic")
    ap.add_argument(
        "--veth-loss",
        type=float,
        metavar="PCT",
        help="run publisher and subscriber in two new network namespaces joined by a veth pair "
        "with this much netem loss on each end (needs root)",
    )
    a = ap.parse_args()
    global REQUIRE_XDP
    REQUIRE_XDP = a.require_xdp
    if a.veth_loss is None and os.environ.get("TACHYON_TEST_NETNS") != "1":
        sys.exit("matrix.py: run it inside an isolated network namespace (scripts/test.sh does)")
    peers = dict(p.split("=", 1) for p in a.peer)
    for n, path in peers.items():
        if n not in SHORT or not os.access(path, os.X_OK):
            sys.exit(f"matrix.py: bad peer {n}={path}")
    others = [n for n in ("cyclone", "cyclone11", "fastdds") if n in peers]
    # Each peer also runs against itself, first: a case a peer fails against itself is the
    # peer's limitation, and the same failure between Tachyon and that peer is reported as such.
    pairs = [("tachyon", "tachyon")]
    for o in others:
        pairs += [(o, o), ("tachyon", o), (o, "tachyon")]
    if a.pair:
        pairs = [p for p in pairs if f"{SHORT[p[0]]}>{SHORT[p[1]]}" in a.pair]
    # Over the veth pair Tachyon runs with shared memory off (scripts/test.sh): the lossy link
    # is what that run is about, and the three paths are checked on loopback.
    cases = a.case or [c for c in CASES if not (a.veth_loss is not None and c == "three_paths")]
    os.makedirs(a.logs, exist_ok=True)
    veth = VethPair(a.veth_loss) if a.veth_loss is not None else None
    try:
        run_matrix(a, peers, pairs, cases, veth)
    finally:
        if veth:
            veth.close()


def run_matrix(a, peers, pairs, cases, veth):
    results = {}
    failures = []
    unsupported = []
    domain = 0
    started = time.monotonic()
    for case in cases:
        for pair in pairs:
            domain = domain % 200 + 1
            t0 = time.monotonic()
            ok, note, details = run_case(case, *pair, peers, domain, a.logs, veth)
            label = f"{SHORT[pair[0]]}>{SHORT[pair[1]]}"
            reference = "tachyon" not in pair
            peer = next((n for n in pair if n != "tachyon"), None)
            ref_label = f"{SHORT[peer]}>{SHORT[peer]}" if peer else None
            if ok is False and not reference and results.get((case, ref_label), True) is not True:
                ok, note = None, f"{note} (as {ref_label}: a {peer} limitation)"
            results[(case, label)] = ok
            took = time.monotonic() - t0
            cell = CELL[ok].lower() if reference else CELL[ok]
            print(f"{case:18} {label:7}  {cell:4}  {took:5.1f}s  {note}", flush=True)
            if reference:
                continue
            if ok is None:
                unsupported.append(f"{case} {label}: {note}")
            elif not ok:
                failures.append(f"{case} {label}: {note}\n{details}")
    labels = [f"{SHORT[p]}>{SHORT[s]}" for p, s in pairs]
    where = f"two namespaces over veth, {a.veth_loss:g}% loss each way" if veth else "loopback"
    print(f"\nInterop matrix, {where} (publisher > subscriber; T Tachyon, C Cyclone DDS 0.10,")
    print("C11 Cyclone DDS 11, F Fast DDS;")
    print("lower case: a peer against itself, for reference)")
    print(f"{'case':18} " + " ".join(f"{l:7}" for l in labels))
    for case in cases:
        cells = []
        for p, l in zip(pairs, labels):
            c = CELL[results[(case, l)]]
            cells.append(c.lower() if "tachyon" not in p else c)
        print(f"{case:18} " + " ".join(f"{c:7}" for c in cells))
    passed = sum(1 for (_, l), r in results.items() if r and "T" in l)
    for u in unsupported:
        print(f"n/a  {u}")
    print(f"\n{time.monotonic() - started:.0f} s; the stderr of each run is in {a.logs}")
    if veth:
        print(f"the lossy link dropped {veth.dropped()} datagrams")
    print(f"interop: {passed} passed, {len(failures)} failed, {len(unsupported)} skipped")
    for f in failures:
        print("\nFAILED " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
