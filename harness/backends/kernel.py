"""The kernel backend: the kernel's own tc netem, where the kernel has sch_netem.

Duplex links: a namespace per host joined by a veth pair per path, with netem on each
end's egress (forward spec on the sender's end, reverse on the receiver's). A shared
queue (COMN's `tc qdisc add dev lo root netem ...`) is done as COMN does it: both
programs in one namespace, talking over its `lo`, which carries the netem qdisc.
There is no engine, so there are no link counters and no wire time on this backend.
Kernel TCP is pinned in its namespaces as on the netns backend (backends/tcp.py).
"""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
import threading

from pyroute2 import netns

from harness.backends import BackendUnavailable, Host, Session, next_run_id, tcp
from harness.backends.netns import PORT, create_namespaces, device_lines, host_address, set_up_kernel
from harness.procs import UsageError

MISSING = (
    "kernel backend needs the sch_netem qdisc, which this kernel lacks (modprobe sch_netem / CONFIG_NET_SCH_NETEM)"
)


def _tc(ns: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["tc", "-n", ns, *args], capture_output=True, text=True, timeout=10)


_probe_lock = threading.Lock()


def unavailable_reason() -> str | None:
    """Why the kernel backend cannot run here, or None. Probes once, in a scratch namespace
    (under a lock: parallel runs would otherwise create the same scratch namespace)."""
    with _probe_lock:
        return _probe()


@functools.cache
def _probe() -> str | None:
    if os.geteuid() != 0:
        return "the kernel backend needs root (network namespaces and tc); use --backend local"
    if subprocess.run(["sh", "-c", "command -v tc"], capture_output=True).returncode != 0:
        return "the kernel backend needs the `tc` command (Debian package iproute2)"
    scratch = f"rdt-{os.getpid()}-0-s"
    netns.create(scratch)
    try:
        probe = _tc(scratch, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms")
    finally:
        netns.remove(scratch)
    return None if probe.returncode == 0 else MISSING


def add_netem(ns: str, dev: str, spec: str) -> None:
    if not spec.strip():
        return
    done = _tc(ns, "qdisc", "add", "dev", dev, "root", "netem", *shlex.split(spec))
    if done.returncode != 0:
        raise UsageError(f"tc netem refused {spec!r}: {done.stderr.strip().splitlines()[-1]}")


def open(
    paths: list[dict], *, config: dict, workdir: str, procs, ipv6: bool = False, tcp_cc: str = tcp.DEFAULT
) -> Session:
    tcp.check(tcp_cc)
    if unavailable_reason():
        raise BackendUnavailable(unavailable_reason())
    if any(p.get("schedule") for p in paths) or config.get("schedule"):
        raise UsageError("the kernel backend cannot take paths down on a schedule; use netns")
    shared = any(p["shared_queue"] for p in paths)
    if shared and len(paths) > 1:
        raise UsageError("the kernel backend shares a queue only on a single path (netem on lo)")
    prefix = f"rdt-{os.getpid()}-{next_run_id()}"
    n = len(paths)
    if shared:
        lo = "::1" if ipv6 else "127.0.0.1"
        session = Session(
            "kernel",
            Host("sender", None, [lo]),
            Host("receiver", None, [lo]),
            PORT,
            [(lo, PORT)],
            reachable=[lo],
            ipv6=ipv6,
        )
    else:
        session = Session(
            "kernel",
            Host("sender", None, [host_address(k, 1, ipv6) for k in range(1, n + 1)]),
            Host("receiver", None, [host_address(k, 2, ipv6) for k in range(1, n + 1)]),
            PORT,
            [(host_address(k, 2, ipv6), PORT) for k in range(1, n + 1)],
            reachable=[host_address(k, 2, ipv6) for k in range(1, n + 1)],
            ipv6=ipv6,
        )
    try:
        if shared:
            (name,) = create_namespaces(session, prefix, ("s",))
            session.sender.netns = session.receiver.netns = name
            set_up_kernel(name, None, ["link set dev lo up"], tcp.route_pins(tcp_cc, []))
            add_netem(name, "lo", paths[0]["forward"])
            return session
        s_name, r_name = create_namespaces(session, prefix)
        session.sender.netns, session.receiver.netns = s_name, r_name
        ifnames = [f"rdt{k}" for k in range(n)]
        veths = [f"link add {ifname} type veth peer name {ifname} netns {r_name}" for ifname in ifnames]
        s_lines, s_pins = device_lines(ifnames, 1, tcp_cc)
        set_up_kernel(s_name, None, veths + s_lines, s_pins)
        set_up_kernel(r_name, None, *device_lines(ifnames, 2, tcp_cc))
        for ifname, p in zip(ifnames, paths):
            add_netem(s_name, ifname, p["forward"])
            add_netem(r_name, ifname, p["reverse"])
    except BaseException:
        session.close()
        raise
    return session
