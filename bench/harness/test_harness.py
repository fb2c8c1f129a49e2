"""Unit tests of the harness's pure parts: the ddsperf converter, the merging of subscribers,
medians, ratios and targets, the Cyclone adapter's choice of cyclone_ping or ddsperf, the
isolation scenario (its processes, records, ratios, targets and the order of its runs), the
in-process scenario (Tachyon's write-take, HDDS's output read into a record).
`python3 -m unittest discover -s bench/harness -t bench`"""
import json
import os
import stat
import sys
import tempfile
import types
import unittest

from harness import ddsperf, report
from harness.impls import (Cyclone, FastDds, Hdds, Iceoryx2, NoResult, RunContext, Tachyon, UdpFloor, all_impls,
                           merge_subscribers, parse_hdds)
from harness.netns import Loopback
from harness.scenarios import (SAME, SPLIT, TACHYON_ONLY, Case, Scenario, Spec, build_matrix, estimate,
                               schedule)

PING = """\
[4332] participant vm:4332: new (self)
[4332] 1.000  vm:4331 size 32 mean 50.000us min 5.000us 50% 40.000us 90% 60.000us 99% 90.000us max 9000.000us cnt 100
[4332] 1.000  rss:9.8MB vcsw:2757 ivcsw:804
[4332] 2.000  vm:4331 size 32 mean 10.000us min 4.000us 50% 8.000us 90% 12.000us 99% 20.000us max 100.000us cnt 3000
[4332] 3.000  vm:4331 size 32 mean 20.000us min 6.000us 50% 16.000us 90% 24.000us 99% 40.000us max 300.000us cnt 1000
[4332] 3.000  rss:10.5MB vcsw:2757 ivcsw:804
"""

SUB = """\
[4359] 0.500  size 1024 total 0 lost 0 delta 0 lost 0 rate 0.00 kS/s 0.00 Mb/s (0.00 kS/s 0.00 Mb/s)
[4359] 1.001  size 1024 total 100 lost 0 delta 100 lost 0 rate 0.10 kS/s 0.82 Mb/s (0.10 kS/s 0.82 Mb/s)
[4359] 2.001  size 1024 total 1100 lost 0 delta 1000 lost 2 rate 1.00 kS/s 8.19 Mb/s (0.55 kS/s 4.51 Mb/s)
[4359] 3.001  size 1024 total 3100 lost 0 delta 2000 lost 0 rate 2.00 kS/s 16.38 Mb/s (1.03 kS/s 8.45 Mb/s)
"""


def config():
    return {"size": 32, "payload_bytes": 1024}


class DdsperfTest(unittest.TestCase):
    def test_ping_doubles_and_drops_the_warmup_line(self):
        spec = Spec("latency", 32, duration=2.0, warmup=0.5)
        rec = ddsperf.record("ping", spec, config(), PING)
        lat = rec["latency"]
        self.assertEqual(lat["count"], 4000)
        self.assertEqual(lat["min"], 8000)  # 4 µs half -> 8 µs round trip, in ns
        self.assertEqual(lat["max"], 600_000)
        self.assertEqual(lat["mean"], round((20_000 * 3000 + 40_000 * 1000) / 4000))
        self.assertEqual(lat["p50"], 16_000)  # weighted median: the 3000-count second
        self.assertIsNone(lat["p99_9"])
        self.assertEqual(rec["approximate"], ["p50", "p90", "p99"])
        self.assertEqual([t["t"] for t in rec["timeline"]], [1.0, 2.0])
        self.assertEqual(rec["ddsperf_reported_rss_kib"], int(10.5 * 1024))

    def test_sub_counts_the_measured_seconds(self):
        spec = Spec("throughput", 1024, duration=2.0, warmup=1.0)
        rec = ddsperf.record("sub", spec, config(), SUB)
        tp = rec["throughput"]
        self.assertEqual(tp["samples"], 3000)
        self.assertEqual(tp["lost"], 2)
        self.assertAlmostEqual(tp["seconds"], 2.0)
        self.assertAlmostEqual(tp["samples_per_s"], 1500.0)
        self.assertAlmostEqual(tp["mbit_per_s"], 3000 * 1024 * 8 / 2.0 / 1e6)

    def test_no_lines_no_record(self):
        self.assertIsNone(ddsperf.record("ping", Spec("latency", 32), config(), "nothing\n"))


class MergeTest(unittest.TestCase):
    def test_subscribers_are_averaged_and_summed(self):
        def rec(rate):
            return {"throughput": {"samples": rate, "lost": 1, "bytes": rate * 10, "seconds": 1.0,
                                   "samples_per_s": float(rate), "mbit_per_s": rate * 80 / 1e6}}
        merged = merge_subscribers([rec(100), rec(300)])
        self.assertEqual(merged["throughput"]["samples_per_s"], 200.0)
        self.assertEqual(merged["throughput"]["aggregate_samples_per_s"], 400.0)
        self.assertEqual(merged["throughput"]["lost"], 2)
        self.assertEqual(len(merged["throughput"]["per_subscriber"]), 2)


