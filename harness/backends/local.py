"""The local backend: both programs on loopback, the engine as a UDP relay between them.

The receiver binds a port the kernel just handed out as free; the sender sends to the
engine's listen address for each path, and the engine relays to the receiver and
back. Needs no privileges. A collision on the receiver's port (another program took
it in between) shows as the receiver failing to bind; transfer.py then retries.

Isolated (`isolate`, wherever the harness may: root, or CAP_SYS_ADMIN and CAP_NET_ADMIN;
transfer.py decides): the engine and both programs run in a network
namespace of the run's own, whose only device is its loopback: the engine makes it as
it starts and the programs join it (/proc/<engine>/ns/net); it goes when they do, so
nothing is left to remove.
Nothing changes for the programs (127.0.0.1 and ::1, `localhost`, the engine's ports),
but the host's loopback services, its abstract Unix sockets (they belong to a network
namespace) and every other run are out of their reach. The engine stays outside the
programs' jail: only its UDP endpoints are in their namespace.
"""

from __future__ import annotations

import socket

from harness.backends import Host, Session
from harness.engine import Engine, EngineError
from harness.procs import UsageError


def free_udp_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def split_hostport(text: str) -> tuple[str, int]:
    """'127.0.0.1:40123' or '[::1]:40123' -> (host, port)."""
    host, port = text.rsplit(":", 1)
    return host.strip("[]"), int(port)


def join_hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


ISOLATED_PORT = 5001  # the receiver's port in an isolated run's namespace: all are free


def open(
    paths: list[dict],
    *,
    config: dict,
    workdir: str,
    procs,
    ipv6: bool = False,
    relay: bool = True,
    isolate: bool = False,
) -> Session:
    """Start the engine relaying each path to the receiver's port; return the session.

    relay=False (backend "direct", for the overhead benchmark only): no engine, the
    sender talks straight to the receiver, so there are no impairments and no counters.
    """
    host = "::1" if ipv6 else "127.0.0.1"
    port = ISOLATED_PORT if isolate else free_udp_port(host)
    if not relay:
        if any(p["forward"] or p["reverse"] for p in paths):
            raise UsageError("the direct backend has no link engine: it takes only a perfect link ('')")
        return Session(
            "direct",
            Host("sender", None, [host]),
            Host("receiver", None, [host]),
            port,
            [(host, port)] * len(paths),
            reachable=[host],
            ipv6=ipv6,
        )
    engine_paths = [dict(p, listen=join_hostport(host, 0), to=join_hostport(host, port)) for p in paths]
    session = Session(
        "local",
        Host("sender", None, [host] * len(paths)),
        Host("receiver", None, [host] * len(paths)),
        port,
        [],
        reachable=[host],
        ipv6=ipv6,
    )
    try:
        engine = Engine(dict(config, mode="udp", paths=engine_paths), workdir, procs, own_netns=isolate)
        session.engine = engine
        session._cleanups.append(engine.stop)
        engine.start()
        if isolate:
            session.sender.netns = session.receiver.netns = engine.netns_path
        try:
            listen = {p["name"]: p["listen"] for p in engine.paths}
            session.targets = [split_hostport(listen[p["name"]]) for p in paths]
        except (KeyError, ValueError):
            raise EngineError(f"the ready line does not give a listen address for every path: {engine.paths}") from None
    except BaseException:
        session.close()
        raise
    return session
