#!/usr/bin/env python3
"""The Cyclone DDS 11 side of the interop matrix: PyPI `cyclonedds` 11.0.1, whose wheel bundles
Cyclone DDS 11's C library (Debian has only 0.10.2, which `cyclone_peer.c` uses). The wheel has
no C headers, so this peer is written against its Python binding; the binding hands samples to
the C library in serialized form, and the C library does everything on the wire — discovery,
reliability, key extraction and the key-only payloads of disposes (its `cdrstream` code).

Options and output: interop/peers/peer_options.h (the same command line as the C and C++
peers). interop/build-peers.sh installs the package in a virtual environment and writes a
launcher `cyclone11_peer` next to the other peers.
"""

import sys
import time
from dataclasses import dataclass

from cyclonedds.core import DDSException, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import appendable, final, key
from cyclonedds.idl.types import bounded_str, byte, int32, int64, sequence, uint8, uint32
from cyclonedds.pub import DataWriter, Publisher
from cyclonedds.sub import DataReader, Subscriber
from cyclonedds.topic import Topic
from cyclonedds.util import duration

# DDS_IST_NOT_ALIVE_DISPOSED (instance states are a bit mask)
NOT_ALIVE_DISPOSED = 32


@dataclass
@final
class ShapeType(IdlStruct, typename="ShapeType"):
    color: bounded_str[128]
    key("color")
    x: int32
    y: int32
    shapesize: int32


@dataclass
@appendable
class AppendableShape(IdlStruct, typename="AppendableShape"):
    color: bounded_str[128]
    key("color")
    x: int32
    y: int32
    shapesize: int32


@dataclass
@appendable
class AppendableShape5(IdlStruct, typename="AppendableShape"):
    """AppendableShape with a member appended (--type ashape5): assignable both ways."""
    color: bounded_str[128]
    key("color")
    x: int32
    y: int32
    shapesize: int32
    z: int32


@dataclass
@appendable
class SuiteShape(IdlStruct, typename="SuiteShape"):
    """The OMG suite's ShapeType exactly (--type sshape), with its sequence<uint8>."""
    color: bounded_str[128]
    key("color")
    x: int32
    y: int32
    shapesize: int32
    additional_payload_size: sequence[uint8]


@dataclass
@appendable
class AppendableShapeX64(IdlStruct, typename="AppendableShape"):
    """AppendableShape with x a long long (--type ashape_x64): not assignable."""
    color: bounded_str[128]
    key("color")
    x: int64
    y: int32
    shapesize: int32


@dataclass
@appendable
class LargeData(IdlStruct, typename="LargeData"):
    id: int32
    key("id")
    seq: uint32
    data: sequence[byte]  # octet, as interop.idl says (uint8 would be another type)


class Options:
    """peer_options.h's command line."""

    FLAGS = {
        "--best-effort": ("reliable", False), "--transient-local": ("transient_local", True),
        "--dispose": ("dispose", True), "--expect-dispose": ("expect_dispose", True),
        "--expect-incompatible": ("expect_incompatible", True),
        "--expect-not-alive": ("expect_not_alive", True), "--wait-go": ("wait_go", True),
        "--exclusive": ("exclusive", True), "--ordered": ("ordered", True),
    }
    VALUES = {
        "--type": ("type", str), "--topic": ("topic", str), "--depth": ("depth", int),
        "--partition": ("partition", str), "--representation": ("representation", int),
        "--lease-ms": ("lease_ms", int), "--deadline-ms": ("deadline_ms", int),
        "--strength": ("strength", int), "--count": ("count", int),
        "--instances": ("instances", int), "--prefix": ("prefix", str), "--size": ("size", int),
        "--period-ms": ("period_ms", int), "--shapesize": ("shapesize", int),
        "--wait-match": ("wait_match", int), "--expect": ("expect", int),
        "--filter": ("filter", str), "--filter-param": ("filter_param", str),
        "--read-period-ms": ("read_period_ms", int), "--domain": ("domain", int),
        "--linger-ms": ("linger_ms", int), "--timeout-s": ("timeout_s", int),
    }

    def __init__(self, argv):
        if len(argv) < 2 or argv[1] not in ("pub", "sub"):
            sys.exit(f"usage: {argv[0]} pub|sub [options] (see peer_options.h)")
        self.pub = argv[1] == "pub"
        self.type, self.topic, self.reliable, self.transient_local = "shape", "interop", True, False
        self.depth, self.partition, self.representation = 0, None, 0
        self.lease_ms, self.deadline_ms, self.strength = -1, 0, -1
        self.exclusive = self.ordered = self.dispose = self.wait_go = False
        self.expect_dispose = self.expect_incompatible = self.expect_not_alive = False
        self.count, self.instances, self.prefix, self.size, self.period_ms = 10, 1, "C", 1024, 0
        self.shapesize, self.wait_match, self.expect = 30, 1, 0
        self.filter = self.filter_param = None
        self.read_period_ms, self.domain, self.linger_ms, self.timeout_s = 0, 0, 0, 30
        args = argv[2:]
        while args:
            a = args.pop(0)
            if a in self.FLAGS:
                name, value = self.FLAGS[a]
                setattr(self, name, value)
            elif a in self.VALUES and args:
                name, conv = self.VALUES[a]
                setattr(self, name, conv(args.pop(0)))
            else:
                sys.exit(f"unknown or incomplete option {a}")
        if self.type not in TYPES:
            sys.exit(f"--type: {', '.join(TYPES)}, not {self.type}")
        self.instances = max(self.instances, 1)


