"""From the run records to summary.json and summary.md: medians over repetitions, ratios of Tachyon
to each other implementation, the targets, machine information."""
import datetime
import glob
import json
import os
import platform
import statistics
import subprocess
from dataclasses import asdict

from .scenarios import ISOLATION_BASELINE, size_label

# Columns of the tables: key, header, unit kind. Latency values are ns in the records, µs here.
LATENCY_COLUMNS = [("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99_9", "p99.9"),
                   ("max", "max"), ("mean", "mean"), ("stddev", "stddev")]
BOUND_EXTRA = [("max_over_mean", "max/mean")]
THROUGHPUT_COLUMNS = [("samples_per_s", "samples/s"), ("mbit_per_s", "Mbit/s"), ("lost", "lost")]
FANOUT_EXTRA = [("aggregate_samples_per_s", "all subs samples/s")]
PROCESS_COLUMNS = [("cpu_percent", "CPU %"), ("rss_mib", "RSS MiB")]
# Scenario 7: the critical round trip, pings that got no pong (not in the distribution), the
# load that was there (bulk written by the pinging participant, received by its subscriber;
# storm announcements).
ISOLATION_LATENCY = [("p50", "p50"), ("p99", "p99"), ("p99_9", "p99.9"), ("max", "max"), ("mean", "mean")]
ISOLATION_COLUMNS = ISOLATION_LATENCY + [
    ("pings_lost", "pings lost"), ("bulk_samples_per_s", "bulk samples/s"),
    ("bulk_mbit_per_s", "bulk Mbit/s"), ("bulk_received_mbit_per_s", "bulk Mbit/s recv."),
    ("storm_announcements_per_s", "SPDP/s")]
# Metrics the loaded / alone ratios of scenario 7 cover, and its targets.
ISOLATION_RATIO_KEYS = [k for k, _ in ISOLATION_LATENCY]
ISOLATION_TARGETS = [("p99_9", "p99.9"), ("max", "max")]
ISOLATION_BOUND = 1.2
# Scenario 11: the paper's Tables I and II (min, median, max, variance of the RTT), then what
# the tail and the load were; loaded / alone ratios per path, and the target on AF_XDP's max.
INTERFERENCE_LATENCY = [("min", "min"), ("p50", "median"), ("max", "max"), ("variance", "variance µs²"),
                        ("p99", "p99"), ("p99_9", "p99.9")]
INTERFERENCE_COLUMNS = INTERFERENCE_LATENCY + [
    ("pings_lost", "pings lost"), ("bulk_mbit_per_s", "bulk Mbit/s")]
INTERFERENCE_BOUND = 2.0
REFERENCE = "tachyon"
OTHERS = ["cyclone", "fastdds", "udp", "hdds", "iceoryx2"]


# --- per run ---------------------------------------------------------------------------------

