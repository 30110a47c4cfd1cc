"""Kernel TCP as part of the experiment, not of the host: pinned in the namespaces a
backend makes, so a figure means the same on every machine.

The host's own settings are never touched. In each namespace it makes, a backend pins:
- the congestion control, per route (`ip route ... congctl NAME`): every unicast and
  local route of the namespace, IPv4 and IPv6, main and local tables, so a connection
  gets it whatever address it uses (the link's, or loopback on the kernel backend's
  shared queue) and whatever program opens it (iperf3, reference/tcpfile.py, a
  student's). Per route, not the per-namespace sysctl: a namespace may only default to
  an algorithm in the host's `tcp_allowed_congestion_control` (Debian allows reno and
  the host's default only). Default `cubic`, the Linux default students have;
- the initial congestion window, per route (`initcwnd 10`, RFC 6928, Linux's default);
- per-namespace sysctls (each namespace starts from the host's values), to Linux's
  defaults except `tcp_no_metrics_save`: see SYSCTLS.
Rows of TCP runs record the algorithm read back from the live connection (TCP_CONGESTION)
and the kernel release, so what is pinned here is also checked there.
"""

from __future__ import annotations

import ipaddress
import platform

from harness.procs import UsageError

DEFAULT = "cubic"
OFFERED = ("reno", "cubic", "bbr")  # what the options name; any available one is accepted
INITCWND = 10  # segments (RFC 6928; Linux's default since 2.6.39)
AVAILABLE = "/proc/sys/net/ipv4/tcp_available_congestion_control"

# net.ipv4.* in every namespace a backend makes: Linux's defaults, stated so that a host
# tuned otherwise does not leak into the figures.
SYSCTLS = {
    "tcp_sack": "1",  # selective ACKs (RFC 2018)
    "tcp_dsack": "1",
    "tcp_timestamps": "1",  # RTT measurement and PAWS (RFC 7323)
    "tcp_window_scaling": "1",
    "tcp_ecn": "2",  # ECN only when the peer asks (the link marks nothing anyway)
    "tcp_frto": "2",  # F-RTO: spurious timeouts detected
    "tcp_recovery": "1",  # RACK loss detection
    "tcp_early_retrans": "3",  # tail loss probes
    "tcp_slow_start_after_idle": "1",
    "tcp_no_metrics_save": "1",  # NOT the default: a reused namespace carries no ssthresh
    # or RTT from one connection to the next
    "tcp_rmem": "4096 131072 6291456",
    "tcp_wmem": "4096 16384 4194304",
}


def kernel() -> str:
    """The kernel release the TCP runs ran on (platform.release())."""
    return platform.release()


def available() -> list[str] | None:
    """The algorithms this kernel has loaded, or None where it cannot say (not Linux)."""
    try:
        with open(AVAILABLE) as f:
            return f.read().split()
    except OSError:
        return None


def check(name: str) -> str:
    """`name` if this kernel can pin it, else UsageError in one line naming what it has."""
    if not isinstance(name, str) or not name:
        raise UsageError(f"TCP congestion control must be a name such as {', '.join(OFFERED)}, not {name!r}")
    have = available()
    if have is None:
        if name in OFFERED:
            return name
        raise UsageError(f"TCP congestion control {name!r} is not one of {', '.join(OFFERED)}")
    if name not in have:
        raise UsageError(
            f"TCP congestion control {name!r} is not available on this machine's Linux ({kernel()}); "
            f"available: {' '.join(have)}"
        )
    return name


def runs_kernel_tcp(build) -> bool:
    """Whether a sheet's build() runs kernel TCP (it takes `tcp_cc`)."""
    import inspect

    return "tcp_cc" in inspect.signature(build).parameters


def sysctl_script() -> str:
    """Shell lines writing SYSCTLS inside a namespace (a knob this kernel lacks is skipped)."""
    lines = []
    for key, value in SYSCTLS.items():
        path = f"/proc/sys/net/ipv4/{key}"
        lines.append(f"[ ! -e {path} ] || echo '{value}' > {path}")
    return "; ".join(lines) + "; "


DELETE_LOCAL6 = "route del local"  # the line that takes the kernel's own IPv6 local route


def ipv6_locals(pins: list[str]) -> int:
    """How many of the kernel's IPv6 local routes `pins` (route_pins' lines) replace: the
    kernel must have made them all before the pins run (netns.set_up_kernel waits)."""
    return sum(line.startswith(DELETE_LOCAL6 + " ") for line in pins)


def route_pins(name: str, devices: list[tuple[str, str, str]]) -> list[str]:
    """`ip -batch` lines giving every unicast and local route of a namespace congestion
    control `name` and INITCWND: the routes the kernel makes for `lo` (127.0.0.1/8, ::1,
    up) and for each (device, IPv4 address/prefix, IPv6 address/prefix) once its addresses
    are added on a device that is up. `tests/harness/test_tcp_pinning.py` reads the whole
    table back, so a kernel that makes other routes is caught there.

    IPv6 takes metric 0 in a request as "the default, 1024", so a route the kernel made
    with metric 0 (the local ones) cannot be replaced in place: a copy with metric 1024
    and the pinned metrics is added, then the original deleted (the kernel deletes the
    lowest metric first), else the original, being preferred, would still decide."""
    pin = f"congctl {name} initcwnd {INITCWND}"
    lines = []

    def local6(address: str, dev: str) -> None:
        lines.append(f"route add local {address} dev {dev} table local proto kernel metric 1024 {pin}")
        lines.append(f"{DELETE_LOCAL6} {address} dev {dev} table local metric 0")

    for dst in ("127.0.0.0/8", "127.0.0.1"):
        lines.append(f"route replace local {dst} dev lo table local proto kernel scope host src 127.0.0.1 {pin}")
    local6("::1", "lo")
    for dev, v4, v6 in devices:
        a4, a6 = ipaddress.ip_interface(v4), ipaddress.ip_interface(v6)
        lines.append(f"route replace {a4.network} dev {dev} proto kernel scope link src {a4.ip} {pin}")
        lines.append(f"route replace local {a4.ip} dev {dev} table local proto kernel scope host src {a4.ip} {pin}")
        lines.append(f"route replace {a6.network} dev {dev} proto kernel metric 256 {pin}")
        local6(str(a6.ip), dev)
    return lines
