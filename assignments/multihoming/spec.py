"""The `multihoming` assignment (seed 000): the student's multi-homed Sender.py /
Receiver.py measured by the multihoming sheet's sweeps (sheet.py):
one path, two paths (each cell repeated until its 95% margin is under 10%), and a path
taken down mid-transfer; and the models its hidden tests check the student's answers against."""

from __future__ import annotations

import sys
from dataclasses import replace

import pandas as pd

from harness.assignments import Assignment, Question
from . import sheet as multihoming

# tiny: the course's tests. The path goes down 20 ms after the first packet, while a
# 100 KB file is still on its way over two paths.
TINY = replace(multihoming.QUICK, size=100_000, runs=2, cap=2, losses=(5, 15), failover_runs=1, down_ms=20)

_TIMES = {"wire_time_s": "time_s", "retransmissions": "retransmissions"}
QUESTIONS = {
    "one_path": Question(
        {"loss": "loss_pct", "path_loss": "path_loss_pct"},
        _TIMES,
        "Experiment 1: one path s–r3–d (Sender/Receiver)",
        multihoming.FILES,
    ),
    "two_paths": Question(
        {"loss": "loss_pct", "path_loss": "path_loss_pct"},
        _TIMES,
        "Experiment 2: two paths s–r1–d, s–r2–d (Sender/Receiver)",
        multihoming.FILES,
    ),
    "failover": Question(
        {"loss": "loss_pct", "path_loss": "path_loss_pct", "down_ms": "down_ms"},
        {"wire_time_s": "time_s"},
        "Fail-over: s–r2–d goes down (Sender/Receiver)",
        multihoming.FILES,
    ),
}
REPORT_1, REPORT_2 = multihoming.REPORT_1, multihoming.REPORT_2  # the report's Tables 1 and 2 (s)


# ---- model answers ------------------------------------------------------------------


def path_loss(p: float) -> float:
    """Loss (%) per direction of a path of two links that lose p% each."""
    return multihoming.path_loss(p)


def capacity_bound_s(size: int, n_paths: int) -> float:
    """Fastest possible transfer: the file's 1024-byte packets (1078 bytes on the wire) at
    10 Mbit/s per path, plus one round trip's propagation (20 ms)."""
    return multihoming.capacity_bound_s({}, size, n_paths)


# ---- derived answers ----------------------------------------------------------------


def speed_ups(one_path_table: pd.DataFrame, two_paths_table: pd.DataFrame) -> dict:
    """{loss %: one-path time / two-path time} from the student's own tables."""
    one = dict(zip(one_path_table["loss_pct"], one_path_table["time_s"]))
    two = dict(zip(two_paths_table["loss_pct"], two_paths_table["time_s"]))
    return {int(p): float(one[p]) / float(two[p]) for p in one if p in two}


ASSIGNMENT = Assignment(
    "multihoming",
    multihoming.build,
    {"quick": multihoming.QUICK, "full": multihoming.FULL, "tiny": TINY},
    QUESTIONS,
    tolerance={"wire_time_s": 0.5, "retransmissions": 10.0},
    models=sys.modules[__name__],
)
