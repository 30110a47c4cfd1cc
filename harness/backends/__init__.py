"""Backends: where the hosts live and how packets get from one to the other.

- `local`:  programs on loopback, the engine as a UDP relay between them (no privileges);
            isolated, all three in a network namespace of the run's own (root).
- `netns`:  a network namespace per host, joined by TUN devices the engine serves.
- `kernel`: a network namespace per host, joined by veth pairs with tc netem on them
            (only where the kernel has sch_netem).
- `auto`:   netns when root and /dev/net/tun are there, else local.

A backend's `open()` sets up one run and returns a `Session`: the two hosts, the port
the receiver binds, where the sender sends on each path, and the engine (if any).
`Session.close()` undoes everything `open()` did, however the run ended.
"""

from __future__ import annotations

import itertools
import os
import threading
from dataclasses import dataclass, field
from typing import Callable

from harness.procs import UsageError

BACKENDS = ("auto", "local", "netns", "kernel")
# Not offered to users: loopback with no engine at all, the baseline of the overhead
# benchmark (bench/transfer.py).
DIRECT = "direct"


class BackendUnavailable(UsageError):
    """The backend cannot run on this machine (no root, no TUN, no netem...)."""


@dataclass
class Host:
    role: str  # "sender" or "receiver"
    netns: str | None = None  # network namespace name; None = the caller's
    addresses: list[str] = field(default_factory=list)  # this host's address on each path


@dataclass
class Session:
    backend: str
    sender: Host
    receiver: Host
    listen_port: int  # what the receiver binds
    targets: list[tuple[str, int]]  # where the sender sends, one per path
    engine: object | None = None  # harness.engine.Engine, started
    # Addresses a receiver may bind (besides the wildcard of the run's family) and still
    # get the link's packets; `ipv6` is the run's family.
    reachable: list[str] = field(default_factory=list)
    ipv6: bool = False
    # Called once the receiver has bound a loopback address (netns: steer the link's
    # packets to it); None where loopback needs nothing (local) or cannot work.
    on_loopback_bind: Callable[[int], None] | None = None
    _cleanups: list = field(default_factory=list)

    def delivers_to(self, address: str) -> bool:
        """Whether a socket bound to `address` gets the link's packets: the wildcard of
        the run's family (IPv4's `::` is dual-stack), or one of `reachable`."""
        if address in self.reachable:
            return True
        if address.startswith("127.") and "127.0.0.1" in self.reachable and self.on_loopback_bind:
            return True  # all of 127/8 is loopback (Debian names the host 127.0.1.1)
        return address == "::" or (address == "0.0.0.0" and not self.ipv6)

    def close(self) -> None:
        """Undo the set-up, last step first; every step runs even if one fails."""
        errors = []
        while self._cleanups:
            step = self._cleanups.pop()
            try:
                step()
            except Exception as e:  # keep cleaning; report the first failure after
                errors.append(e)
        if errors:
            raise errors[0]


_run_ids = itertools.count(1)
_run_ids_lock = threading.Lock()


def next_run_id() -> int:
    """A number unique within this process, for names of namespaces and devices."""
    with _run_ids_lock:
        return next(_run_ids)


CAP_NET_ADMIN, CAP_SYS_ADMIN = 12, 21
NETNS_CAPS = (1 << CAP_NET_ADMIN) | (1 << CAP_SYS_ADMIN)


def capabilities(kind: str = "CapEff") -> int:
    """This process's capability set `kind` (CapEff, CapAmb) as a bit mask; 0 if unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(kind + ":"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return 0


def netns_unavailable_reason(advice: bool = True) -> str | None:
    """Why the netns backend cannot run here (None: it can), with the CLI's advice."""
    why = _netns_missing()
    return why and why + ("; use --backend local" if advice else "")


