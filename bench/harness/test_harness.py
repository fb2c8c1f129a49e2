"""Unit tests of the harness's pure parts: the ddsperf converter, the merging of subscribers,
medians, ratios and targets, the Cyclone adapter's choice of cyclone_ping or ddsperf.
`python3 -m unittest discover -s bench/harness -t bench`"""
import json
import os
import stat
import tempfile
import types
import unittest

from harness import ddsperf, report
from harness.impls import Cyclone, RunContext, Tachyon, UdpFloor, all_impls, merge_subscribers
from harness.netns import Loopback
from harness.scenarios import SAME, SPLIT, Case, Scenario, Spec, build_matrix, estimate

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
        scenarios = build_matrix(True, [SAME, SPLIT])
        cases = [c for s in scenarios for c in s.cases]
        # Worst case: all four implementations run every case.
        self.assertLess(estimate({"all": cases * 4}, 3), 15 * 60)


if __name__ == "__main__":
    unittest.main()
