"""The `tcp-like` assignment (seed 003): the student's TCP-like Sender.py / Receiver.py
(cumulative ACKs, a window in bytes, fast retransmit after k duplicate ACKs, an adaptive
RTO) measured by the tcp-like sheet's loss and window sweeps (sheet.py),
and the models its hidden tests check the student's answers against."""

from __future__ import annotations

import sys
from dataclasses import replace

import pandas as pd

from harness.assignments import Assignment, Question
from . import sheet as tcp_like

# The notebook leaves out the sheet's reproduction of the report's own runs (1 s timer,
# a 514 KB file at 20% loss: minutes per run); the report's numbers are in its prompts.
TINY = replace(
    tcp_like.QUICK, size=30_000, loss_size=30_000, runs=2, losses=(0, 20), windows=(1000, 10_000), report_runs=0
)
QUICK = replace(tcp_like.QUICK, losses=(0, 10, 20, 30), report_runs=0)
FULL = replace(tcp_like.FULL, report_runs=0)

QUESTIONS = {
    "loss": Question(
        {"loss": "loss_pct", "fast_retransmit": "k"},
        {"wire_time_s": "time_s", "retransmissions": "retransmissions"},
        "Transfer time against loss (Sender/Receiver)",
        tcp_like.FILES,
    ),
    "window": Question(
        {"window": "window_bytes"},
        {"goodput_kBps": "throughput_kBps", "queue_delay_mean_ms": "queue_delay_ms"},
        "Throughput and queueing delay against the window (Sender/Receiver)",
        tcp_like.FILES,
    ),
}

K = tcp_like.K
LINK = tcp_like.MODEL  # 10 Mbit/s, 10 ms each way, 1000-byte segments (1045 bytes on the wire)


# ---- model answers (the hidden tests compare the student's with these) ----------------


def rtt_ms() -> float:
    """Idle round trip: 2 × 10 ms plus one segment's and one ACK's serialisation."""
    return LINK.rtt * 1000


def window_rtt_kBps(window: float) -> float:
    """throughput = window / RTT (KB/s = KiB/s), up to the link's capacity."""
    return tcp_like.window_rtt_kBps({"window": window})


def md1_wait_ms(window: float) -> float:
    """M/D/1 waiting time w = ρ / (2μ(1 − ρ)), λ = window / 1000 / RTT segments per second."""
    return tcp_like.md1_ms({"window": window})


# ---- derived answers (from the student's own table) ----------------------------------


def speed_up(loss_table: pd.DataFrame, loss: float) -> float:
    """Transfer time without fast retransmit over the time with it, at `loss` percent."""
    rows = loss_table[pd.to_numeric(loss_table["loss_pct"], errors="coerce") == loss]
    times = {int(r["k"]): float(r["time_s"]) for _, r in rows.iterrows()}
    if 0 not in times or K not in times:
        raise AssertionError(f"loss_table has no rows for {loss}% loss with k = 0 and k = {K}")
    return times[0] / times[K]


ASSIGNMENT = Assignment(
    "tcp-like",
    tcp_like.build,
    {"quick": QUICK, "full": FULL, "tiny": TINY},
    QUESTIONS,
    sizes=("size", "loss_size"),
    # Queueing delay is a few ms here and timing-bound: an honest kernel measuring on a
    # loaded machine can report several times what quiet re-runs give.
    tolerance={"wire_time_s": 0.3, "retransmissions": 5.0, "goodput_kBps": 3.0, "queue_delay_mean_ms": 5.0},
    models=sys.modules[__name__],
)
