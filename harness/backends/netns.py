"""The netns backend: a network namespace per host, joined by TUN devices the engine serves.

Per run: namespaces `rdt-<pid>-<run>-s` (sender) and `rdt-<pid>-<run>-r` (receiver).
The engine (TUN mode) creates device `rdt<k-1>` for path k in each namespace; we then
give them addresses (path k: 198.18.k.1/24 and fd00:7264:746c:k::1/64 on the sender,
.2 and ::2 on the receiver), MTU 1500, and bring them and `lo` up. Everything else in
the namespaces is down, so the only packets the engine sees are the programs'.
Needs root (or CAP_NET_ADMIN) and /dev/net/tun.
"""
from __future__ import annotations

import os
import re
import threading

from pyroute2 import NetlinkError, NetNS, netns

from harness.backends import Host, Session, next_run_id
from harness.engine import Engine, EngineError

PORT = 5001           # the receiver's namespace is its own: any fixed port is free
MTU = 1500
IFA_F_NODAD = 0x02    # no duplicate-address detection: the address is usable at once
ADDR_GEN_MODE_NONE = 1  # no automatic IPv6 link-local address (it would send MLD/RS)
STALE = re.compile(r"^rdt-(\d+)-\d+-[sr]$")

_swept = False
_sweep_lock = threading.Lock()


def host_address(path_index: int, side: int, ipv6: bool) -> str:
    """Path k (from 1), side 1 = sender, 2 = receiver."""
    return f"fd00:7264:746c:{path_index}::{side}" if ipv6 else f"198.18.{path_index}.{side}"


def sweep_stale() -> list[str]:
    """Remove `rdt-*` namespaces whose creating process is dead (a crashed earlier run)."""
    removed = []
    for name in netns.listnetns():
        m = STALE.match(name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            try:
                netns.remove(name)
                removed.append(name)
            except OSError:
                pass
    return removed


def _sweep_once() -> None:
    global _swept
    with _sweep_lock:
        if not _swept:
            sweep_stale()
            _swept = True


def configure(name: str, ifnames: list[str], side: int) -> None:
    """Addresses, MTU and state for one host's devices (created by the engine)."""
    with NetNS(name, flags=0) as ns:
        ns.link("set", index=ns.link_lookup(ifname="lo")[0], state="up")
        for k, ifname in enumerate(ifnames, start=1):
            index = ns.link_lookup(ifname=ifname)[0]
            ns.link("set", index=index, mtu=MTU, IFLA_AF_SPEC={"attrs": [
                ("AF_INET6", {"attrs": [("IFLA_INET6_ADDR_GEN_MODE", ADDR_GEN_MODE_NONE)]})]})
            ns.addr("add", index=index, address=host_address(k, side, False), prefixlen=24)
            ns.addr("add", index=index, address=host_address(k, side, True), prefixlen=64,
                    flags=IFA_F_NODAD)
            ns.link("set", index=index, state="up")


def create_namespaces(session: Session, prefix: str) -> tuple[str, str]:
    """Create the sender's and receiver's namespaces; their removal joins the cleanups."""
    names = (f"{prefix}-s", f"{prefix}-r")
    for name in names:
        netns.create(name)
        session._cleanups.append(lambda name=name: netns.remove(name))
    return names


def open(paths: list[dict], *, config: dict, workdir: str, procs, ipv6: bool = False) -> Session:
    _sweep_once()
    n = len(paths)
    session = Session("netns", Host("sender", None, [host_address(k, 1, ipv6) for k in range(1, n + 1)]),
                      Host("receiver", None, [host_address(k, 2, ipv6) for k in range(1, n + 1)]),
                      PORT, [(host_address(k, 2, ipv6), PORT) for k in range(1, n + 1)])
    try:
        s_name, r_name = create_namespaces(session, f"rdt-{os.getpid()}-{next_run_id()}")
        session.sender.netns, session.receiver.netns = s_name, r_name
        ifnames = [f"rdt{k}" for k in range(n)]
        engine_paths = [dict(p, tun_a={"netns": f"/run/netns/{s_name}", "ifname": ifnames[k]},
                             tun_b={"netns": f"/run/netns/{r_name}", "ifname": ifnames[k]})
                        for k, p in enumerate(paths)]
        engine = Engine(dict(config, mode="tun", paths=engine_paths), workdir, procs)
        session.engine = engine
        session._cleanups.append(engine.stop)
        engine.start()
        try:
            configure(s_name, ifnames, 1)
            configure(r_name, ifnames, 2)
        except (OSError, IndexError, NetlinkError) as e:
            raise EngineError(f"setting up the engine's devices in the namespaces failed: {e}") from None
    except BaseException:
        session.close()
        raise
    return session
