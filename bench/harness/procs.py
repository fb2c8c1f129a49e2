"""Child processes of one run: started in their own process group, waited for with a deadline,
stopped by their own process-group id only. CPU time comes from wait4(); peak RSS from VmHWM in
/proc/PID/status, sampled while the process runs (wait4's ru_maxrss would count the forked
Python interpreter the process was exec'd from)."""
import os
import signal
import subprocess
import time


class Proc:
    """One benchmark process (ping, pong, pub or sub)."""

    def __init__(self, role, argv, env=None, log_path=None):
        self.role = role
        self.argv = argv
        self.log_path = log_path
        self.status = None  # exit code, or -signal
        self.rusage = None
        self.peak_rss_kib = None
        self.started = time.monotonic()
        self.ended = None
        self._log = open(log_path, "wb") if log_path else subprocess.DEVNULL
        self.popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own process group: we stop it and nothing else
        )
        self.pid = self.popen.pid

    @property
    def running(self):
        return self.status is None

    def sample(self):
        """Reads the peak RSS so far (the kernel keeps it; we read it while we can)."""
        if self.status is not None:
            return
        try:
            with open(f"/proc/{self.pid}/status", encoding="ascii", errors="replace") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        self.peak_rss_kib = int(line.split()[1])
                        return
        except (OSError, ValueError, IndexError):
            pass

    def poll(self):
        """Reaps the process if it has exited; True when it has."""
        if self.status is not None:
            return True
        self.sample()
        pid, status, rusage = os.wait4(self.pid, os.WNOHANG)
        if pid == 0:
            return False
        self._reaped(status, rusage)
        return True

    def wait(self, deadline):
        """Waits until the process exits or `deadline` (monotonic) passes; True when it exited."""
        while not self.poll():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def stop(self, grace=2.0):
        """SIGTERM to its process group, SIGKILL after `grace` seconds; always reaps it."""
        if self.poll():
            self._kill_group(signal.SIGKILL)  # stragglers it may have left in its group
            return
        self._kill_group(signal.SIGTERM)
        if not self.wait(time.monotonic() + grace):
            self._kill_group(signal.SIGKILL)
            pid, status, rusage = os.wait4(self.pid, 0)
            self._reaped(status, rusage)

    def _kill_group(self, sig):
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _reaped(self, status, rusage):
        self.ended = time.monotonic()
        self.status = os.waitstatus_to_exitcode(status)
        self.rusage = rusage
        self.popen.returncode = self.status  # so Popen's destructor does not wait again
        if self._log is not subprocess.DEVNULL:
            self._log.close()

    def usage(self):
        """CPU seconds and CPU % over its lifetime (wait4()), peak RSS in KiB (VmHWM)."""
        if self.rusage is None:
            return None
        wall = max((self.ended or time.monotonic()) - self.started, 1e-9)
        cpu = self.rusage.ru_utime + self.rusage.ru_stime
        return {
            "role": self.role,
            "exit": self.status,
            "wall_s": round(wall, 3),
            "cpu_user_s": round(self.rusage.ru_utime, 3),
            "cpu_sys_s": round(self.rusage.ru_stime, 3),
            "cpu_percent": round(100.0 * cpu / wall, 1),
            "peak_rss_kib": self.peak_rss_kib,
        }

    def output(self):
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()


def wait_measuring(procs, deadline):
    """Waits until every measuring process of `procs` has exited (True) or `deadline` passes (False),
    sampling the peak RSS of every process of the run meanwhile."""
    measuring = [p for p in procs if p.spec.measuring]
    while True:
        sample_all(procs)
        if all(p.poll() for p in measuring):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def sample_all(procs):
    for p in procs:
        p.sample()


def stop_all(procs):
    sample_all(procs)
    for p in procs:
        p.stop()
