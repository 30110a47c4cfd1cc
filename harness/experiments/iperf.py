"""The TCP baseline: iperf3 between two network namespaces joined by the link engine.

COMN part 4 measures `iperf -M 1KB -w <window>` over the same netem link as the UDP
protocols. Here the netns backend gives the client and the server their own
namespaces and the engine (TUN mode) carries every packet, so TCP sees the same
delay, loss and shared rate queue. The figures come from `iperf3 -J`, receiver side:
goodput = end.sum_received.bytes / seconds (KiB/s) and the sender's `retransmits`.

`-w` sets the socket buffers; Linux doubles the value it is given and keeps part of
the buffer for overhead, so the window TCP advertises is about the -w value, never
exactly it. `-M 1024` sets the MSS (TCP_MAXSEG), i.e. 1 KiB of payload per segment.

Kernel TCP's congestion control is pinned per route in both namespaces (`tcp_cc`,
default cubic: harness/backends/tcp.py), whatever the host's default; each row records
the algorithm that ran, as iperf3 read it back from its connection
(end.sender_tcp_congestion, iperf3 >= 3.2), and the kernel release.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable

from harness import backends
from harness.backends import tcp
from harness.engine import EngineError, check_spec
from harness.procs import BindWatch, Processes, ProgramNotFound, UsageError

IPERF_PORT = 5201
BIND_TIMEOUT_S = 10.0
SERVER_GRACE_S = 5.0


def unavailable_reason() -> str | None:
    """Why iperf3 runs cannot happen here, or None."""
    if shutil.which("iperf3") is None:
        return "iperf3 is not installed (`make setup` installs it; or apt-get install iperf3)"
    return backends.netns_unavailable_reason()


def client_argv(
    host: str, window_bytes: int | None, size: int | None, duration_s: float | None, mss: int | None
) -> list[str]:
    """iperf3's client command; a window or MSS of None leaves the kernel's own (autotuned
    buffers; the MSS from the MTU, 1448 bytes with timestamps on a 1500-byte MTU)."""
    if (size is None) == (duration_s is None):
        raise UsageError("iperf3: give exactly one of a size (-n) or a duration (-t)")
    amount = ["-n", str(size)] if size is not None else ["-t", f"{duration_s:g}"]
    return (
        ["iperf3", "-c", host, "-p", str(IPERF_PORT), "-J"]
        + (["-M", str(mss)] if mss is not None else [])
        + (["-w", str(window_bytes)] if window_bytes is not None else [])
        + amount
    )


def parse_iperf_json(text: str) -> dict:
    """The receiver-side figures of one `iperf3 -c ... -J` run, as a sweep row."""
    try:
        report = json.loads(text)
    except ValueError:
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        return {"ok": False, "error": f"iperf3 printed no JSON report: {lines[-1] if lines else '(nothing)'}"}
    if report.get("error"):
        return {"ok": False, "error": f"iperf3: {report['error']}"}
    end = report.get("end") or {}
    received, sent = end.get("sum_received") or {}, end.get("sum_sent") or {}
    seconds, nbytes = received.get("seconds"), received.get("bytes")
    if not seconds or nbytes is None:
        return {"ok": False, "error": "iperf3's report has no receiver summary (end.sum_received)"}
    return {
        "ok": True,
        "error": None,
        "goodput_kBps": nbytes / 1024 / seconds,
        "bytes": nbytes,
        "wire_time_s": seconds,
        "retransmissions": sent.get("retransmits"),
        "tcp_cc": end.get("sender_tcp_congestion"),
    }


def run_iperf(
    spec: str,
    *,
    window_bytes: int | None,
    size: int | None = 1 << 20,
    duration_s: float | None = None,
    mss: int | None = 1024,
    shared_queue: bool = True,
    seed: int = 1,
    time_limit: float = 300.0,
    tcp_cc: str | None = None,
    reverse: str | None = None,
) -> dict:
    """One iperf3 TCP transfer over the link `spec` (the ACKs' direction: `reverse`, by
    default the same); a sweep row. `tcp_cc`: the congestion control pinned in the
    namespaces (None: cubic)."""
    tcp_cc = tcp.check(tcp.DEFAULT if tcp_cc is None else tcp_cc)
    why = unavailable_reason()
    if why:
        return {"ok": False, "error": why}
    check_spec(spec, "link spec")
    reverse = spec if reverse is None else check_spec(reverse, "reverse link spec") or reverse
    session_args = {
        "paths": [{"name": "p0", "forward": spec, "reverse": reverse, "shared_queue": shared_queue}],
        "config": {"seed": seed},
    }
    workdir = tempfile.mkdtemp(prefix="rdt-iperf-")
    try:
        with Processes() as procs:
            try:
                session = backends.open_session("netns", **session_args, workdir=workdir, procs=procs, tcp_cc=tcp_cc)
            except EngineError as e:
                return {"ok": False, "error": f"engine failed: {e}"}
            try:
                row = _client_server(session, procs, workdir, window_bytes, size, duration_s, mss, time_limit)
            finally:
                session.close()
        row["cpu_s"] = round(procs.cpu_s, 3)  # iperf3 and the engine (kernel TCP's own work is not in it)
        return row
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _client_server(
    session,
    procs: Processes,
    workdir: str,
    window_bytes: int | None,
    size,
    duration_s,
    mss: int | None,
    time_limit: float,
) -> dict:
    host = session.receiver.addresses[0]
    try:
        server = procs.start(
            "iperf3-server",
            ["iperf3", "-s", "-1", "-B", host, "-p", str(IPERF_PORT)],
            cwd=workdir,
            netns=session.receiver.netns,
        )
    except ProgramNotFound as e:
        return {"ok": False, "error": f"iperf3 server: {e}"}
    deadline = time.monotonic() + BIND_TIMEOUT_S
    watch = BindWatch(server.pid, IPERF_PORT, server.pid)
    while not watch.sockets():
        if server.wait(0.02) or time.monotonic() > deadline:
            procs.stop(server)
            return {"ok": False, "error": f"iperf3 server did not listen: {server.last_stderr_line() or 'no message'}"}
    client = procs.start(
        "iperf3-client", client_argv(host, window_bytes, size, duration_s, mss), cwd=workdir, netns=session.sender.netns
    )
    timed_out = not client.wait(time_limit)
    procs.stop(client)
    server.wait(SERVER_GRACE_S)
    procs.stop(server)
    stats = session.engine.stop() if session.engine is not None else None
    if timed_out:
        return {"ok": False, "error": f"iperf3 timed out after {time_limit:g} s"}
    row = parse_iperf_json(client.stdout())
    lags = [(stats or {}).get(d, {}).get("lag_us") or {} for d in ("forward", "reverse")]
    row["lag_p99_us"] = max((lag.get("p99") or 0 for lag in lags), default=None) if stats else None
    row["backend"] = "netns"
    row["kernel"] = tcp.kernel()
    return row


@dataclass(frozen=True)
class IperfRun:
    """A sweep's run_one for iperf3: the cell gives `window_kB` (KiB, for -w) and the
    link spec's placeholders (e.g. `delay`, `loss`)."""

    link: str  # netem spec template
    size: int | None = 1 << 20  # -n bytes, or None with duration_s
    duration_s: float | None = None
    mss: int = 1024
    shared_queue: bool = True
    time_limit: float | Callable[[dict], float] = 300.0
    fixed: dict = field(default_factory=dict)
    tcp_cc: str | None = None  # congestion control pinned (None: cubic)

    def __call__(self, params: dict, seed: int) -> dict:
        values = {**self.fixed, **params}
        if "window_kB" not in values:
            raise UsageError("an iperf3 sweep needs a window_kB parameter (the -w value in KiB)")
        limit = self.time_limit(values) if callable(self.time_limit) else self.time_limit
        return run_iperf(
            self.link.format_map(values),
            window_bytes=int(values["window_kB"] * 1024),
            size=self.size,
            duration_s=self.duration_s,
            mss=self.mss,
            shared_queue=self.shared_queue,
            seed=seed,
            time_limit=limit,
            tcp_cc=self.tcp_cc,
        )
