"""The `comn` assignment (seed 004): the COMN results sheet's questions 1, 3, 5 and 7,
measured on the student's Sender2-4.py / Receiver2-4.py and iperf3 (sheet.py)."""

from __future__ import annotations

import sys

import pandas as pd

from harness.assignments import Assignment, Question
from harness.models import Link, mathis, stop_and_wait_utilisation
from harness.notebook import fail
from harness.notebook_rules import acceptable_best, check_table
from . import sheet as comn

# `tiny` is for the course's own tests (a class graded in a few minutes): every question
# and delay of the sheet, on fewer cells and a 20 KB file.
TINY = comn.Plan(20 << 10, 2, (5, 20, 100), (5, 25, 100), (1, 4, 64), (1, 16), (4, 16))


def premature(cell: dict) -> bool:
    """A timeout within the idle round trip: every packet is resent once or more, and how
    often is the scheduler's call (timer against ACK), not the programs'."""
    return cell["timeout"] / 1000 <= Link(cell["delay"] / 1000).rtt


QUESTIONS = {
    "q1": Question(
        {"timeout": "timeout_ms"},
        {"retransmissions": "retransmissions", "goodput_kBps": "throughput_kBps"},
        "Q1 stop-and-wait (Sender2/Receiver2)",
        comn.PROGRAMS["q1"],
        timing_bound=premature,
    ),
    "q3": Question(
        {"delay": "delay_ms", "timeout": "timeout_ms", "window": "window"},
        {"goodput_kBps": "throughput_kBps"},
        "Q3 Go-Back-N (Sender3/Receiver3)",
        comn.PROGRAMS["q3"],
    ),
    "q5": Question(
        {"window": "window"},
        {"goodput_kBps": "throughput_kBps"},
        "Q5 Selective Repeat (Sender4/Receiver4)",
        comn.PROGRAMS["q5"],
    ),
    "q7": Question({"window_kB": "window_kB"}, {"goodput_kBps": "throughput_kBps"}, "Q7 TCP (iperf3)"),
}


# The model answers, from harness.models (the notebook's hidden tests compare with them: lab.models.<name>).
def model_utilisation_q1() -> float:
    return stop_and_wait_utilisation(Link(0.005))


def model_bdp_packets(delay_ms: float) -> float:
    link = Link(delay_ms / 1000)
    return link.capacity_pps * link.rtt


def model_mathis_q8() -> float:
    """Mathis for Q8's link as the question states it: MSS 1 KB, RTT 50 ms, L 5%, in KB/s."""
    return mathis(1024, 0.050, 0.05) / 1024


# ---- derived answers (from the student's own tables) ---------------------------------


def optimal_timeouts(q1_table: pd.DataFrame) -> set:
    """The Q2 rule: among timeouts whose retransmissions are at most 1.25× the fewest,
    the one with the highest throughput (or any within that one's 95% CI)."""
    fewest = pd.to_numeric(q1_table["retransmissions"], errors="coerce").min()
    eligible = lambda g: g["retransmissions"] <= 1.25 * fewest + 1e-9  # noqa: E731
    best = acceptable_best(q1_table, [], "throughput_kBps", eligible)
    return {q1_table.at[i, "timeout_ms"] for rows in best.values() for i in rows}


def peak_windows(q3_table: pd.DataFrame) -> dict:
    """The Q4 answer: per delay, the windows within the 95% CI of the highest throughput."""
    best = acceptable_best(q3_table, ["delay_ms"], "throughput_kBps")
    return {key[0]: {q3_table.at[i, "window"] for i in rows} for key, rows in best.items()}


# ---- their hidden tests (lab.models.assert_*): the table's shape, then the rule ---------


def assert_optimal_timeout(q1_table, answer) -> None:
    fail(check_table("q1", q1_table, QUESTIONS["q1"]))
    allowed = optimal_timeouts(q1_table)
    if answer not in allowed:
        fail(
            [
                f"q1_optimal_timeout = {answer!r}, but your Q1 table gives {sorted(allowed)} by the rule "
                "(highest throughput among timeouts with at most 1.25× the fewest retransmissions)"
            ]
        )


def assert_peak_windows(q3_table, answer) -> None:
    fail(check_table("q3", q3_table, QUESTIONS["q3"]))
    if not isinstance(answer, dict):
        fail([f"q3_peak_window must be a dict {{delay_ms: window}}, got {type(answer).__name__}"])
    allowed = peak_windows(q3_table)
    wrong = [
        f"delay {d} ms: {answer.get(d)!r} (your table peaks at {sorted(ws)})"
        for d, ws in allowed.items()
        if answer.get(d) not in ws
    ]
    fail(wrong)


ASSIGNMENT = Assignment(
    "comn",
    comn.build,
    {"quick": comn.QUICK, "full": comn.FULL, "tiny": TINY},
    QUESTIONS,
    tolerance={"goodput_kBps": 3.0, "retransmissions": 5.0},
    models=sys.modules[__name__],
)
