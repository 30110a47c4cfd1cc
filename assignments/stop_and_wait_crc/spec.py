"""The `stop-and-wait-crc` assignment (seed 002): the student's stop-and-wait with a
CRC32 and exponential back-off (Sender.py / Receiver.py) with payloads of 1-64 KB over
IPv4 and IPv6, kernel TCP as the baseline, and a lossy link where fragments multiply
the loss (sheet.py); and the models its hidden tests check
the student's answers against."""

from __future__ import annotations

import sys
from dataclasses import replace

import pandas as pd

from harness.assignments import Assignment, Question
from . import sheet

# tiny: the course's tests; the smallest and the largest payload, one run per cell.
TINY = replace(sheet.QUICK, size=128 << 10, runs=1, sizes_kb=(1, 64), loss=1, loss_runs=1, tcp_runs=1)

QUESTIONS = {
    "sw": Question(
        {"family": "family", "kb": "kb"},
        {
            "goodput_mbps": "throughput_mbps",
            "rtt_ms": "rtt_ms",
            "delay_var_ms": "delay_var_ms",
            "retransmissions": "retransmissions",
        },
        "Stop-and-wait over IPv4 and IPv6 (Sender/Receiver)",
        sheet.FILES,
        # the link adds no jitter: the variation is the machine's scheduling, from
        # 2-3 round trips at 64 KB, far larger on a busy machine than a quiet one
        shown=("delay_var_ms",),
    ),
    "tcp": Question({"family": "family"}, {"goodput_mbps": "throughput_mbps"}, "Kernel TCP, the baseline"),
    "loss": Question(
        {"family": "family", "kb": "kb", "loss": "loss_pct"},
        {"goodput_mbps": "throughput_mbps", "resends_per_packet": "resends_per_packet"},
        "Stop-and-wait on a lossy link (Sender/Receiver)",
        sheet.FILES,
    ),
}


# ---- model answers ------------------------------------------------------------------


def fragments(family: str, kb: int) -> int:
    """IP packets that carry one message of `kb` (extended format: payload + 12 bytes), MTU 1500."""
    return sheet.fragments({"family": family, "kb": kb})


def resends_model(family: str, kb: int, loss_pct: float) -> float:
    """Resends per packet when every IP packet is lost with p: a try succeeds when all the
    fragments and the ACK get through, q = (1 − p)^(fragments + 1); resends = 1/q − 1."""
    return sheet.resends_model({"family": family, "kb": kb, "loss": loss_pct})


# ---- derived answers (from the student's own table) ----------------------------------


def v4_over_v6(sw_table: pd.DataFrame) -> dict:
    """{kb: IPv4 throughput / IPv6 throughput} from the student's stop-and-wait table."""
    by = {(r["family"], int(r["kb"])): float(r["throughput_mbps"]) for _, r in sw_table.iterrows()}
    return {kb: by[("IPv4", kb)] / by[("IPv6", kb)] for (fam, kb) in by if fam == "IPv4" and ("IPv6", kb) in by}


ASSIGNMENT = Assignment(
    "stop-and-wait-crc",
    sheet.build,
    {"quick": sheet.QUICK, "full": sheet.FULL, "tiny": TINY},
    QUESTIONS,
    tolerance={"goodput_mbps": 0.3, "rtt_ms": 1.0, "retransmissions": 5.0, "resends_per_packet": 0.2},
    models=sys.modules[__name__],
)