def run_metrics(record):
    """The figures of one run the tables use (None when the run failed)."""
    h = record["harness"]
    if h.get("error"):
        return None
    m = {"cpu_percent": h.get("cpu_percent_total"),
         "rss_mib": (h["peak_rss_kib_max"] / 1024) if h.get("peak_rss_kib_max") else None}
    lat = record.get("latency")
    if lat:
        for key, _ in LATENCY_COLUMNS:
            m[key] = lat.get(key)
        m["max_over_mean"] = lat["max"] / lat["mean"] if lat.get("max") and lat.get("mean") else None
        m["min"] = lat.get("min")
        # ns² to µs².
        m["variance"] = (lat["stddev"] / 1000) ** 2 if lat.get("stddev") is not None else None
        m["count"] = lat.get("count")
        m["pings_lost"] = lat.get("lost")
        seconds = (record.get("config") or {}).get("duration_s")
        m["round_trips_per_s"] = lat["count"] / seconds if lat.get("count") and seconds else None
    bulk = record.get("bulk")
    if bulk:
        m["bulk_samples_per_s"] = bulk.get("samples_per_s")
        m["bulk_mbit_per_s"] = bulk.get("mbit_per_s")
    received = record.get("bulk_received")
    if received:
        m["bulk_received_mbit_per_s"] = received.get("mbit_per_s")
    storm = record.get("storm")
    if storm:
        m["storm_announcements_per_s"] = storm.get("announcements_per_s")
    tp = record.get("throughput")
    if tp:
        for key, _ in THROUGHPUT_COLUMNS:
            m[key] = tp.get(key)
        m["aggregate_samples_per_s"] = tp.get("aggregate_samples_per_s", tp.get("samples_per_s"))
    return m


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def aggregate(records):
    """{case_id: {impl: {"medians", "approximate", "runs", "ok", "errors", "deviations"}}}"""
    out = {}
    for rec in records:
        h = rec["harness"]
        cell = out.setdefault(h["case_id"], {}).setdefault(h["implementation"], {
            "label": h["label"], "metrics": [], "runs": [], "errors": [], "approximate": set(),
            "deviations": h.get("deviations", []), "payload_bytes": None})
        cell["runs"].append(rec["_file"])
        cell["payload_bytes"] = (rec.get("config") or {}).get("payload_bytes", cell["payload_bytes"])
        m = run_metrics(rec)
        if m is None:
            cell["errors"].append(h["error"])
        else:
            cell["metrics"].append(m)
            cell["approximate"].update(rec.get("approximate") or [])
    for cells in out.values():
        for cell in cells.values():
            keys = sorted({k for m in cell["metrics"] for k in m})
            cell["medians"] = {k: _median([m.get(k) for m in cell["metrics"]]) for k in keys}
            cell["ok"] = len(cell["metrics"])
            cell["approximate"] = sorted(cell["approximate"])
            del cell["metrics"]
    return out


def ratios(cells):
    """{"tachyon / cyclone": {metric: ratio}} for every other implementation with results, and
    the same for each variant of Tachyon ("tachyon-busy-poll / cyclone")."""
    out = {}
    refs = [n for n in cells if n.split("-")[0] == REFERENCE]
    refs.sort(key=lambda n: (n != REFERENCE, n))
    for name in refs:
        ref = cells[name]
        if not ref["ok"]:
            continue
        for other, cell in cells.items():
            if other.split("-")[0] == REFERENCE or not cell["ok"]:
                continue
            r = {}
            for k, v in ref["medians"].items():
                w = cell["medians"].get(k)
                r[k] = v / w if v is not None and w else None
            out[f"{name} / {other}"] = {"ratios": r, "approximate": cell["approximate"]}
    return out


def vs_baseline(scenario, agg):
    """Scenario 7: {case_id: {metric: Tachyon's median in the case / in the baseline case}} for
    every case but the baseline ("critical alone", measured in the same run). Scenario 11: the
    same per path (kernel UDP, AF_XDP), each loaded case against that path's "alone"."""
    if scenario.id == "interference":
        return _vs_alone_per_path(scenario, agg)
    if scenario.id != "isolation":
        return {}
    base = agg.get(ISOLATION_BASELINE, {}).get(REFERENCE)
    out = {}
    for case in scenario.cases:
        if case.case_id == ISOLATION_BASELINE:
            continue
        cell = agg.get(case.case_id, {}).get(REFERENCE)
        if not cell or not cell["ok"] or not base or not base["ok"]:
            continue
        r = {}
        for k in ISOLATION_RATIO_KEYS:
            v, w = cell["medians"].get(k), base["medians"].get(k)
            r[k] = v / w if v is not None and w else None
        out[case.case_id] = r
    return out


def _interference_cell(agg, case):
    """Scenario 11's one result of `case` (Tachyon over UDP, or over AF_XDP)."""
    cells = agg.get(case.case_id, {})
    return cells.get("tachyon-xdp" if case.spec.transport == "xdp" else REFERENCE)