TYPES = {"shape": ShapeType, "ashape": AppendableShape, "ashape5": AppendableShape5,
         "ashape_x64": AppendableShapeX64, "sshape": SuiteShape, "large": LargeData}
o = Options(sys.argv)


def say(line):
    print(line, flush=True)


def endpoint_qos():
    p = [
        Policy.Reliability.Reliable(duration(seconds=10)) if o.reliable
        else Policy.Reliability.BestEffort,
        Policy.Durability.TransientLocal if o.transient_local else Policy.Durability.Volatile,
        Policy.History.KeepLast(o.depth) if o.depth > 0 else Policy.History.KeepAll,
    ]
    if o.transient_local:
        # As cyclone_peer.c: Cyclone keeps what it offers late joiners by DURABILITY_SERVICE.
        p.append(Policy.DurabilityService(
            cleanup_delay=0,
            history=Policy.History.KeepLast(o.depth) if o.depth > 0 else Policy.History.KeepAll,
            max_samples=-1, max_instances=-1, max_samples_per_instance=-1))
    if o.lease_ms > 0:
        p.append(Policy.Liveliness.Automatic(duration(milliseconds=o.lease_ms)))
    if o.deadline_ms > 0:
        p.append(Policy.Deadline(duration(milliseconds=o.deadline_ms)))
    if o.strength >= 0 or o.exclusive:
        p.append(Policy.Ownership.Exclusive)
    if o.strength >= 0:
        p.append(Policy.OwnershipStrength(o.strength))
    if o.representation:
        p.append(Policy.DataRepresentation(
            use_cdrv0_representation=o.representation == 1,
            use_xcdrv2_representation=o.representation == 2))
    return Qos(*p)


def group_qos():
    p = []
    if o.partition:
        p.append(Policy.Partition([o.partition]))
    if o.ordered:
        p.append(Policy.PresentationAccessScope.Topic(coherent_access=False, ordered_access=True))
    return Qos(*p)


