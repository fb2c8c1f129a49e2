"""Network isolation. DDS discovery multicast must not leave the machine (shared/FACTS.md), so the
harness re-executes itself in a private network namespace whose only interface is loopback with
multicast on; the two-host scenario adds two more namespaces joined by a veth pair."""
import os
import subprocess
import sys

ENV_FLAG = "TACHYON_BENCH_NETNS"


def enter_private_namespace():
    """Re-executes this script inside `unshare -n` (once; the child sees ENV_FLAG=1)."""
    if os.environ.get(ENV_FLAG) == "1":
        return
    setup = "ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo"
    flags = "-n" if os.geteuid() == 0 else "-rn"
    argv = " ".join(_quote(a) for a in [sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:])
    cmd = f"{setup} && {ENV_FLAG}=1 exec {argv}"
    sys.stdout.flush()
    os.execvp("unshare", ["unshare", flags, "--", "bash", "-c", cmd])


def _quote(arg):
    import shlex
    return shlex.quote(arg)


class Loopback:
    """Every process in the harness's own namespace, talking over `lo`."""

    name = "lo"

    def prefix(self, side):
        return []

    def address(self, side):
        return "127.0.0.1"

    def close(self):
        pass


class VethPair:
    """Two namespaces, `a` (ping / sub side) and `b` (pong / pub side), joined by a veth pair,
    each with loopback up and a multicast route on its veth end. Names carry our pid, so runs
    of several harnesses do not collide; close() removes everything (also after a failure)."""

    name = "veth"

    def __init__(self, subnet="10.213.77", name="veth", setup=None):
        """`setup`: a command run on each end after it is up (in its namespace), `{dev}`
        standing for the end's name, e.g. `tachyon xdp setup {dev}` for a reserved queue; a
        failure is a RuntimeError (the cases on this network are skipped, saying why)."""
        self.name = name
        tag = f"tb{os.getpid() % 100000}{'q' if setup else ''}"
        self.ns = {"a": f"{tag}a", "b": f"{tag}b"}
        self.dev = {"a": f"{tag}va", "b": f"{tag}vb"}
        self.addr = {"a": f"{subnet}.1", "b": f"{subnet}.2"}
        self.setup = setup
        self._created = []
        try:
            self._create()
        except BaseException:
            self.close()
            raise

    def _create(self):
        for side in ("a", "b"):
            _ip("netns", "add", self.ns[side])
            self._created.append(self.ns[side])
        _ip("link", "add", self.dev["a"], "netns", self.ns["a"], "type", "veth",
            "peer", "name", self.dev["b"], "netns", self.ns["b"])
        for side in ("a", "b"):
            ns, dev = self.ns[side], self.dev[side]
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "addr", "add", f"{self.addr[side]}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", dev)
        for side in ("a", "b"):
            if self.setup:
                argv = ["ip", "netns", "exec", self.ns[side]] + [
                    a.replace("{dev}", self.dev[side]) for a in self.setup]
                r = subprocess.run(argv, capture_output=True, text=True)
                if r.returncode != 0:
                    raise RuntimeError(f"{' '.join(argv)}: {(r.stdout + r.stderr).strip()}")

    def prefix(self, side):
        return ["ip", "netns", "exec", self.ns[side]]

    def address(self, side):
        return self.addr[side]

    def close(self):
        # Deleting a namespace deletes its end of the veth pair, and with it the other end.
        for ns in reversed(self._created):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL, check=False)
        self._created = []


def _ip(*args):
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip()}")