def _vs_alone_per_path(scenario, agg):
    out = {}
    for case in scenario.cases:
        if case.case_id.endswith("-alone"):
            continue
        alone = next((c for c in scenario.cases if c.case_id == f"{scenario.id}-{case.spec.transport}-alone"), None)
        cell, base = _interference_cell(agg, case), alone and _interference_cell(agg, alone)
        if not cell or not cell["ok"] or not base or not base["ok"]:
            continue
        r = {}
        for k, _ in INTERFERENCE_LATENCY:
            v, w = cell["medians"].get(k), base["medians"].get(k)
            r[k] = v / w if v is not None and w else None
        out[case.case_id] = r
    return out


# --- targets ---------------------------------------------------------------------------------

# Tachyon as configured by default: its receive threads watch before blocking
# (`--tachyon-wake watch`).
WATCH = "tachyon-watch"


def _ran(agg, case_id, impl):
    """Whether `impl` has a result in `case_id` (a variant's rows only where it ran)."""
    return bool(agg.get(case_id, {}).get(impl))


def _target_rows(scenarios, agg):
    """(what, case_id, metric, other impl, bound, "le"|"ge"[, other case_id, against[, ref]]):
    Tachyon (or its variant `ref`, "tachyon-busy-poll") in `case_id` against `other impl` in the
    same case, or in `other case_id` when given."""
    rows = []
    lat = next((s for s in scenarios if s.id == "latency"), None)
    if lat:
        for case in lat.cases:
            if case.spec.size in (32, 1024):
                # Issue 14: 0.9x Cyclone DDS on one vCPU and on two; 1.3x the raw-UDP floor's
                # p50 on one vCPU (on two the wake-up of the idle vCPU is most of the floor).
                one_vcpu = case.placement.active_cpu == case.placement.passive_cpu
                # Tachyon blocking at once (as Cyclone DDS's threads do), and, where it ran,
                # as configured by default (its receive threads watch before blocking).
                for ref, how in ((REFERENCE, ""), (WATCH, " (Tachyon's default: watch)")):
                    if ref != REFERENCE and not _ran(agg, case.case_id, ref):
                        continue
                    for metric, name in (("p50", "p50"), ("p99_9", "p99.9")):
                        rows.append((f"round trip {name}{how}, {case.label}", case.case_id, metric, "cyclone",
                                     0.9, "le", case.case_id, "cyclone", ref))
                    if one_vcpu:
                        rows.append((f"round trip p50{how}, {case.label}", case.case_id, "p50", "udp", 1.3, "le",
                                     case.case_id, "udp", ref))
    bound = next((s for s in scenarios if s.id == "bound"), None)
    if bound:
        for case in bound.cases:
            rows.append((f"latency bound (max), {case.label}", case.case_id, "max", "cyclone", 0.5, "le"))
    thr = next((s for s in scenarios if s.id == "throughput"), None)
    if thr:
        for case in thr.cases:
            bound_ = {32: 1.5, 65536: 1.3}.get(case.spec.size, 1.2)
            rows.append((f"throughput (samples/s), {case.label}", case.case_id, "samples_per_s",
                         "cyclone", bound_, "ge"))
    intra = next((s for s in scenarios if s.id == "intra"), None)
    if intra:
        for case in intra.cases:
            if case.spec.size == 16 and case.spec.kind == "intra":
                # Issue 15: write then take on one thread, 0.5x HDDS's latency_benchmark.
                rows.append((f"write → take p50, {case.label}", case.case_id, "p50", "hdds", 0.5, "le"))
            if case.spec.size == 16 and case.spec.kind == "intra-rt" and case.spec.delivery == "poll":
                # Issue 15: a two-thread busy-poll round trip, 0.7x Fast DDS intra-process.
                rows.append((f"in-process round trip p50, {case.label}", case.case_id, "p50", "fastdds",
                             0.7, "le"))
    shm = next((s for s in scenarios if s.id == "shm"), None)
    if shm:
        for case in shm.cases:
            if case.spec.transport != "shm":
                continue
            udp_case = f"{case.case_id}-udp"
            udp_label = "Tachyon over UDP (same run)"
            if case.spec.size == 32:
                # Issue 15: blocking 0.5x Tachyon over UDP and 0.3x Fast DDS's shared memory, both
                # placements; busy polling 1.5x iceoryx2 (which busy-waits: two vCPUs only).
                rows.append((f"shm round trip p50, {case.label}", case.case_id, "p50", REFERENCE, 0.5, "le",
                             udp_case, udp_label))
                rows.append((f"shm round trip p50, {case.label}", case.case_id, "p50", "fastdds", 0.3, "le"))
                if _ran(agg, case.case_id, WATCH):
                    # Both watching before blocking (the defaults): shared memory its doorbell,
                    # UDP its socket.
                    rows.append((f"shm round trip p50 (Tachyon's default: watch), {case.label}", case.case_id,
                                 "p50", WATCH, 0.5, "le", udp_case, "Tachyon over UDP, watch (same run)", WATCH))
                    rows.append((f"shm round trip p50 (Tachyon's default: watch), {case.label}", case.case_id,
                                 "p50", "fastdds", 0.3, "le", case.case_id, "fastdds", WATCH))
                if case.placement.active_cpu != case.placement.passive_cpu:
                    rows.append((f"shm round trip p50 busy-polling, {case.label}", case.case_id, "p50",
                                 "iceoryx2", 1.5, "le", case.case_id, "iceoryx2", "tachyon-busy-poll"))
            elif case.spec.size >= 1 << 20:
                rows.append((f"shm round trip p50, {case.label}", case.case_id, "p50", REFERENCE, 0.2, "le",
                             udp_case, udp_label))
            if case.spec.size >= 1 << 20:
                # Loaned fixed-size samples: 0.2x UDP too, and the round trip does not grow with
                # the size (within 1.2x the loaned 32 B one, same placement, same run).
                rows.append((f"loaned shm round trip p50, {case.label}", case.case_id, "p50", REFERENCE,
                             0.2, "le", udp_case, udp_label, "tachyon-loan"))
                small = f"{shm.id}-32-{case.placement.name}"
                rows.append((f"loaned shm round trip p50 against 32 B, {case.label}", case.case_id, "p50",
                             "tachyon-loan", 1.2, "le", small, "Tachyon (loaned, blocking), 32 B (same run)",
                             "tachyon-loan"))
    xdp = next((s for s in scenarios if s.id == "xdp"), None)
    if xdp:
        for case in xdp.cases:
            two = case.placement.active_cpu != case.placement.passive_cpu
            if case.spec.rate:
                # Issue 16: over 1,000,000 round trips at 1 kHz, max / mean <= 3 on the XDP path
                # (an absolute bound: `other` None).
                rows.append((f"AF_XDP latency bound (max/mean), {case.label}", case.case_id,
                             "max_over_mean", None, 3.0, "le", case.case_id, "absolute",
                             "tachyon-xdp-busy-poll"))
                # The machine's own bound: the raw AF_XDP floor (no DDS) paced the same way, same
                # run. Where it misses 3 too, the stalls are the machine's, not the protocol's.
                rows.append((f"AF_XDP latency bound (max/mean) of the raw AF_XDP floor, no DDS (the "
                             f"machine's own), {case.label}", case.case_id, "max_over_mean", None, 3.0,
                             "le", case.case_id, "absolute", "xdp-busy-poll"))
                rows.append((f"AF_XDP latency bound (max/mean) against the raw AF_XDP floor's (not an "
                             f"issue target: 1 is the machine's own spread), {case.label}", case.case_id,
                             "max_over_mean", "xdp-busy-poll", 1.0, "le", case.case_id,
                             "raw AF_XDP (busy-poll)", "tachyon-xdp-busy-poll"))
            elif case.spec.size == 32 and two:
                # Issue 16: spinning p50 1.4x the raw AF_XDP ping-pong floor, 0.5x Cyclone DDS.
                rows.append((f"AF_XDP round trip p50 spinning, {case.label}", case.case_id, "p50",
                             "xdp-busy-poll", 1.4, "le", case.case_id, "raw AF_XDP (busy-poll)",
                             "tachyon-xdp-busy-poll"))
                rows.append((f"AF_XDP round trip p50 spinning, {case.label}", case.case_id, "p50",
                             "cyclone", 0.5, "le", case.case_id, "Cyclone DDS", "tachyon-xdp-busy-poll"))
    inter = next((s for s in scenarios if s.id == "interference"), None)
    if inter:
        for case in inter.cases:
            if case.spec.transport == "xdp" and case.spec.load:
                # Issue 16: under line-rate interference the critical max RTT stays within 2x its
                # own max without it (AF_XDP on the reserved queue).
                rows.append((f"interference: critical max, {case.label}", case.case_id, "max",
                             "tachyon-xdp", INTERFERENCE_BOUND, "le", f"{inter.id}-xdp-alone",
                             "AF_XDP alone (same run)", "tachyon-xdp"))
    iso = next((s for s in scenarios if s.id == "isolation"), None)
    if iso:
        for case in iso.cases:
            if case.case_id == ISOLATION_BASELINE:
                continue
            for metric, name in ISOLATION_TARGETS:
                rows.append((f"isolation: critical {name}, {case.label}", case.case_id, metric, REFERENCE,
                             ISOLATION_BOUND, "le", ISOLATION_BASELINE, "critical alone (same run)"))
    return rows


