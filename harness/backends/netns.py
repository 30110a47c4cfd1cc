"""The netns backend: a network namespace per host, joined by TUN devices the engine serves.

Per run: namespaces `rdt-<pid>-<run>-s` (sender) and `rdt-<pid>-<run>-r` (receiver).
The engine (TUN mode) creates device `rdt<k-1>` for path k in each namespace; we then
give them addresses (path k: 198.18.k.1/24 and fd00:7264:746c:k::1/64 on the sender,
.2 and ::2 on the receiver), MTU 1500, and bring them and `lo` up. Everything else in
the namespaces is down, so the only packets the engine sees are the programs'.
Needs root (or CAP_NET_ADMIN) and /dev/net/tun. Kernel TCP in both namespaces is
pinned (congestion control and initial window per route, TCP sysctls): backends/tcp.py.

Loopback (the COMN contract: the course runs both programs on one machine over `lo`,
so students bind their receiver to `127.0.0.1` or `"localhost"` and some senders send
to `localhost` whatever host they are given). The programs stay in their own
namespaces, so the link stays the only way from one to the other, and the kernel
steers the link's packets to loopback with NAT (nftables, table `ip rdtlab`):
- receiver's namespace: `route_localnet=1` at set-up (the kernel otherwise drops a
  packet for 127/8 that arrives on a device, and a reply from 127/8 leaving by one);
  once the harness sees the receiver's socket bound to 127.x (`deliver_to_loopback`,
  between the bind and the sender's start: `TransferResult.startup["loopback_nat_ms"]`),
  a prerouting DNAT of UDP and TCP arriving from the link for the listen port to that
  loopback address; conntrack rewrites the replies' source back to the host's address,
  so the sender sees nothing changed. Only then, because a receiver bound to its link
  address needs no NAT (DNAT would hide packets from a socket bound to 198.18.k.2), and
  one bound to the wildcard would answer from 198.18.k.2, outside the NAT's mapping
  (conntrack could then remap its source port).
- sender's namespace, at set-up: an output DNAT of packets for 127.0.0.1:PORT to the
  receiver's address on path 1 and a masquerade of their loopback source, so a sender
  that sends to `localhost` reaches the receiver through the link, not its own `lo`.
IPv6 has no `route_localnet`: the kernel never accepts ::1 from a device, so a
receiver bound to `::1` cannot be reached here; the harness says so at once (it is
not in `Session.reachable`) instead of letting the run time out.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading

from pyroute2 import netns

from harness.backends import Host, Session, next_run_id, tcp
from harness.engine import Engine, EngineError
from harness.procs import UsageError

PORT = 5001  # the receiver's namespace is its own: any fixed port is free
MTU = 1500
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


def device_lines(ifnames: list[str], side: int, tcp_cc: str = tcp.DEFAULT) -> tuple[list[str], list[str]]:
    """`ip -batch` lines for one host, in two parts: `lo` and its devices (created by the
    engine) up, MTU, no automatic IPv6 link-local address (it would send MLD/RS), the path
    addresses (IPv6 without duplicate-address detection: usable at once); then kernel
    TCP's congestion control and initial window on every route (backends/tcp.py), once
    the kernel has made them (set_up_kernel waits for the IPv6 local ones)."""
    lines = ["link set dev lo up"]
    devices = []
    for k, ifname in enumerate(ifnames, start=1):
        v4, v6 = f"{host_address(k, side, False)}/24", f"{host_address(k, side, True)}/64"
        lines += [
            f"link set dev {ifname} mtu {MTU} addrgenmode none",
            f"link set dev {ifname} up",
            f"addr add {v4} dev {ifname}",
            f"addr add {v6} dev {ifname} nodad",
        ]
        devices.append((ifname, v4, v6))
    return lines, tcp.route_pins(tcp_cc, devices)


def _setup_command(argv: list[str], stdin: str, what: str, package: str) -> None:
    """Run one set-up command (`what`: 'setting up NAME', ...); a failure is one line:
    UsageError when the command is missing, else EngineError with its reason (for `ip
    -batch`, the line before its "Command failed" line number)."""
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=10)
    except FileNotFoundError:
        raise UsageError(f"the netns backend needs the `{argv[0]}` command (Debian package {package})") from None
    except subprocess.TimeoutExpired:
        raise EngineError(f"{what} did not finish within 10 s") from None
    if done.returncode != 0:
        said = [line for line in done.stderr.strip().splitlines() if not line.startswith("Command failed")]
        why = (said or [f"exit {done.returncode}"])[-1]
        if "No such file" in why and "nft" in why:
            raise UsageError(
                "the netns backend needs the `nft` command for loopback-bound programs "
                "(Debian package nftables; `make debs` installs it)"
            )
        raise EngineError(f"{what} failed: {why}")


def _in_namespace(name: str, argv: list[str], stdin: str = "") -> None:
    """Run argv in namespace `name` with nsenter (util-linux). Not `ip netns exec` (its
    mount namespace and sysfs remount cost time) nor a preexec setns (a preexec function
    makes Python fork the whole harness, slow with many runs' threads): this is on the
    path from the receiver's bind to the sender's start."""
    _setup_command(["nsenter", f"--net=/run/netns/{name}", *argv], stdin, f"setting up {name}", "util-linux")


# The kernel drops a packet for 127/8 that arrives on, or would leave by, a device
# unless route_localnet is on ('all' is OR-ed with each device's own setting).
ROUTE_LOCALNET = "echo 1 > /proc/sys/net/ipv4/conf/all/route_localnet; nft -f -"


# The kernel inserts an IPv6 address's local route from a work item, after the request
# that added the address has returned (IPv4's come with the request): wait for them (up
# to ~2 s) before pinning, or the pin's delete would take the copy it just added.
WAIT_IPV6_LOCAL = (
    'n=0; until [ "$(ip -6 route show table local type local | wc -l)" -ge {count} ]; do '
    'n=$((n+1)); [ $n -lt 2000 ] || {{ echo "the kernel made no IPv6 local routes for the '
    'addresses within 2 s" >&2; exit 1; }}; sleep 0.001; done\n'
)


def _batch(lines: list[str]) -> str:
    return "ip -batch - <<'EOF'\n" + "\n".join(lines) + "\nEOF\n"


def set_up_kernel(name: str, nat: str | None, ip_lines: list[str] = (), pins: list[str] = ()) -> None:
    """One nsenter per namespace (a process chain of a few ms, where pyroute2 forked the
    grader and ran an event loop per request): kernel TCP's sysctls (backends/tcp.py),
    `ip_lines` then, once the kernel has made its routes, the route `pins` through `ip
    -batch`, and with `nat` route_localnet and the nft rules for loopback-bound programs."""
    script = tcp.sysctl_script()
    if ip_lines:
        script += _batch(ip_lines)
    if pins:
        script += WAIT_IPV6_LOCAL.format(count=tcp.ipv6_locals(pins))
        script += _batch(pins)
    script += ROUTE_LOCALNET if nat is not None else "true"
    _in_namespace(name, ["sh", "-ec", script], nat or "")


def sender_loopback_nat(receiver: str) -> str:
    """nft rules: the sender's packets for 127.0.0.1:PORT go to `receiver` over the link."""
    return f"""table ip rdtlab {{
  chain out {{
    type nat hook output priority -100; policy accept;
    ip daddr 127.0.0.1 meta l4proto {{ tcp, udp }} th dport {PORT} dnat to {receiver}
  }}
  chain post {{
    type nat hook postrouting priority 100; policy accept;
    oifname "rdt*" ip saddr 127.0.0.0/8 masquerade
  }}
}}
"""


def receiver_loopback_nat(port: int, loopback: str) -> str:
    """nft rules: what arrives from the link for `port` goes to `loopback`:port."""
    return f"""table ip rdtlab {{
  chain pre {{
    type nat hook prerouting priority -100; policy accept;
    iifname "rdt*" meta l4proto {{ tcp, udp }} th dport {port} dnat to {loopback}
  }}
}}
"""


def deliver_to_loopback(name: str, port: int, loopback: str) -> None:
    """Once the receiver is seen bound to `loopback` (route_localnet is on since set-up)."""
    _in_namespace(name, ["nft", "-f", "-"], receiver_loopback_nat(port, loopback))


def create_namespaces(session: Session, prefix: str, names: tuple[str, ...] = ("s", "r")) -> tuple[str, ...]:
    """Create the sender's and receiver's namespaces (one `ip` process for all; pyroute2
    forks the grader for each); their removal joins the cleanups."""
    names = tuple(f"{prefix}-{n}" for n in names)
    there = {name for name in names if os.path.exists(f"/run/netns/{name}")}  # never ours to remove
    try:
        _setup_command(
            ["ip", "-batch", "-"],
            "".join(f"netns add {n}\n" for n in names),
            f"creating network namespaces {', '.join(names)}",
            "iproute2",
        )
    finally:
        for name in names:
            if name not in there and os.path.exists(f"/run/netns/{name}"):
                session._cleanups.append(lambda name=name: netns.remove(name))
    return names


def open(
    paths: list[dict], *, config: dict, workdir: str, procs, ipv6: bool = False, tcp_cc: str = tcp.DEFAULT
) -> Session:
    tcp.check(tcp_cc)
    _sweep_once()
    n = len(paths)
    session = Session(
        "netns",
        Host("sender", None, [host_address(k, 1, ipv6) for k in range(1, n + 1)]),
        Host("receiver", None, [host_address(k, 2, ipv6) for k in range(1, n + 1)]),
        PORT,
        [(host_address(k, 2, ipv6), PORT) for k in range(1, n + 1)],
        reachable=[host_address(k, 2, ipv6) for k in range(1, n + 1)],
        ipv6=ipv6,
    )
    try:
        s_name, r_name = create_namespaces(session, f"rdt-{os.getpid()}-{next_run_id()}")
        session.sender.netns, session.receiver.netns = s_name, r_name
        ifnames = [f"rdt{k}" for k in range(n)]
        engine_paths = [
            dict(
                p,
                tun_a={"netns": f"/run/netns/{s_name}", "ifname": ifnames[k]},
                tun_b={"netns": f"/run/netns/{r_name}", "ifname": ifnames[k]},
            )
            for k, p in enumerate(paths)
        ]
        engine = Engine(dict(config, mode="tun", paths=engine_paths), workdir, procs)
        session.engine = engine
        session._cleanups.append(engine.stop)
        engine.start()
        set_up_kernel(
            s_name, None if ipv6 else sender_loopback_nat(host_address(1, 2, False)), *device_lines(ifnames, 1, tcp_cc)
        )
        set_up_kernel(r_name, None if ipv6 else "", *device_lines(ifnames, 2, tcp_cc))
        if not ipv6:
            session.reachable.append("127.0.0.1")
            session.on_loopback_bind = lambda address: deliver_to_loopback(r_name, PORT, address)
    except BaseException:
        session.close()
        raise
    return session