def run_record(case, impl, p50, error=None, approximate=()):
    return {"_file": f"runs/{case.case_id}-{impl}.json",
            "latency": {"p50": p50, "p90": p50, "p99": p50, "p99_9": None if approximate else p50,
                        "max": 10 * p50, "mean": p50, "stddev": 1, "count": 100},
            "approximate": list(approximate),
            "harness": {"case_id": case.case_id, "implementation": impl, "label": impl, "error": error,
                        "cpu_percent_total": 50.0, "peak_rss_kib_max": 2048, "deviations": []}}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.case = Case("latency", "latency-32-same", "32 B, same vCPU", Spec("latency", 32), SAME)
        self.scenario = Scenario("latency", 1, "Latency", "latency", "µs", [self.case])

    def test_medians_ratios_and_targets(self):
        records = [run_record(self.case, "tachyon", p) for p in (10_000, 12_000, 30_000)]
        records += [run_record(self.case, "cyclone", p, approximate=["p50"]) for p in (20_000, 20_000)]
        records.append(run_record(self.case, "cyclone", 1, error="timeout"))
        agg = report.aggregate(records)
        self.assertEqual(agg["latency-32-same"]["tachyon"]["medians"]["p50"], 12_000)
        self.assertEqual(agg["latency-32-same"]["cyclone"]["ok"], 2)
        self.assertEqual(agg["latency-32-same"]["cyclone"]["errors"], ["timeout"])
        r = report.ratios(agg["latency-32-same"])["tachyon / cyclone"]
        self.assertAlmostEqual(r["ratios"]["p50"], 0.6)
        rows = report.targets([self.scenario], agg)
        p50 = next(t for t in rows if t["metric"] == "p50" and t["against"] == "cyclone")
        self.assertEqual(p50["status"], "met")
        p999 = next(t for t in rows if t["metric"] == "p99_9" and t["against"] == "cyclone")
        self.assertTrue(p999["status"].startswith("not measurable"))
        udp = next(t for t in rows if t["against"] == "udp")
        self.assertTrue(udp["status"].startswith("not measured"))

    def test_tachyons_default_gets_target_rows_of_its_own_where_it_ran(self):
        records = [run_record(self.case, "tachyon", 10_000), run_record(self.case, "cyclone", 20_000)]
        rows = report.targets([self.scenario], report.aggregate(records))
        self.assertFalse([t for t in rows if t.get("of") == "tachyon-watch"])
        records.append(run_record(self.case, "tachyon-watch", 5_000))
        rows = report.targets([self.scenario], report.aggregate(records))
        watch = next(t for t in rows if t.get("of") == "tachyon-watch" and t["metric"] == "p50"
                     and t["against"] == "cyclone")
        self.assertAlmostEqual(watch["ratio"], 0.25)
        self.assertIn("Tachyon's default: watch", watch["target"])
        plain = next(t for t in rows if "of" not in t and t["metric"] == "p50" and t["against"] == "cyclone")
        self.assertAlmostEqual(plain["ratio"], 0.5)

    def test_markdown_marks_approximate_figures(self):
        records = [run_record(self.case, "tachyon", 10_000),
                   run_record(self.case, "cyclone", 20_000, approximate=["p50"])]
        agg = report.aggregate(records)
        md = report.markdown({"date": "d", "cpu": "c", "vcpus": 2, "kernel": "k", "commit": "x", "branch": "b", "load_end": 1.0},
                             {"form": "short", "reps": 1, "command": "run.py"}, [self.scenario], agg,
                             {}, {}, report.targets([self.scenario], agg), ["tachyon", "cyclone"], 1.0)
        self.assertIn("| 32 B, same vCPU | cyclone | ~20.0 |", md)
        self.assertIn("*tachyon / cyclone* | ~0.50 |", md)


class PlanTest(unittest.TestCase):
    def ctx(self):
        return RunContext(domain=7, port=20014, net=Loopback(), path_prefix="/r/raw/x")

    def test_tachyon_ping_pong(self):
        case = Case("latency", "l", "l", Spec("latency", 32, duration=2.0, warmup=0.5), SAME)
        pong, ping = Tachyon("/repo").plan(case, self.ctx())
        self.assertEqual(pong.argv[:3], ["/repo/target/release/tachyon", "perf", "pong"])
        self.assertEqual((pong.side, pong.measuring, ping.side, ping.measuring), ("b", False, "a", True))
        self.assertIn("--json", ping.argv)
        self.assertEqual(ping.json_path, "/r/raw/x-ping.json")
        self.assertEqual(ping.argv[ping.argv.index("--domain") + 1], "7")
        self.assertEqual(ping.argv[ping.argv.index("--depth") + 1], "1")
        # Kernel UDP, as the other implementations: not shared memory between the processes.
        for p in (ping, pong):
            self.assertEqual(p.argv[p.argv.index("--transport") + 1], "udp")

    def test_cyclone_fanout_waits_for_its_subscribers(self):
        spec = Spec("throughput", 1024, history="keep-all", subscribers=4, unicast=True)
        procs = Cyclone("/repo").plan(Case("fanout", "f", "f", spec, SPLIT), self.ctx())
        self.assertEqual([p.role for p in procs], ["sub0", "sub1", "sub2", "sub3", "pub"])
        pub = procs[-1].argv
        self.assertIn("-Qminmatch:4", pub)
        self.assertEqual(pub[pub.index("-k") + 1], "all")
        self.assertIn("AllowMulticast", procs[0].env["CYCLONEDDS_URI"])

    def test_udp_floor_addresses(self):
        case = Case("latency", "l", "l", Spec("latency", 32), SAME)
        pong, ping = UdpFloor("/repo").plan(case, self.ctx())
        self.assertEqual(ping.argv[1], "floor")
        self.assertEqual(ping.argv[-4:], ["--bind", "127.0.0.1:20014", "--peer", "127.0.0.1:20015"])
        self.assertEqual(pong.argv[-4:], ["--bind", "127.0.0.1:20015", "--peer", "127.0.0.1:20014"])
        self.assertNotIn("--subscribers", ping.argv)
        self.assertIsNotNone(UdpFloor("/repo").unsupported(Case("latency", "l", "l", Spec("latency", 1 << 20), SAME)))


# A record as cyclone_ping wrote it (a real run, histogram shortened).
CYCLONE_PING_RECORD = {
    "schema": "tachyon-perf/1", "implementation": "cyclone", "version": "0.10.2 (cyclone_ping)",
    "role": "ping",
    "config": {"size": 32, "payload_bytes": 32, "type": "simple", "reliability": "reliable",
               "history": "keep-last", "depth": 1, "durability": "volatile", "keys": 1, "rate": None,
               "burst": 1, "delivery": "listener", "multicast": True, "subscribers": 1,
               "warmup_s": 0.5, "duration_s": 2.001601176},
    "latency": {"count": 73302, "lost": 0, "min": 22021, "mean": 27234, "p50": 25268, "p90": 28794,
                "p99": 53721, "p99_9": 136095, "p99_99": 756908, "max": 2103029, "stddev": 18821,
                "pdv": 3493},
    "histogram": [[22208, 1], [23110, 9], [23341, 58], [1717697, 1], [2116875, 1]],
    "throughput": None,
    "timeline": [{"t": 1.000075, "count": 36790, "p50": 25197, "max": 1685276,
                  "samples_per_s": 36787.256, "mbit_per_s": 0.0},
                 {"t": 2.001597, "count": 36511, "p50": 25328, "max": 2103029,
                  "samples_per_s": 36455.513, "mbit_per_s": 0.0}],
    "process": {"cpu_user_s": 0.372821, "cpu_sys_s": 0.624103, "cpu_percent": 49.807, "peak_rss_kib": 8000},
    "discovery_ns": 3616463,
}