def targets(scenarios, agg):
    out = []
    for what, case_id, metric, other, bound, sense, *against in _target_rows(scenarios, agg):
        other_case, label, *ref_name = against if against else (case_id, other)
        ref_name = ref_name[0] if ref_name else REFERENCE
        ref = agg.get(case_id, {}).get(ref_name)
        if other is None:
            # An absolute bound on Tachyon's own figure.
            row = {"target": what, "against": label, "metric": metric, "bound": f"≤ {bound:g}",
                   "ratio": None, "status": None, "of": ref_name}
            value = (ref or {}).get("medians", {}).get(metric) if ref and ref["ok"] else None
            if value is None:
                row["status"] = f"not measured ({ref_name} has no result)"
            else:
                row["ratio"] = value
                ok = value <= bound if sense == "le" else value >= bound
                row["status"] = "met" if ok else "missed"
            out.append(row)
            continue
        oth = agg.get(other_case, {}).get(other)
        row = {"target": what, "against": label, "metric": metric,
               "bound": f"{'≤' if sense == 'le' else '≥'} {bound:g}×", "ratio": None, "status": None}
        if ref_name != REFERENCE:
            row["of"] = ref_name
        if not ref or not ref["ok"] or not oth or not oth["ok"]:
            missing = ref_name if not ref or not ref["ok"] else label
            row["status"] = f"not measured ({missing} has no result)"
        elif ref["medians"].get(metric) is None or oth["medians"].get(metric) is None:
            row["status"] = f"not measurable ({other} does not report {metric.replace('_', '.')})"
        else:
            ratio = ref["medians"][metric] / oth["medians"][metric]
            row["ratio"] = ratio
            row["approximate"] = metric in oth["approximate"]
            if (ratio <= bound) if sense == "le" else (ratio >= bound):
                row["status"] = "met"
            elif sense == "le":
                row["status"] = f"missed: {100 * (ratio / bound - 1):.0f} % too slow"
            else:
                row["status"] = f"missed: {100 * (1 - ratio / bound):.0f} % short"
        out.append(row)
    return out


