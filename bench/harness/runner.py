"""Runs one case for one implementation once: starts its processes pinned and in their namespace,
waits with a deadline, stops everything it started, writes runs/<name>.json."""
import json
import os
import time
from dataclasses import asdict

from .impls import NoResult, RunContext
from .procs import Proc, stop_all, wait_measuring

# Seconds allowed beyond warm-up and measured part: discovery, the match timeout, writing results.
RUN_SLACK_S = 30
START_GAP_S = 0.25  # between starting two processes of a run (the later ones find the earlier)
DOMAINS = range(1, 231)  # DDS domain ids whose ports fit in 16 bits


class Runner:
    def __init__(self, report_dir, log=print):
        self.report_dir = report_dir
        self.log = log
        for sub in ("runs", "raw", "logs"):
            os.makedirs(os.path.join(report_dir, sub), exist_ok=True)
        self._next = os.getpid() % len(DOMAINS)

    def next_domain(self):
        """A different DDS domain for every run, so a straggler of an earlier run cannot talk
        to this one."""
        domain = DOMAINS[self._next % len(DOMAINS)]
        self._next += 1
        return domain

    def run(self, case, impl, rep, net):
        """Runs it and writes runs/<name>.json; a failure of any kind is recorded there as the
        run's error (the matrix goes on)."""
        name = f"{case.case_id}-{impl.name}-r{rep + 1}"
        try:
            return self._run(name, case, impl, rep, net)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:  # noqa: BLE001 - a harness bug must not lose the other runs
            record = {"schema": "tachyon-perf/1", "implementation": impl.name, "latency": None,
                      "histogram": None, "throughput": None, "timeline": [], "process": None,
                      "harness": {"scenario": case.scenario, "case_id": case.case_id, "case": case.label,
                                  "implementation": impl.name, "label": impl.label, "rep": rep + 1,
                                  "deviations": [], "error": f"harness error: {type(e).__name__}: {e}"}}
            self._write(name, record)
            return record

    def _write(self, name, record):
        path = os.path.join(self.report_dir, "runs", name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1)
            f.write("\n")

    def _run(self, name, case, impl, rep, net):
        domain = self.next_domain()
        ctx = RunContext(domain=domain, port=20000 + 2 * domain, net=net,
                         path_prefix=os.path.join(self.report_dir, "raw", name))
        specs = impl.plan(case, ctx)
        started = time.monotonic()
        procs, error = self._execute(case, specs, net, name)
        wall = time.monotonic() - started
        record = None
        if error is None:
            try:
                record = impl.record(case, ctx, procs)
            except NoResult as e:
                record, error = None, f"no result: {e}"
            if record is None and error is None:
                measuring = [p for p in procs if p.spec.measuring]
                main = next((p for p in measuring if p.role == "ping"), measuring[0])
                error = "no result: " + _tail(main.output())
        impl.cleanup()
        record = self._annotate(record, case, impl, rep, domain, net, procs, wall, error)
        self._write(name, record)
        return record

    def _execute(self, case, specs, net, name):
        procs = []
        error = None
        try:
            for i, spec in enumerate(specs):
                if i:
                    time.sleep(START_GAP_S)
                cpu = case.placement.active_cpu if spec.side == "a" else case.placement.passive_cpu
                cpu = spec.cpus or cpu
                argv = net.prefix(spec.side) + ["taskset", "-c", str(cpu)] + spec.argv
                env = dict(os.environ, **spec.env)
                log_path = os.path.join(self.report_dir, "logs", f"{name}-{spec.role}.log")
                p = Proc(spec.role, argv, env=env, log_path=log_path)
                p.spec = spec
                procs.append(p)
            deadline = time.monotonic() + case.spec.warmup + case.spec.duration + RUN_SLACK_S
            if not wait_measuring(procs, deadline):
                late = ", ".join(p.role for p in procs if p.spec.measuring and p.running)
                error = f"timeout: {late} still running after {RUN_SLACK_S} s of slack"
        finally:
            stop_all(procs)
        if error is None:
            for p in procs:
                if p.spec.measuring and p.status != 0:
                    error = f"{p.role} exited with status {p.status}: {_tail(p.output())}"
                    break
        return procs, error

    def _annotate(self, record, case, impl, rep, domain, net, procs, wall, error):
        if record is None:
            record = {"schema": "tachyon-perf/1", "implementation": impl.name, "latency": None,
                      "histogram": None, "throughput": None, "timeline": [], "process": None}
        usages = [p.usage() for p in procs if p.usage()]
        cpu_s = sum(u["cpu_user_s"] + u["cpu_sys_s"] for u in usages)
        measuring = next((p for p in procs if p.spec.measuring), None)
        if record.get("process") and measuring is not None and measuring.usage():
            # ddsperf does not print its CPU time: take it from wait4() as for everyone.
            u = measuring.usage()
            for key in ("cpu_user_s", "cpu_sys_s", "cpu_percent", "peak_rss_kib"):
                if record["process"].get(key) is None:
                    record["process"][key] = u[key]
        record["harness"] = {
            "scenario": case.scenario, "case_id": case.case_id, "case": case.label,
            "implementation": impl.name, "label": impl.label, "rep": rep + 1,
            "placement": case.placement.name,
            "cpus": {"measuring": case.placement.active_cpu, "peer": case.placement.passive_cpu},
            "network": net.name, "domain": domain, "spec": asdict(case.spec),
            "deviations": impl.deviations(case), "error": error, "wall_s": round(wall, 3),
            "processes": usages, "commands": [p.argv for p in procs],
            # All processes of the run together, over the run's wall time (200 % = both vCPUs busy).
            "cpu_percent_total": round(100.0 * cpu_s / max(wall, 1e-9), 1),
            "peak_rss_kib_max": max((u["peak_rss_kib"] for u in usages if u["peak_rss_kib"]), default=None),
        }
        return record


def _tail(text, lines=3):
    """What a failed process said: its lines naming an error if there are any, else its last."""
    rows = [r.strip() for r in text.strip().splitlines() if r.strip()]
    errors = [r for r in rows if any(w in r.lower() for w in ("error", "unknown", "invalid", "failed", "panic"))]
    picked = errors[:lines] if errors else rows[-lines:]
    return " | ".join(picked) if picked else "(no output)"