# The fields of bench/SCHEMA.md's record (and of its parts) every ping record carries.
SCHEMA_FIELDS = {
    "": {"schema", "implementation", "version", "role", "config", "latency", "histogram",
         "throughput", "timeline", "process", "discovery_ns"},
    "config": {"size", "payload_bytes", "type", "reliability", "history", "depth", "durability", "keys",
               "rate", "burst", "delivery", "multicast", "subscribers", "warmup_s", "duration_s"},
    "latency": {"count", "lost", "min", "mean", "p50", "p90", "p99", "p99_9", "p99_99", "max", "stddev", "pdv"},
    "process": {"cpu_user_s", "cpu_sys_s", "cpu_percent", "peak_rss_kib"},
}


class CycloneTest(unittest.TestCase):
    """Cyclone DDS: cyclone_ping for latency when it is built, ddsperf otherwise and for throughput."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.ctx = RunContext(domain=7, port=20014, net=Loopback(),
                              path_prefix=os.path.join(self.root, "x"))

    def tearDown(self):
        self.tmp.cleanup()

    def build_cyclone_ping(self):
        path = os.path.join(self.root, "target", "bench", "cyclone_ping")
        os.makedirs(os.path.dirname(path))
        with open(path, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def cyclone(self, ddsperf_path="/nonexistent/ddsperf"):
        impl = Cyclone(self.root)
        impl.binary = ddsperf_path
        return impl

    def test_latency_runs_cyclone_ping_on_both_sides(self):
        path = self.build_cyclone_ping()
        spec = Spec("latency", 1024, type="complex", history="keep-all", rate=1000.0, duration=2.0, warmup=0.5)
        case = Case("bound", "b", "b", spec, SAME)
        impl = self.cyclone()
        self.assertIsNone(impl.unavailable())
        self.assertIsNone(impl.unsupported(case))  # complex type and keep-all: cyclone_ping has both
        self.assertEqual(impl.deviations(case), [])
        pong, ping = impl.plan(case, self.ctx)
        self.assertEqual((pong.argv[:2], ping.argv[:2]), ([path, "pong"], [path, "ping"]))
        self.assertEqual(ping.argv[ping.argv.index("--history") + 1], "keep-all")
        self.assertEqual(ping.argv[ping.argv.index("--rate") + 1], "1000")
        self.assertEqual(ping.argv[ping.argv.index("--type") + 1], "complex")
        self.assertEqual(ping.json_path, self.ctx.path_prefix + "-ping.json")
        self.assertTrue(ping.measuring and not pong.measuring)

    def test_cyclone_ping_records_give_exact_percentiles(self):
        self.build_cyclone_ping()
        case = Case("latency", "latency-32-same", "32 B, same vCPU", Spec("latency", 32), SAME)
        impl = self.cyclone()
        _, ping = impl.plan(case, self.ctx)
        with open(ping.json_path, "w", encoding="utf-8") as f:
            json.dump(CYCLONE_PING_RECORD, f)
        rec = impl.record(case, self.ctx, [types.SimpleNamespace(spec=ping)])
        self.assertEqual(rec["latency"]["p99_9"], 136095)
        rec["_file"] = "runs/x.json"
        rec["harness"] = {"case_id": case.case_id, "implementation": "cyclone", "label": "Cyclone DDS",
                          "error": None, "cpu_percent_total": 50.0, "peak_rss_kib_max": 8000,
                          "deviations": []}
        agg = report.aggregate([rec, run_record(case, "tachyon", 20_000)])
        self.assertEqual(agg[case.case_id]["cyclone"]["approximate"], [])
        scenario = Scenario("latency", 1, "Latency", "latency", "µs", [case])
        p999 = next(t for t in report.targets([scenario], agg)
                    if t["metric"] == "p99_9" and t["against"] == "cyclone")
        self.assertIsNotNone(p999["ratio"])
        self.assertFalse(p999["approximate"])

    def test_cyclone_ping_record_has_every_schema_field(self):
        for part, fields in SCHEMA_FIELDS.items():
            record = CYCLONE_PING_RECORD[part] if part else CYCLONE_PING_RECORD
            self.assertEqual(set(record), fields, part or "record")
        hist = CYCLONE_PING_RECORD["histogram"]
        self.assertEqual(hist, sorted(hist))

    def test_latency_falls_back_to_ddsperf(self):
        spec = Spec("latency", 32, history="keep-all")
        case = Case("bound", "b", "b", spec, SAME)
        impl = self.cyclone("/usr/bin/true")
        pong, ping = impl.plan(case, self.ctx)
        self.assertEqual((pong.argv[0], ping.argv[0]), ("/usr/bin/true", "/usr/bin/true"))
        self.assertIn("ping", ping.argv)
        self.assertEqual(impl.deviations(case), ["ddsperf's ping and pong are always KEEP_LAST(1)"])
        complex_case = Case("variants", "v", "v", Spec("latency", 1024, type="complex"), SAME)
        self.assertIn("complex", impl.unsupported(complex_case))

    def test_throughput_stays_with_ddsperf(self):
        self.build_cyclone_ping()
        case = Case("throughput", "t", "t", Spec("throughput", 32, history="keep-all"), SPLIT)
        impl = self.cyclone()
        self.assertIsNone(impl.unavailable())  # cyclone_ping alone is enough to run something
        self.assertIn("cyclonedds-tools", impl.unsupported(case))
        impl.binary = "/usr/bin/true"
        sub, pub = impl.plan(case, self.ctx)
        self.assertEqual((sub.argv[0], pub.argv[0]), ("/usr/bin/true", "/usr/bin/true"))

    def test_unavailable_names_both_programs(self):
        why = self.cyclone().unavailable()
        self.assertIn("cyclonedds-tools", why)
        self.assertIn("cyclone_ping", why)

    def test_bin_replaces_either_program(self):
        impls = all_impls(self.root, binaries={"cyclone": "/opt/ddsperf", "cyclone_ping": "/opt/cping"})
        cyclone = next(i for i in impls if i.name == "cyclone")
        self.assertEqual((cyclone.binary, cyclone.ping.binary), ("/opt/ddsperf", "/opt/cping"))


class MatrixTest(unittest.TestCase):
    def test_short_form_fits_the_budget_with_every_implementation(self):
        # Scenarios 10 and 11 (AF_XDP, root only) have a budget of their own, below.
        scenarios = [s for s in build_matrix(True, [SAME, SPLIT]) if s.id not in ("xdp", "interference")]
        cases = [c for s in scenarios for c in s.cases]
        # Worst case: all four implementations run every case they can (the Tachyon-only
        # scenarios: Tachyon alone). The bound for the whole short run: 20 minutes.
        # The same-host scenario's UDP references are Tachyon's alone too.
        alone = [c for c in cases if c.scenario in TACHYON_ONLY
                 or (c.scenario == "shm" and c.spec.transport == "udp")]
        # In process (scenario 8) two implementations run each case: Tachyon and HDDS, or
        # Tachyon and Fast DDS.
        pairs = [c for c in cases if c.scenario == "intra"]
        shared = [c for c in cases if c not in alone and c not in pairs]
        only = alone
        self.assertTrue(only)
        self.assertLess(estimate({"all": shared * 4 + pairs * 2 + only}, 3), 20 * 60)

    def test_the_xdp_scenario_short_form_takes_under_seven_minutes(self):
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        xdp = next(s for s in build_matrix(True, [SAME, SPLIT]) if s.id == "xdp")
        impls = all_impls(root, ("blocking", "busy-poll"), tachyon_wakes=("blocking", "busy-poll"))
        # The budget is of a machine with every peer installed: Cyclone DDS's ddsperf stands
        # in as any executable (on a fresh machine the harness's tests run before
        # scripts/test.sh installs it, and without it Cyclone DDS would run nothing).
        for i in impls:
            if i.name == "cyclone":
                i.binary = sys.executable
        runs = {i.name: [c for c in xdp.cases if i.unsupported(c) is None] for i in impls}
        self.assertEqual(sorted(n for n, cs in runs.items() if cs),
                         ["cyclone", "tachyon", "tachyon-busy-poll", "tachyon-xdp",
                          "tachyon-xdp-busy-poll", "udp", "udp-busy-poll", "xdp", "xdp-busy-poll"])
        # Seven: the raw AF_XDP floors run the bound too (10 s each, the machine's own max / mean).
        self.assertLess(estimate(runs, 3), 7 * 60)
        # Spinning needs a vCPU per process; the raw AF_XDP floors run the bound (the machine's
        # own max / mean), the raw UDP floors do not.
        self.assertFalse([c for c in runs["xdp-busy-poll"] if c.placement.name == "same"])
        self.assertFalse([c for c in runs["udp"] if c.spec.rate])
        self.assertEqual([c.case_id for c in runs["xdp-busy-poll"] if c.spec.rate], ["xdp-bound"])
        self.assertEqual([c.case_id for c in runs["xdp"] if c.spec.rate], ["xdp-bound"])

    def test_the_interference_scenario_runs_each_path_under_each_load(self):
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        inter = next(s for s in build_matrix(True, [SAME]) if s.id == "interference")
        impls = all_impls(root, ("blocking", "busy-poll"), tachyon_wakes=("blocking", "busy-poll"))
        runs = {i.name: [c.case_id for c in inter.cases if i.unsupported(c) is None] for i in impls}
        self.assertEqual(runs["tachyon"], ["interference-udp-alone", "interference-udp-iperf3",
                                           "interference-udp-bulk"])
        self.assertEqual(runs["tachyon-xdp"], ["interference-xdp-alone", "interference-xdp-iperf3",
                                               "interference-xdp-bulk"])
        self.assertFalse([n for n, cs in runs.items() if cs and n not in ("tachyon", "tachyon-xdp")])
        self.assertLess(estimate({"t": [c for c in inter.cases]}, 3), 5 * 60)
        # The iperf3 case's processes: the server beside the pong, the client beside the ping.
        tx = next(i for i in impls if i.name == "tachyon-xdp")
        case = next(c for c in inter.cases if c.case_id == "interference-xdp-iperf3")

        class Net:
            def address(self, side):
                return {"a": "10.0.0.1", "b": "10.0.0.2"}[side]

        ctx = RunContext(domain=3, port=5300, net=Net(), path_prefix="/tmp/x")
        procs = {p.role: p for p in tx.plan(case, ctx)}
        self.assertEqual(procs["iperf3-server"].side, "b")
        client = procs["iperf3-client"]
        self.assertEqual((client.side, client.argv[:3]), ("a", ["iperf3", "-c", "10.0.0.2"]))
        self.assertIn("--bidir", client.argv)
        ping = procs["ping"].argv
        self.assertEqual(ping[ping.index("--transport") + 1], "xdp")
        self.assertEqual(ping[ping.index("--xdp-queue") + 1], "1")
        self.assertIn("--critical", ping)

    def test_tachyons_wake_modes_choose_how_its_receive_threads_wait(self):
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        lat = next(s for s in build_matrix(True, [SAME, SPLIT]) if s.id == "latency")
        impls = {i.name: i for i in all_impls(root, tachyon_wakes=("blocking", "watch", "busy-poll"))}
        spec = lat.cases[0].spec
        ctx = RunContext(domain=3, port=5300, net=None, path_prefix="/tmp/x")
        # Blocking at once, as Cyclone DDS's threads do; the default configuration (watching
        # first) adds nothing; busy polling spins.
        self.assertEqual(impls["tachyon"].common_options(spec, ctx)[-2:], ["--spin", "0us"])
        watch = impls["tachyon-watch"].common_options(spec, ctx)
        self.assertFalse([o for o in watch if o in ("--spin", "--busy-poll")])
        self.assertIn("--busy-poll", impls["tachyon-busy-poll"].common_options(spec, ctx))
        # Watching yields its CPU between looks: it runs on one vCPU too.
        self.assertEqual([c.placement.name for c in lat.cases if impls["tachyon-watch"].unsupported(c) is None],
                         [c.placement.name for c in lat.cases])

    def test_isolation_compares_three_loads_of_one_critical_ping(self):
        iso = next(s for s in build_matrix(True, [SAME]) if s.id == "isolation")
        self.assertTrue(iso.interleave)
        self.assertEqual([c.case_id for c in iso.cases],
                         ["isolation-alone", "isolation-bulk", "isolation-storm"])
        alone, bulk, storm = (c.spec for c in iso.cases)
        self.assertEqual((alone.size, alone.rate, alone.history, alone.critical), (32, 1000.0, "keep-all", True))
        self.assertEqual((alone.bulk_size, alone.storm), (None, 0))
        self.assertEqual((bulk.bulk_size, bulk.storm), (65536, 0))
        self.assertEqual((storm.bulk_size, storm.storm), (65536, 1000))
        # Only the load differs, and every case runs on the same placement.
        from dataclasses import replace
        self.assertEqual(replace(storm, bulk_size=None, storm=0), alone)
        self.assertEqual({c.placement for c in iso.cases}, {SPLIT})
        long_iso = next(s for s in build_matrix(False, [SAME]) if s.id == "isolation")
        self.assertGreater(long_iso.cases[0].spec.duration, alone.duration)
        # --storm N: the flood's size, in the spec and the labels.
        flood = next(s for s in build_matrix(True, [SAME], 10000) if s.id == "isolation")
        self.assertEqual(flood.cases[2].spec.storm, 10000)
        self.assertIn("storm of 10,000", flood.cases[2].label)
        self.assertIn("10,000 participants", flood.title)


class ScheduleTest(unittest.TestCase):
    def test_implementations_alternate_and_interleaved_cases_too(self):
        plain = Scenario("latency", 1, "t", "latency", "n")
        iso = Scenario("isolation", 7, "t", "latency", "n", interleave=True)
        a, b = types.SimpleNamespace(name="A"), types.SimpleNamespace(name="B")
        c1, c2 = (Case("latency", f"l{i}", "l", Spec("latency", 32), SAME) for i in (1, 2))
        i1, i2, i3 = (Case("isolation", f"i{i}", "i", Spec("latency", 32), SPLIT) for i in (1, 2, 3))
        plan = [(plain, c1, [a, b], {}), (plain, c2, [a], {}),
                (iso, i1, [a], {}), (iso, i2, [a], {}), (iso, i3, [a], {})]
        order = [(case.case_id, impl.name, rep) for _, case, impl, rep in schedule(plan, 2)]
        self.assertEqual(order, [
            ("l1", "A", 0), ("l1", "B", 0), ("l1", "A", 1), ("l1", "B", 1),
            ("l2", "A", 0), ("l2", "A", 1),
            ("i1", "A", 0), ("i2", "A", 0), ("i3", "A", 0),
            ("i1", "A", 1), ("i2", "A", 1), ("i3", "A", 1)])


def iso_case(which):
    return next(c for s in build_matrix(True, [SAME]) if s.id == "isolation" for c in s.cases
                if c.case_id == f"isolation-{which}")


class IsolationTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.ctx = RunContext(domain=9, port=20018, net=Loopback(),
                              path_prefix=os.path.join(self.tmp.name, "x"))

    def tearDown(self):
        self.tmp.cleanup()

    def test_alone_is_a_critical_ping_pong(self):
        pong, ping = Tachyon("/repo").plan(iso_case("alone"), self.ctx)
        self.assertEqual((pong.role, ping.role), ("pong", "ping"))
        for p in (pong, ping):
            self.assertIn("--critical", p.argv)
            self.assertEqual(p.argv[p.argv.index("--rt-priority") + 1], "50")
            self.assertNotIn("--bulk-size", p.argv)
        self.assertEqual(ping.argv[ping.argv.index("--rate") + 1], "1000")
        self.assertEqual(ping.argv[ping.argv.index("--history") + 1], "keep-all")

    def test_storm_case_runs_a_bulk_subscriber_and_a_storm(self):
        procs = Tachyon("/repo").plan(iso_case("storm"), self.ctx)
        self.assertEqual([p.role for p in procs], ["pong", "bulk-sub", "ping", "storm"])
        pong, sub, ping, storm = procs
        self.assertEqual([p.side for p in procs], ["b", "b", "a", "b"])
        self.assertEqual([p.measuring for p in procs], [False, True, True, False])
        # The load runs at the default scheduling policy, below the critical threads.
        self.assertEqual(["--rt-priority" in p.argv for p in procs], [True, False, True, False])
        topic = ping.argv[ping.argv.index("--bulk-topic") + 1]
        self.assertEqual(ping.argv[ping.argv.index("--bulk-size") + 1], "65536")
        self.assertEqual(sub.argv[sub.argv.index("--topic") + 1], topic)
        self.assertEqual(sub.argv[sub.argv.index("--history") + 1], "keep-all")
        self.assertEqual(sub.argv[sub.argv.index("--duration") + 1], ping.argv[ping.argv.index("--duration") + 1])
        self.assertEqual(storm.argv[2], "storm")
        self.assertEqual(storm.argv[storm.argv.index("--participants") + 1], "1000")
        self.assertEqual(storm.argv[storm.argv.index("--domain") + 1], "9")
        # Silent during the warm-up, then announcing past the measured part.
        self.assertEqual(storm.argv[storm.argv.index("--warmup") + 1], "1")
        self.assertGreater(float(storm.argv[storm.argv.index("--duration") + 1]), 10)
        self.assertIsNotNone(storm.json_path)

    def test_only_tachyon_runs_it(self):
        for impl in (Cyclone("/repo"), FastDds("/repo"), UdpFloor("/repo")):
            self.assertIn("no critical writers", impl.unsupported(iso_case("alone")), impl.name)
        self.assertIsNone(Tachyon("/repo").unsupported(iso_case("storm")))

    def write(self, spec, record):
        with open(spec.json_path, "w", encoding="utf-8") as f:
            json.dump(record, f)

    def test_the_record_carries_the_load_both_sides_saw(self):
        impl, case = Tachyon("/repo"), iso_case("storm")
        procs = [types.SimpleNamespace(spec=p) for p in impl.plan(case, self.ctx)]
        specs = {p.spec.role: p.spec for p in procs}
        ping = dict(CYCLONE_PING_RECORD, implementation="tachyon",
                    bulk={"samples": 1000, "samples_per_s": 500.0, "mbit_per_s": 262.0})
        self.write(specs["ping"], ping)
        self.write(specs["bulk-sub"], {"throughput": {"samples": 990, "mbit_per_s": 260.0}})
        with self.assertRaisesRegex(NoResult, "storm"):
            impl.record(case, self.ctx, procs)
        self.write(specs["storm"], {"role": "storm", "storm": {"announcements": 10000, "announcements_per_s": 1000.0}})
        rec = impl.record(case, self.ctx, procs)
        self.assertEqual(rec["bulk_received"]["mbit_per_s"], 260.0)
        self.assertEqual(rec["storm"]["announcements"], 10000)
        self.write(specs["ping"], dict(ping, bulk={"samples": 0}))
        with self.assertRaisesRegex(NoResult, "bulk writer wrote nothing"):
            impl.record(case, self.ctx, procs)

    def iso_record(self, which, p999, mx, rep=1):
        case = iso_case(which)
        rec = run_record(case, "tachyon", 50_000)
        rec["_file"] = f"runs/{case.case_id}-r{rep}.json"
        rec["latency"].update(p99_9=p999, max=mx, lost=2)
        if which != "alone":
            rec["bulk"] = {"samples_per_s": 4000.0, "mbit_per_s": 2097.0}
            rec["bulk_received"] = {"mbit_per_s": 2090.0}
        if which == "storm":
            rec["storm"] = {"announcements_per_s": 1000.0}
        return rec

    def test_ratios_to_alone_and_targets(self):
        iso = next(s for s in build_matrix(True, [SAME]) if s.id == "isolation")
        records = [self.iso_record("alone", 100_000, 200_000), self.iso_record("alone", 300_000, 400_000, 2),
                   self.iso_record("bulk", 220_000, 300_000), self.iso_record("storm", 400_000, 2_000_000)]
        agg = report.aggregate(records)
        m = agg["isolation-bulk"]["tachyon"]["medians"]
        self.assertEqual((m["bulk_mbit_per_s"], m["bulk_received_mbit_per_s"], m["pings_lost"]), (2097.0, 2090.0, 2))
        r = report.vs_baseline(iso, agg)
        self.assertEqual(set(r), {"isolation-bulk", "isolation-storm"})
        self.assertAlmostEqual(r["isolation-bulk"]["p99_9"], 1.1)  # 220 / median(100, 300)
        self.assertAlmostEqual(r["isolation-storm"]["max"], 2_000_000 / 300_000)
        rows = {(t["target"], t["metric"]): t for t in report.targets([iso], agg)}
        bulk999 = rows[("isolation: critical p99.9, + 64 KiB bulk", "p99_9")]
        self.assertEqual((bulk999["status"], bulk999["bound"]), ("met", "≤ 1.2×"))
        self.assertEqual(bulk999["against"], "critical alone (same run)")
        self.assertTrue(rows[("isolation: critical max, + bulk + storm of 1,000", "max")]["status"].startswith("missed"))
        md = report.markdown({"date": "d", "cpu": "c", "vcpus": 2, "kernel": "k", "commit": "x", "branch": "b",
                              "load_end": 1.0}, {"form": "short", "reps": 2, "command": "run.py"}, [iso], agg,
                             {}, {}, report.targets([iso], agg), ["tachyon"], 1.0)
        self.assertIn("| + 64 KiB bulk | *loaded / alone* | 1.00 | 1.00 | 1.10 | 1.00 | 1.00 |", md)
        self.assertIn("bulk Mbit/s recv.", md)
        summary = report.summary_json({}, {}, [iso], agg, {}, {}, [])
        cases = {c["case_id"]: c for c in summary["scenarios"][0]["cases"]}
        self.assertNotIn("vs_alone", cases["isolation-alone"])
        self.assertAlmostEqual(cases["isolation-bulk"]["vs_alone"]["p99_9"], 1.1)

    def test_no_baseline_no_ratio(self):
        iso = next(s for s in build_matrix(True, [SAME]) if s.id == "isolation")
        agg = report.aggregate([self.iso_record("bulk", 220_000, 300_000)])
        self.assertEqual(report.vs_baseline(iso, agg), {})
        statuses = {t["status"] for t in report.targets([iso], agg)}
        self.assertIn("not measured (critical alone (same run) has no result)", statuses)


if __name__ == "__main__":
    unittest.main()


HDDS_OUTPUT = """\
=== HDDS Latency Benchmark ===

