"""A sweep's `run_one` for transfers: one call = one `harness.run_transfer`.

The link spec and the program commands are templates filled from the cell's
parameters, so a sweep over `delay` and `window` needs nothing but the grid:
    TransferRun(sender=Program("python3 {impl}/Sender3.py ... {timeout} {window}", "comn"),
                receiver=Program("python3 {impl}/Receiver3.py {listen_port} {output}"),
                link="delay {delay}ms loss {loss}% rate 10mbit", fixed={"impl": ..., "loss": 5})
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from harness.procs import UsageError
from harness.transfer import Link, Program, TransferResult, run_transfer


def row_from_result(res: TransferResult) -> dict:
    """The fields of a TransferResult that a sweep table keeps (flat, JSON-ready)."""
    row = {"ok": res.ok, "error": res.error, "backend": res.backend,
           "goodput_kBps": res.goodput_kBps, "wire_time_s": res.wire_time_s,
           "process_time_s": res.process_time_s, "retransmissions": res.retransmissions,
           "lag_p99_us": (res.lag_us or {}).get("p99")}
    for name, value in (res.printed or {}).items():
        row[f"printed_{name}"] = value
    return row


@dataclass(frozen=True)
class TransferRun:
    sender: Program
    receiver: Program
    link: str                        # netem spec template, e.g. "delay {delay}ms loss {loss}%"
    shared_queue: bool = True        # netem on `lo`, as COMN
    size: int = 1 << 20
    backend: str = "auto"
    time_limit: float | Callable[[dict], float] = 300.0
    fixed: dict = field(default_factory=dict)   # parameters every cell shares

    def __call__(self, params: dict, seed: int) -> dict:
        values = {**self.fixed, **params}
        try:
            spec = self.link.format_map(values)
        except KeyError as e:
            raise UsageError(f"link spec {self.link!r} uses {{{e.args[0]}}}, which no parameter gives") from None
        limit = self.time_limit(values) if callable(self.time_limit) else self.time_limit
        res = run_transfer(self.sender, self.receiver, Link(spec, None, self.shared_queue),
                           params=values, size=self.size, seed=seed, backend=self.backend,
                           time_limit=limit)
        return row_from_result(res)
