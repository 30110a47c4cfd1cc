"""A sweep's `run_one` for transfers: one call = one `harness.run_transfer`.

The link spec and the program commands are templates filled from the cell's
parameters, so a sweep over `delay` and `window` needs nothing but the grid:
    TransferRun(sender=Program("python3 {impl}/Sender3.py ... {timeout} {window}", "comn"),
                receiver=Program("python3 {impl}/Receiver3.py {listen_port} {output}"),
                link="delay {delay}ms loss {loss}% rate 10mbit", fixed={"impl": ..., "loss": 5})

Multi-homed runs give one spec template per path (`paths=(spec0, spec1)`, engine paths
p0, p1, ...) and may take paths down and up with an engine `schedule`; a cell may set
its own file `size`; `extra(result, pcap_path)` adds fields of its own to the row
(with `pcap=True` it gets the engine's pcap of the run, with `trace=True` the result's
`trace` is the engine's trace of it; both are removed afterwards). `keep_trace(seed)`
names a file where the engine's trace of the run with that seed stays (a notebook's
picture of a measured cell draws that run: harness.notebook.Lab.picture). `ipv6` (or
f(cell)) runs the cell over IPv6.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from typing import Callable

from harness.backends import tcp
from harness.procs import UsageError
from harness.transfer import Link, Path, Program, TransferResult, run_transfer


def row_from_result(res: TransferResult) -> dict:
    """The fields of a TransferResult that a sweep table keeps (flat, JSON-ready)."""
    row = {
        "ok": res.ok,
        "error": res.error,
        "backend": res.backend,
        "goodput_kBps": res.goodput_kBps,
        "wire_time_s": res.wire_time_s,
        "process_time_s": res.process_time_s,
        "retransmissions": res.retransmissions,
        "lag_p99_us": (res.lag_us or {}).get("p99"),
        "steal": res.steal,
        "cpu_s": res.cpu_s,
    }
    for name, value in (res.printed or {}).items():
        if isinstance(value, (str, int, float, bool)) or value is None:
            row[f"printed_{name}"] = value
    # kernel TCP: the algorithm the program read back from its connection, and the kernel
    # (reference.tcpfile --json, iperf3 -J report them), so a row says what ran
    if (res.printed or {}).get("congestion_control"):
        row["tcp_cc"] = res.printed["congestion_control"]
        row["kernel"] = res.printed.get("kernel") or tcp.kernel()
    return row


@dataclass(frozen=True)
class TransferRun:
    sender: Program
    receiver: Program
    link: str  # netem spec template, e.g. "delay {delay}ms loss {loss}%"
    shared_queue: bool = True  # netem on `lo`, as COMN
    size: int = 1 << 20
    backend: str = "auto"
    time_limit: float | Callable[[dict], float] = 300.0
    fixed: dict = field(default_factory=dict)  # parameters every cell shares
    paths: tuple = ()  # multi-homed: one spec template per path (then `link` is unused)
    schedule: tuple | Callable[[dict], list] = ()  # engine events, or f(cell) giving them
    extra: Callable[[TransferResult, str | None], dict] | None = None  # more fields for the row
    pcap: bool = False  # give `extra` the engine's pcap of the run
    trace: bool = False  # give `extra` the engine's trace of the run (result.trace)
    keep_trace: Callable[[int], str | None] | None = None  # seed -> where its run's trace stays (None: not kept)
    ipv6: bool | Callable[[dict], bool] = False  # the run's address family, or f(cell) giving it
    no_progress: float | None = None  # s without progress before a run is stopped (None: the harness's rule)
    tun_corruption: str = "repair"  # netns: "netem" leaves a corrupted packet's checksum wrong (harness.transfer.Link)
    tcp_cc: str | None = None  # kernel TCP's congestion control pinned in the namespaces (None: cubic)

    def __call__(self, params: dict, seed: int) -> dict:
        values = {**self.fixed, **params}
        limit = self.time_limit(values) if callable(self.time_limit) else self.time_limit
        links = [
            Link(_fill(t, values), None, self.shared_queue, self.tun_corruption) for t in (self.paths or (self.link,))
        ]
        where = {"paths": [Path(link) for link in links]} if self.paths else {"link": links[0]}
        schedule = list(self.schedule(values) if callable(self.schedule) else self.schedule)
        ipv6 = self.ipv6(values) if callable(self.ipv6) else self.ipv6
        kept = self.keep_trace(seed) if self.keep_trace else None
        keep = self.pcap or (self.trace and not kept)
        with tempfile.TemporaryDirectory(prefix="rdt-pcap-") if keep else contextlib.nullcontext() as scratch:
            pcap = os.path.join(scratch, "link.pcap") if self.pcap else None
            trace = kept or (os.path.join(scratch, "link.trace") if self.trace else None)
            res = run_transfer(
                self.sender,
                self.receiver,
                **where,
                params=values,
                size=int(values.get("size", self.size)),
                seed=seed,
                backend=self.backend,
                tcp_cc=self.tcp_cc,
                time_limit=limit,
                schedule=schedule,
                pcap=pcap,
                trace=trace,
                ipv6=bool(ipv6),
                **({} if self.no_progress is None else {"no_progress": self.no_progress}),
            )
            row = row_from_result(res)
            if self.extra is not None:
                row.update(self.extra(res, pcap if pcap and os.path.exists(pcap) else None))
        return row


def _fill(template: str, values: dict) -> str:
    try:
        return template.format_map(values)
    except KeyError as e:
        raise UsageError(f"link spec {template!r} uses {{{e.args[0]}}}, which no parameter gives") from None