[OK] Created participant
--- Latency Statistics ---
Messages:     10000
Min latency:     320 ns
Mean latency:    366 ns
p50 latency:     341 ns
p95 latency:     420 ns
p99 latency:     531 ns
Max latency:   47068 ns

Throughput:   1795.2 k msg/s
"""


class InProcessTest(unittest.TestCase):
    def case(self, size=16):
        s = next(s for s in build_matrix(False, [SAME, SPLIT]) if s.id == "intra")
        return next(c for c in s.cases if c.spec.size == size and c.spec.kind == "intra")

    def round_trip(self, delivery):
        s = next(s for s in build_matrix(True, [SAME, SPLIT]) if s.id == "intra")
        return next(c for c in s.cases if c.spec.kind == "intra-rt" and c.spec.delivery == delivery)

    def test_round_trip_in_one_process_against_fastdds(self):
        ctx = RunContext(domain=7, port=20014, net=Loopback(), path_prefix="/r/raw/x")
        for delivery, cpus in (("listener", "0"), ("poll", "0,1")):
            case = self.round_trip(delivery)
            for impl, argv0 in ((Tachyon("/repo"), ["/repo/target/release/tachyon", "perf", "intra"]),
                                (FastDds("/repo"), ["/repo/target/bench/fastdds_perf", "intra"])):
                self.assertIsNone(impl.unsupported(case), impl.name)
                (p,) = impl.plan(case, ctx)
                self.assertEqual(p.argv[:len(argv0)], argv0)
                self.assertEqual(p.argv[p.argv.index("--delivery") + 1], delivery)
                self.assertEqual((p.cpus, p.measuring, p.json_path), (cpus, True, "/r/raw/x-intra.json"))
        case = self.round_trip("poll")
        for impl in (Cyclone("/repo"), Hdds("/repo"), UdpFloor("/repo"), Tachyon("/repo", "busy-poll")):
            self.assertIsNotNone(impl.unsupported(case), impl.name)
        scen = Scenario("intra", 8, "t", "latency", "n", [case])
        ok = {"ok": 1, "approximate": []}
        agg = {case.case_id: {"tachyon": dict(ok, medians={"p50": 3000}),
                              "fastdds": dict(ok, medians={"p50": 15000})}}
        (row,) = report.targets([scen], agg)
        self.assertEqual((row["bound"], row["status"]), ("≤ 0.7×", "met"))
        listener = Scenario("intra", 8, "t", "latency", "n", [self.round_trip("listener")])
        self.assertEqual(report.targets([listener], {}), [])

    def test_tachyon_writes_and_takes_in_one_process(self):
        ctx = RunContext(domain=7, port=20014, net=Loopback(), path_prefix="/r/raw/x")
        (p,) = Tachyon("/repo").plan(self.case(), ctx)
        self.assertEqual(p.argv[:4], ["/repo/target/release/tachyon", "perf", "write-take",
                                      "--same-participant"])
        self.assertEqual(p.argv[p.argv.index("--reliability") + 1], "best-effort")
        s = next(s for s in build_matrix(True, [SAME, SPLIT]) if s.id == "intra")
        two = next(c for c in s.cases if c.spec.kind == "intra-2p")
        (p,) = Tachyon("/repo").plan(two, ctx)
        self.assertNotIn("--same-participant", p.argv)
        self.assertIn("one participant", Hdds("/repo").unsupported(two))
        self.assertEqual(p.argv[p.argv.index("--transport") + 1], "auto")
        self.assertEqual((p.side, p.measuring, p.json_path), ("a", True, "/r/raw/x-write-take.json"))

    def test_who_runs_it(self):
        self.assertIsNone(Tachyon("/repo").unsupported(self.case()))
        self.assertIsNone(Hdds("/repo").unsupported(self.case()))
        self.assertIn("16 B", Hdds("/repo").unsupported(self.case(1024)))
        for impl in (Cyclone("/repo"), FastDds("/repo"), UdpFloor("/repo")):
            self.assertIn("write-then-take", impl.unsupported(self.case()), impl.name)
        latency = Case("latency", "l", "l", Spec("latency", 32), SAME)
        self.assertIn("in process only", Hdds("/repo").unsupported(latency))
        self.assertIn("hdds", [i.name for i in all_impls("/repo")])

    def test_hdds_output_becomes_a_record(self):
        rec = parse_hdds(HDDS_OUTPUT)
        lat = rec["latency"]
        self.assertEqual((lat["count"], lat["min"], lat["p50"], lat["p99"], lat["max"]),
                         (10000, 320, 341, 531, 47068))
        self.assertIsNone(lat["p99_9"])
        with self.assertRaises(NoResult):
            parse_hdds("[X] No messages received")

    def test_target_is_half_of_hdds(self):
        case = self.case()
        scen = Scenario("intra", 8, "t", "latency", "n", [case])
        ok = {"ok": 1, "approximate": []}
        agg = {case.case_id: {"tachyon": dict(ok, medians={"p50": 2000}),
                              "hdds": dict(ok, medians={"p50": 400})}}
        (row,) = report.targets([scen], agg)
        self.assertAlmostEqual(row["ratio"], 5.0)
        self.assertTrue(row["status"].startswith("missed"))


class SameHostTest(unittest.TestCase):
    """Scenario 9: shared memory between two processes of the host."""

    def scenario(self, short=True):
        return next(s for s in build_matrix(short, [SAME, SPLIT]) if s.id == "shm")

    def case(self, case_id):
        return next(c for c in self.scenario().cases if c.case_id == case_id)

    def ctx(self):
        return RunContext(domain=7, port=20014, net=Loopback(), path_prefix="/r/raw/x")

    def test_tachyon_and_fastdds_use_shared_memory_and_tachyon_udp_is_the_reference(self):
        pong, ping = Tachyon("/repo").plan(self.case("shm-32-split"), self.ctx())
        self.assertEqual(ping.argv[ping.argv.index("--transport") + 1], "shm")
        pong, ping = Tachyon("/repo").plan(self.case("shm-32-split-udp"), self.ctx())
        self.assertEqual(ping.argv[ping.argv.index("--transport") + 1], "udp")
        pong, ping = FastDds("/repo").plan(self.case("shm-32-split"), self.ctx())
        self.assertEqual(ping.argv[ping.argv.index("--transport") + 1], "shm")
        latency = Case("latency", "l", "l", Spec("latency", 32), SAME)
        pong, ping = FastDds("/repo").plan(latency, self.ctx())
        self.assertEqual(ping.argv[ping.argv.index("--transport") + 1], "udp")

    def test_who_runs_what(self):
        shm_same, shm_split, udp = (self.case("shm-32-same"), self.case("shm-32-split"),
                                    self.case("shm-32-split-udp"))
        ice = Iceoryx2("/repo")
        self.assertIsNone(ice.unsupported(shm_split))
        self.assertIn("busy-waits", ice.unsupported(shm_same))
        self.assertIsNotNone(ice.unsupported(udp))
        self.assertIn("scenario 9", ice.unsupported(Case("latency", "l", "l", Spec("latency", 32), SPLIT)))
        self.assertIsNone(FastDds("/repo").unsupported(shm_same))
        self.assertIn("Tachyon's own", FastDds("/repo").unsupported(udp))
        self.assertIsNone(Tachyon("/repo").unsupported(udp))
        for impl in (Cyclone("/repo"), UdpFloor("/repo"), Hdds("/repo")):
            self.assertIsNotNone(impl.unsupported(shm_split), impl.name)
        self.assertIn("iceoryx2", [i.name for i in all_impls("/repo")])

    def test_iceoryx2_processes(self):
        pong, ping = Iceoryx2("/repo").plan(self.case("shm-32-split"), self.ctx())
        self.assertEqual((pong.argv[1], ping.argv[1]), ("pong", "ping"))
        self.assertEqual(ping.json_path, "/r/raw/x-ping.json")
        service = ping.argv[ping.argv.index("--service") + 1]
        self.assertEqual(service, pong.argv[pong.argv.index("--service") + 1])
        self.assertEqual((pong.side, ping.side, ping.measuring), ("b", "a", True))

    def test_targets_against_udp_fastdds_and_iceoryx2(self):
        scen = self.scenario(short=False)
        ok = {"ok": 1, "errors": [], "approximate": []}
        agg = {"shm-32-split": {"tachyon": dict(ok, medians={"p50": 10_000}),
                                "tachyon-busy-poll": dict(ok, medians={"p50": 3_000}),
                                "fastdds": dict(ok, medians={"p50": 50_000}),
                                "iceoryx2": dict(ok, medians={"p50": 1_000}),
                                "tachyon-loan": dict(ok, medians={"p50": 10_000})},
               "shm-32-split-udp": {"tachyon": dict(ok, medians={"p50": 30_000})},
               "shm-1048576-split": {"tachyon": dict(ok, medians={"p50": 1_000_000}),
                                     "tachyon-loan": dict(ok, medians={"p50": 11_000})},
               "shm-1048576-split-udp": {"tachyon": dict(ok, medians={"p50": 2_000_000})}}
        rows = [r for r in report.targets([scen], agg) if "two vCPUs" in r["target"]]
        by = {(r["target"], r["against"]): r for r in rows}
        vs_udp = by[("shm round trip p50, 32 B, two vCPUs", "Tachyon over UDP (same run)")]
        self.assertAlmostEqual(vs_udp["ratio"], 1 / 3)
        self.assertEqual(vs_udp["status"], "met")
        vs_fast = by[("shm round trip p50, 32 B, two vCPUs", "fastdds")]
        self.assertAlmostEqual(vs_fast["ratio"], 0.2)
        busy = by[("shm round trip p50 busy-polling, 32 B, two vCPUs", "iceoryx2")]
        self.assertEqual((busy["of"], busy["status"]), ("tachyon-busy-poll", "missed: 100 % too slow"))
        big = by[("shm round trip p50, 1 MiB, two vCPUs", "Tachyon over UDP (same run)")]
        self.assertAlmostEqual(big["ratio"], 0.5)
        self.assertTrue(big["status"].startswith("missed"))
        loaned = by[("loaned shm round trip p50, 1 MiB, two vCPUs", "Tachyon over UDP (same run)")]
        self.assertEqual((loaned["of"], loaned["status"]), ("tachyon-loan", "met"))
        self.assertAlmostEqual(loaned["ratio"], 11_000 / 2_000_000)
        flat = by[("loaned shm round trip p50 against 32 B, 1 MiB, two vCPUs",
                   "Tachyon (loaned, blocking), 32 B (same run)")]
        self.assertAlmostEqual(flat["ratio"], 1.1)
        self.assertEqual(flat["status"], "met")

    def test_the_machines_stalls_are_read_and_give_busy_polling_rows_their_share(self):
        with tempfile.TemporaryDirectory() as out:
            os.makedirs(os.path.join(out, "raw"))
            for cpu, count in ((0, 600), (1, 400)):
                with open(os.path.join(out, "raw", f"machine-stalls-cpu{cpu}.json"), "w") as f:
                    json.dump({"latency": {"count": count, "p50": 24_000, "p99": 60_000, "max": 150_000},
                               "config": {"duration_s": 2.0}}, f)
            with open(os.path.join(out, "raw", "machine-stalls-cpu2.json"), "w") as f:
                f.write("not json")
            stalls = report.machine_stalls(out)
        self.assertEqual([(x["cpu"], x["per_s"]) for x in stalls], [(0, 300.0), (1, 200.0)])
        self.assertIn("vCPU 0 300/s, p50 24.0 µs, max 150.0 µs", report.stalls_line(stalls))
        self.assertIsNone(report.stalls_line([]))
        ok = {"ok": 1, "errors": [], "approximate": []}
        agg = {"shm-32-split": {"tachyon-busy-poll": dict(ok, label="Tachyon (busy-poll)",
                                                          medians={"round_trips_per_s": 400_000}),
                                "iceoryx2": dict(ok, label="iceoryx2", medians={"round_trips_per_s": 500_000}),
                                "tachyon": dict(ok, label="Tachyon", medians={"round_trips_per_s": 20_000})},
               "shm-32-same": {"tachyon": dict(ok, label="Tachyon", medians={"round_trips_per_s": 200_000})}}
        lines = report.stall_shares(self.scenario(), agg, stalls)
        self.assertEqual(len(lines), 2)
        # 500 stalls a second over 400,000 and 500,000 round trips; the blocking rows and the
        # one-vCPU case have none.
        self.assertIn("Tachyon (busy-poll) (32 B, two vCPUs) 0.12 %", lines[0])
        self.assertIn("iceoryx2 (32 B, two vCPUs) 0.10 %", lines[0])
        self.assertNotIn("Tachyon (32 B", lines[0])
        self.assertEqual(report.stall_shares(self.scenario(), agg, []), [])
        paced = Scenario("xdp", 10, "t", "latency", "n", cases=[
            Case("xdp", "xdp-bound", "bound", Spec("latency", 32, rate=1000.0), SPLIT)])
        bound = {"xdp-bound": {"xdp-busy-poll": dict(ok, label="raw", medians={"round_trips_per_s": 1000})}}
        self.assertEqual(report.stall_shares(paced, bound, stalls), [])

    def test_a_latency_record_gives_its_round_trips_a_second(self):
        rec = {"harness": {}, "latency": {"count": 1000, "max": 5, "mean": 2},
               "config": {"duration_s": 4.0}}
        self.assertEqual(report.run_metrics(rec)["round_trips_per_s"], 250.0)


class JoinSummaryTest(unittest.TestCase):
    """bench/join.py's table: medians over the runs that matched, failed runs counted apart,
    Tachyon's ratios to the others."""

    def test_medians_failures_and_ratios(self):
        import importlib.util
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "join.py")
        spec = importlib.util.spec_from_file_location("bench_join", path)
        join = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(join)

        def run(impl, full, cpu, error=None):
            r = {"impl": impl, "processes": 50, "endpoints": 10, "error": error}
            if not error:
                r.update(full_match_s=full, median_match_s=full / 2, cpu_s_per_process=cpu,
                         rss_kib_per_process=8192, udp_in_per_process=100.0, udp_out_per_process=50.0,
                         udp_dropped_per_process=0.0)
            return r

        records = [run("tachyon", 0.5, 0.02), run("tachyon", 0.7, 0.03), run("tachyon", 0.6, 0.025),
                   run("cyclone", 2.0, 0.08), run("cyclone", 1.0, 0.05, error="not matched"),
                   run("fastdds", 4.0, 0.1, error="x")]
        text = join.summarize(records, ["tachyon", "cyclone", "fastdds"])
        self.assertIn("| Tachyon | 3 / 3 | 0.600 | 0.300 | 25 | 8.0 | 50 / 100 | 0 |", text)
        self.assertIn("| Cyclone DDS 0.10 | 1 / 2 | 2.000 |", text)
        self.assertIn("| Fast DDS 2.9 | 0 / 1 | — |", text)
        self.assertIn("Tachyon / Cyclone DDS 0.10: full match 0.30×, CPU per process 0.31×", text)
        self.assertNotIn("Tachyon / Fast DDS", text)
