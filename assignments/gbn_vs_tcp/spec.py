"""The `gbn-vs-tcp` assignment (seed 001): the student's Go-Back-N (the COMN part-3 pair,
Sender3.py / Receiver3.py, with a checksum) downloading objects under loss, corruption,
duplication and delay, against kernel TCP (sheet.py), and the
models its hidden tests check the student's answers against."""

from __future__ import annotations

import sys
from dataclasses import replace

import pandas as pd

from harness.assignments import Assignment, Question
from . import sheet as gbn_vs_tcp

NONE = gbn_vs_tcp.NONE
# tiny: the course's tests; two objects, three rules, two tuning cells, one download each.
TINY = replace(
    gbn_vs_tcp.QUICK,
    size=8_000,
    objects=2,
    runs=1,
    rules=(NONE, "loss 10%", "corrupt 10%"),
    tune_windows=(5, 25),
    tune_timeouts=(300,),
    tune_runs=1,
    tune_size=20_000,
)

_DOWNLOADS = {"total_s": "total_s", "retransmissions": "retransmissions"}
QUESTIONS = {
    "tune": Question(
        {"window": "window", "timeout": "timeout_ms"},
        {"wire_time_s": "time_s"},
        f"GBN's window and timeout at {gbn_vs_tcp.TUNE_LOSS}% loss (Sender3/Receiver3)",
        gbn_vs_tcp.FILES,
    ),
    "gbn": Question(
        {"netem": "netem"}, _DOWNLOADS, "GBN downloads, window 25, timeout 0.7 s (Sender3/Receiver3)", gbn_vs_tcp.FILES
    ),
    "gbn_tuned": Question(
        {"netem": "netem", "window": "window", "timeout": "timeout_ms"},
        _DOWNLOADS,
        "GBN downloads, your best window and timeout (Sender3/Receiver3)",
        gbn_vs_tcp.FILES,
    ),
    "tcp": Question({"netem": "netem"}, _DOWNLOADS, "TCP downloads (the kernel's)"),
}


# ---- model answers ------------------------------------------------------------------


def sends_per_packet(loss_pct: float) -> float:
    """Expected sends of a packet resent on its own until it and its ACK get through,
    each lost with probability p: 1 / (1 − p)²."""
    return 1 / (1 - loss_pct / 100) ** 2


# ---- derived answers (from the student's own tables) ---------------------------------


def best_settings(tune_table: pd.DataFrame) -> set:
    """(window, timeout_ms) of the least mean time, and of any whose time is within the
    best one's 95% margin: answers that pick any of them are right."""
    rows = tune_table[pd.to_numeric(tune_table["time_s"], errors="coerce").notna()]
    if rows.empty:
        return set()
    best = rows["time_s"].idxmin()
    margin = rows.at[best, "time_s_ci95"]
    ceiling = rows.at[best, "time_s"] + (margin if pd.notna(margin) else 0.0)
    return {(int(r["window"]), int(r["timeout_ms"])) for _, r in rows.iterrows() if r["time_s"] <= ceiling}


def gbn_over_tcp(gbn_table: pd.DataFrame, tcp_table: pd.DataFrame) -> dict:
    """{netem rule: GBN's mean total / TCP's} for the rules of both tables."""
    tcp = dict(zip(tcp_table["netem"], tcp_table["total_s"]))
    return {
        rule: float(t) / float(tcp[rule]) for rule, t in zip(gbn_table["netem"], gbn_table["total_s"]) if rule in tcp
    }


ASSIGNMENT = Assignment(
    "gbn-vs-tcp",
    gbn_vs_tcp.build,
    {"quick": gbn_vs_tcp.QUICK, "full": gbn_vs_tcp.FULL, "tiny": TINY},
    QUESTIONS,
    tolerance={"wire_time_s": 0.5, "total_s": 1.0, "retransmissions": 10.0},
    models=sys.modules[__name__],
)