def _netns_missing() -> str | None:
    caps = (
        "the netns backend needs CAP_NET_ADMIN and CAP_SYS_ADMIN (a container: --cap-add NET_ADMIN "
        "--cap-add SYS_ADMIN --device /dev/net/tun)"
    )
    if capabilities("CapBnd") & NETNS_CAPS != NETNS_CAPS:  # a container started without them: nobody has them
        return caps
    # Root, or a user handed the two capabilities as ambient ones (the lab image's
    # notebook user, see docker/lab-start.sh).
    if os.geteuid() != 0 and capabilities("CapAmb") & NETNS_CAPS != NETNS_CAPS:
        return "the netns backend needs root (network namespaces and TUN devices)"
    if capabilities("CapEff") & NETNS_CAPS != NETNS_CAPS:
        return caps
    if not os.path.exists("/dev/net/tun"):
        return "the netns backend needs /dev/net/tun, which this machine lacks (a container: --device /dev/net/tun)"
    return None


WHAT = {
    "netns": "network namespaces joined by TUN devices: UDP, TCP and iperf3",
    "local": "UDP on loopback through the engine: no TCP or iperf3",
    "kernel": "network namespaces joined by veth pairs with tc netem",
}


def describe(name: str) -> tuple[str, str]:
    """The backend `name` runs on here, and one line for a notebook saying which and why
    (`auto` says what the netns backend lacks when it falls back to local)."""
    try:
        chosen = resolve(name)
    except UsageError as e:
        return name, f"Backend {name}: not available here: {e}"
    line = f"Backend: {chosen} ({WHAT.get(chosen, chosen)})"
    if name != "auto":
        return chosen, f"{line}, as asked"
    if chosen == "local":
        return chosen, f"{line}, because {netns_unavailable_reason(advice=False)}"
    return chosen, f"{line}, chosen because NET_ADMIN, SYS_ADMIN and /dev/net/tun are available"


def resolve(name: str) -> str:
    """The concrete backend for `name` ('auto' resolved), or BackendUnavailable / UsageError."""
    if name == DIRECT:
        return name
    if name not in BACKENDS:
        raise UsageError(f"unknown backend {name!r}; expected one of: {', '.join(BACKENDS)}")
    if name == "auto":
        return "local" if netns_unavailable_reason() else "netns"
    if name == "netns":
        why = netns_unavailable_reason()
        if why:
            raise BackendUnavailable(why)
    if name == "kernel":
        from harness.backends.kernel import unavailable_reason

        why = unavailable_reason()
        if why:
            raise BackendUnavailable(why)
    return name


def isolation_unavailable_reason() -> str | None:
    """Why the local backend cannot give a run a network namespace of its own here
    (None: it can). Creating one takes CAP_SYS_ADMIN, bringing its loopback up
    CAP_NET_ADMIN: root, or a container given both."""
    if capabilities("CapEff") & NETNS_CAPS != NETNS_CAPS:
        return (
            "isolating a run on the local backend needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root; a container: "
            "--cap-add NET_ADMIN --cap-add SYS_ADMIN) to give it a network namespace of its own"
        )
    return None


def open_session(name: str, *, isolate: bool = False, tcp_cc: str | None = None, **kwargs) -> Session:
    """Set up one run on backend `name` (already resolved); see each module's `open`.
    `isolate`: the local backend's run in a network namespace of its own (the netns and
    kernel backends always are). `tcp_cc`: kernel TCP's congestion control in the
    namespaces the backend makes (backends/tcp.py; None: its default, cubic); the local
    backend runs no TCP."""
    if name in ("netns", "kernel"):
        from harness.backends import tcp

        kwargs["tcp_cc"] = tcp.DEFAULT if tcp_cc is None else tcp_cc
    if name == DIRECT:
        from harness.backends.local import open as local_open

        return local_open(relay=False, **kwargs)
    if name == "local":
        from harness.backends.local import open as local_open

        return local_open(isolate=isolate, **kwargs)
    if name == "netns":
        from harness.backends.netns import open as open_
    elif name == "kernel":
        from harness.backends.kernel import open as open_
    else:
        raise UsageError(f"unknown backend {name!r}")
    return open_(**kwargs)