# --- machine ---------------------------------------------------------------------------------

def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def machine_info(root):
    def git(*args):
        r = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, check=False)
        return r.stdout.strip()

    cpu = "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        pass
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    return {"cpu": cpu, "vcpus": os.cpu_count(), "kernel": platform.release(), "load_end": load_average(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": git("rev-parse", "--short=12", "HEAD") + dirty, "branch": git("rev-parse", "--abbrev-ref", "HEAD")}


STALLS_GLOB = "raw/machine-stalls-cpu*.json"
# The scenarios with busy-polling rows between two vCPUs (their stall shares are printed).
STALL_SCENARIOS = ("shm", "xdp")


def _busy_polls(impl):
    """Whether implementation `impl` of the harness spins instead of sleeping."""
    return "busy-poll" in impl or impl == "iceoryx2"


def machine_stalls(out_dir):
    """What `tachyon floor stalls` measured at the start of the run, one record per vCPU:
    [{"cpu", "per_s", "p50", "p99", "max"}] (ns), sorted by vCPU; [] when not measured."""
    found = []
    for path in sorted(glob.glob(os.path.join(out_dir, STALLS_GLOB))):
        try:
            with open(path, encoding="utf-8") as f:
                rec = json.load(f)
            lat, seconds = rec["latency"], rec["config"]["duration_s"]
            cpu = int(os.path.basename(path).split("cpu")[1].split(".")[0])
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            continue
        if not seconds:
            continue
        found.append({"cpu": cpu, "per_s": lat["count"] / seconds, "p50": lat.get("p50"),
                      "p99": lat.get("p99"), "max": lat.get("max")})
    return sorted(found, key=lambda x: x["cpu"])


def stalls_line(stalls):
    """The summary's line on the machine's own stalls (None without them)."""
    if not stalls:
        return None
    each = "; ".join(f"vCPU {x['cpu']} {x['per_s']:,.0f}/s, p50 {_fmt_value('p50', x['p50'])} µs, "
                     f"max {_fmt_value('max', x['max'])} µs" for x in stalls)
    return ("- the machine's own stalls (`tachyon floor stalls`: a thread spinning on each vCPU, all at "
            f"once, at the start; gaps of 2 µs or more): {each}. A busy-polled round trip that meets one "
            "takes about that long whatever the program: the *stall share* below the busy-polling tables "
            "says how many of a row's round trips they can reach; where it nears 0.1 %, that row's p99.9 "
            "lies among the machine's stalls (a faster ping-pong runs more round trips between two "
            "stalls, so the same stalls reach a smaller share of them)")


def stall_shares(scenario, agg, stalls):
    """For the busy-polling rows of `scenario` on two vCPUs, round trips back to back: the share
    of their round trips the stalls of either vCPU can reach (stalls a second of both over round
    trips a second), as Markdown lines."""
    if not stalls or scenario.kind != "latency":
        return []
    per_s = sum(x["per_s"] for x in stalls)
    rows = []
    for case in scenario.cases:
        # Back-to-back round trips only: a paced one (the bound's 1000/s) is reached by the
        # stalls that fall within it, not by a share of them.
        if case.placement.active_cpu == case.placement.passive_cpu or case.spec.rate:
            continue
        for impl, cell in sorted(agg.get(case.case_id, {}).items()):
            if not _busy_polls(impl):
                continue
            rate = cell["medians"].get("round_trips_per_s") if cell.get("ok") else None
            if rate:
                rows.append(f"{cell['label']} ({case.label}) {100 * per_s / rate:.2f} %")
    if not rows:
        return []
    return [f"- stall share (the machine's {per_s:,.0f} stalls a second over the row's round trips a second): "
            + "; ".join(rows), ""]


# --- Markdown --------------------------------------------------------------------------------

def _fmt_value(key, v):
    if v is None:
        return "–"
    if key == "variance":
        return f"{v:,.1f}"
    if key in dict(LATENCY_COLUMNS) or key == "min":
        us = v / 1000
        return f"{us:.1f}" if us < 1000 else f"{us:,.0f}"
    if key in ("samples_per_s", "aggregate_samples_per_s", "bulk_samples_per_s", "storm_announcements_per_s"):
        return f"{v:,.0f}"
    if key in ("lost", "pings_lost"):
        return f"{v:,.0f}"
    if key in ("mbit_per_s", "cpu_percent", "rss_mib", "max_over_mean", "bulk_mbit_per_s",
               "bulk_received_mbit_per_s"):
        return f"{v:,.1f}"
    return f"{v:g}"


def _load(v):
    return "?" if v is None else f"{v:.2f}"


def _fmt_ratio(v):
    return "–" if v is None else f"{v:.2f}"


def _columns(scenario):
    if scenario.id == "isolation":
        return ISOLATION_COLUMNS + PROCESS_COLUMNS
    if scenario.id == "interference":
        return INTERFERENCE_COLUMNS + PROCESS_COLUMNS
    if scenario.kind == "latency":
        cols = LATENCY_COLUMNS + (BOUND_EXTRA if scenario.id in ("bound", "xdp") else [])
    else:
        cols = THROUGHPUT_COLUMNS + (FANOUT_EXTRA if scenario.id == "fanout" else [])
    return cols + PROCESS_COLUMNS


def failures(scenario, agg):
    """One line per implementation and case with failed runs (the first error), then a blank."""
    lines = []
    for case in scenario.cases:
        for name, cell in agg.get(case.case_id, {}).items():
            if cell["errors"]:
                n = len(cell["errors"])
                lines.append(f"- failed: {name}, {case.label}, {n} of {len(cell['runs'])} runs: "
                             + cell["errors"][0].replace("|", "/")[:300])
    return lines + [""] if lines else []


def payload_mismatches(scenario, agg):
    """Cases whose implementations sent payloads of different sizes for the same --size (the
    programs disagree on what "size" counts): one line each."""
    lines = []
    for case in scenario.cases:
        sizes = {name: cell["payload_bytes"] for name, cell in agg.get(case.case_id, {}).items()
                 if cell.get("payload_bytes") is not None}
        if len(set(sizes.values())) > 1:
            lines.append(f"- {case.label}: payloads differ: "
                         + ", ".join(f"{n} {b} B" for n, b in sorted(sizes.items())))
    return lines


def scenario_table(scenario, agg, order, reps):
    cols = _columns(scenario)
    lines = ["| case | implementation | " + " | ".join(h for _, h in cols) + " | runs ok |",
             "|---|---|" + "---:|" * len(cols) + "---:|"]
    notes = set()
    for case in scenario.cases:
        cells = agg.get(case.case_id, {})
        for impl in order:
            cell = cells.get(impl)
            if not cell:
                continue
            mark = " †" if cell["deviations"] else ""
            notes.update(cell["deviations"])
            vals = []
            for key, _ in cols:
                s = _fmt_value(key, cell["medians"].get(key)) if cell["ok"] else "–"
                if key in cell["approximate"] and s != "–":
                    s = "~" + s
                vals.append(s)
            lines.append(f"| {case.label} | {cell['label']}{mark} | " + " | ".join(vals)
                         + f" | {cell['ok']}/{len(cell['runs'])} |")
        for name, r in ratios(cells).items():
            vals = []
            for key, _ in cols:
                s = _fmt_ratio(r["ratios"].get(key))
                if key in r["approximate"] and s != "–":
                    s = "~" + s
                vals.append(s)
            lines.append(f"| {case.label} | *{name}* | " + " | ".join(vals) + " | |")
    for case_id, r in vs_baseline(scenario, agg).items():
        label = next(c.label for c in scenario.cases if c.case_id == case_id)
        vals = [_fmt_ratio(r.get(key)) if key in r else "" for key, _ in cols]
        lines.append(f"| {label} | *loaded / alone* | " + " | ".join(vals) + " | |")
    return lines, notes


def markdown(info, options, scenarios, agg, skipped, unsupported, target_rows, order, elapsed_s):
    out = [f"# Tachyon DDS benchmark — {info['date']}", "",
           f"- machine: {info['cpu']}, {info['vcpus']} vCPUs, kernel {info['kernel']}",
           f"- commit: {info['commit']} ({info['branch']})",
           f"- form: {options['form']}, {options['reps']} repetitions per figure, implementations "
           f"alternating in each repetition; every figure is the **median over the repetitions**",
           f"- took {elapsed_s / 60:.1f} min; command: `{options['command']}`",
           f"- load average (1 min) at the start {_load(options.get('load_start'))}, at the end "
           f"{_load(info.get('load_end'))}: other work on the machine shows in the figures",
           "- every process pinned with `taskset`; all traffic inside private network namespaces"]
    if stalls_line(info.get("stalls")):
        out.append(stalls_line(info.get("stalls")))
    out.append("")
    if skipped:
        out.append("Not run:")
        out += [f"- {name}: {why}" for name, why in skipped.items()]
        out.append("")
    out += ["Latency: **round trip** in µs (the ping side's clock); ratios `tachyon / X` "
            "**below 1 = Tachyon faster**. Throughput: samples/s and Mbit/s of payload counted at "
            "the subscriber; ratios **above 1 = Tachyon faster**. CPU % = CPU time of all processes "
            "of a run over its wall time (200 % = both vCPUs busy); RSS = the largest peak RSS of "
            "them. `~` = approximate (a Cyclone DDS figure from `ddsperf`, used when cyclone_ping is "
            "not built: it prints per-second percentiles only, and the figure is their count-weighted "
            "median), `–` = not measured.", ""]
    all_notes = set()
    for s in scenarios:
        out += [f"## {s.number}. {s.title}", "", f"{s.note}.", ""]
        per_case = {}
        for case in s.cases:
            for impl, why in unsupported.get(case.case_id, {}).items():
                per_case.setdefault(why, set()).add(impl)
        lines, notes = scenario_table(s, agg, order, options["reps"])
        all_notes |= notes
        out += lines + [""]
        if s.id in STALL_SCENARIOS:
            out += stall_shares(s, agg, info.get("stalls"))
        out += failures(s, agg)
        mismatches = payload_mismatches(s, agg)
        if mismatches:
            out += ["**Not comparable as they stand** (serialized payload per sample, from each "
                    "record's `config.payload_bytes`):"] + mismatches + [""]
        for why, impls in sorted(per_case.items()):
            out.append(f"- not run: {', '.join(sorted(impls))}: {why}")
        if per_case:
            out.append("")
    if all_notes:
        out += ["† " + "; ".join(sorted(all_notes)) + ".", ""]
    out += ["## Targets", "",
            "| target | against | bound | ratio (median) | status |", "|---|---|---:|---:|---|"]
    for t in target_rows:
        ratio = "–" if t["ratio"] is None else (("~" if t.get("approximate") else "") + f"{t['ratio']:.2f}")
        out.append(f"| {t['target']} | {t['against']} | {t['bound']} | {ratio} | {t['status']} |")
    out.append("")
    return "\n".join(out)


def summary_json(info, options, scenarios, agg, skipped, unsupported, target_rows):
    out = {"machine": info, "options": options, "skipped": skipped, "scenarios": [], "targets": target_rows}
    for s in scenarios:
        cases = []
        loaded = vs_baseline(s, agg)
        for case in s.cases:
            cells = agg.get(case.case_id, {})
            entry = {"case_id": case.case_id, "label": case.label, "placement": case.placement.name,
                     "network": case.net, "spec": asdict(case.spec), "results": cells,
                     "ratios": ratios(cells), "not_run": unsupported.get(case.case_id, {})}
            if case.case_id in loaded:
                entry["vs_alone"] = loaded[case.case_id]
            cases.append(entry)
        out["scenarios"].append({"id": s.id, "number": s.number, "title": s.title, "kind": s.kind,
                                 "note": s.note, "cases": cases})
    return out