def large_bytes(n, i):
    """peer_large_byte(j, i) for j in 0..n: (7 j + i) mod 256, a pattern of period 256."""
    period = bytes((7 * j + i) & 0xFF for j in range(256))
    return (period * (n // 256 + 1))[:n]


def sample(i):
    if o.type == "large":
        return LargeData(id=i % o.instances, seq=i, data=list(large_bytes(o.size, i)))
    color = f"{o.prefix}{i % o.instances}"
    if o.type == "ashape5":
        return AppendableShape5(color=color, x=i, y=2 * i + 1, shapesize=o.shapesize, z=3 * i)
    if o.type == "sshape":
        return SuiteShape(color=color, x=i, y=2 * i + 1, shapesize=o.shapesize,
                          additional_payload_size=[i & 0xff] * 4)
    return TYPES[o.type](color=color, x=i, y=2 * i + 1, shapesize=o.shapesize)


def print_sample(s):
    if o.type == "large":
        ok = bytes(s.data) == large_bytes(len(s.data), s.seq)
        say(f"SAMPLE {s.id} {s.seq} {len(s.data)} {'ok' if ok else 'bad'}")
    else:
        ok = s.y == 2 * s.x + 1 and getattr(s, "z", 0) in (0, 3 * s.x)
        if o.type == "sshape":
            ok = ok and list(s.additional_payload_size) == [s.x & 0xff] * 4
        say(f"SAMPLE {s.color} {s.x} {s.shapesize} {'ok' if ok else 'bad'}")


class Statuses:
    """Prints the statuses that changed (as cyclone_peer.c's report_statuses)."""

    def __init__(self, ep):
        self.ep, self.matched, self.incompatible = ep, 0, False
        self.alive = self.not_alive = 0
        self.was_alive = self.lost = False

    def report(self):
        ep = self.ep
        if o.pub:
            m = ep.get_publication_matched_status()
            q = ep.get_offered_incompatible_qos_status()
            d = ep.get_offered_deadline_missed_status()
        else:
            m = ep.get_subscription_matched_status()
            q = ep.get_requested_incompatible_qos_status()
            d = ep.get_requested_deadline_missed_status()
            lv = ep.get_liveliness_changed_status()
            if (lv.alive_count, lv.not_alive_count) != (self.alive, self.not_alive):
                self.alive, self.not_alive = lv.alive_count, lv.not_alive_count
                say(f"LIVELINESS {self.alive} {self.not_alive}")
            self.was_alive |= self.alive > 0
            self.lost |= self.was_alive and self.alive == 0
        if m.current_count != self.matched:
            self.matched = m.current_count
            say(f"MATCHED {self.matched}")
        if q.total_count_change > 0:
            say(f"INCOMPATIBLE {q.last_policy_id}")
            self.incompatible = True
        if d.total_count_change > 0:
            say(f"DEADLINE_MISSED {d.total_count}")
        return self.incompatible


def linger(st, reader=None):
    end = time.monotonic() + o.linger_ms / 1000
    while time.monotonic() < end:
        st.report()
        if reader is not None:
            for s in reader.take(64):
                if s.sample_info.valid_data:
                    print_sample(s)
        time.sleep(0.01)


def run_pub(pp, topic):
    wr = DataWriter(Publisher(pp, qos=group_qos()), topic, qos=endpoint_qos())
    st = Statuses(wr)
    end = time.monotonic() + o.timeout_s
    if o.expect_incompatible:
        while not st.report():
            if time.monotonic() > end:
                say("TIMEOUT incompatible")
                return 2
            time.sleep(0.01)
        linger(st)
        say("DONE")
        return 0
    while st.matched < o.wait_match:
        st.report()
        if time.monotonic() > end:
            say("TIMEOUT match")
            return 2
        time.sleep(0.01)
    if o.wait_go:
        say("READY")
        if not sys.stdin.readline():
            print("--wait-go: stdin closed, writing anyway", file=sys.stderr)
    for i in range(o.count):
        wr.write(sample(i))
        if o.period_ms:
            time.sleep(o.period_ms / 1000)
    if o.dispose:
        wr.dispose(sample(0))
    say(f"WRITTEN {o.count}")
    if o.reliable and o.wait_match > 0:
        try:
            acked = wr.wait_for_acks(duration(seconds=o.timeout_s))
        except DDSException:
            acked = False
        say("ACKED" if acked else "TIMEOUT acks")
    linger(st)
    say("DONE")
    return 0


def disposed_key(s):
    return s.id if o.type == "large" else s.color


def run_sub(pp, topic):
    rd = DataReader(Subscriber(pp, qos=group_qos()), topic, qos=endpoint_qos())
    st = Statuses(rd)
    got, disposed = 0, False
    end = time.monotonic() + o.timeout_s
    while True:
        st.report()
        taken = rd.take(64)
        for s in taken:
            info = s.sample_info
            if info.valid_data:
                print_sample(s)
                got += 1
            if info.instance_state == NOT_ALIVE_DISPOSED:
                # An invalid sample carries the key the dispose named (deserialized from it).
                key_of = s if info.valid_data else s.key_sample
                say(f"DISPOSED {disposed_key(key_of) if key_of is not None else '?'}")
                disposed = True
        done = (got >= o.expect and (not o.expect_dispose or disposed)
                and (not o.expect_incompatible or st.incompatible)
                and (not o.expect_not_alive or st.lost))
        if done:
            break
        if time.monotonic() > end:
            say(f"TIMEOUT got {got}")
            return 2
        time.sleep(o.read_period_ms / 1000 if o.read_period_ms > 0 else 0 if taken else 0.005)
    linger(st, rd)
    say("DONE")
    return 0


def main():
    if not o.pub and o.filter:
        say("UNSUPPORTED Cyclone DDS has no SQL content filter (only a local function)")
        return 3
    pp = DomainParticipant(o.domain)
    topic = Topic(pp, o.topic, TYPES[o.type])
    return run_pub(pp, topic) if o.pub else run_sub(pp, topic)


if __name__ == "__main__":
    sys.exit(main())
