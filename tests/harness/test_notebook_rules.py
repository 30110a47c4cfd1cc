"""harness/notebook_rules.py on synthetic tables: a reported table's shape, the
re-measurement rule and its verdicts, and the answers derived from a student's own
table. No Lab, no runs."""

import math

import pandas as pd
import pytest

from assignments.comn import spec as comn
from harness import notebook_rules as R
from harness.assignments import Question

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

Q1 = Question(
    params={"timeout": "timeout_ms"},
    metrics={"goodput_kBps": "throughput_kBps", "retransmissions": "retransmissions"},
    title="Question 1",
    programs=("Sender2.py", "Receiver2.py"),
)
TCP = Question(params={"netem": "rule"}, metrics={"goodput_kBps": "throughput_kBps"}, title="kernel TCP")
CELLS = [{"timeout": 10}, {"timeout": 20}, {"timeout": 40}]


def q1(rows=((10, 30.0, 40.0), (20, 60.0, 5.0), (40, 50.0, 4.0)), **override) -> pd.DataFrame:
    table = pd.DataFrame(
        [
            {
                "timeout_ms": t,
                "throughput_kBps": tp,
                "throughput_kBps_ci95": 2.0,
                "retransmissions": rx,
                "retransmissions_ci95": 1.0,
                "runs": 2,
                "failed": 0,
            }
            for t, tp, rx in rows
        ]
    )
    for col, values in override.items():
        table[col] = values
    return table


def test_the_columns_are_the_params_then_each_metric_with_its_interval():
    assert R.columns_of(Q1) == [
        "timeout_ms",
        "throughput_kBps",
        "throughput_kBps_ci95",
        "retransmissions",
        "retransmissions_ci95",
        "runs",
        "failed",
    ]


def test_a_good_table_has_no_problem():
    assert R.check_table("q1", q1(), Q1, CELLS) == []
    assert R.check_table("q1", q1(), Q1) == []  # the shape alone


def test_the_tables_type_and_columns():
    assert R.check_table("q1", None, Q1) == [
        "q1_table is not set: run its answer cell (does it still raise NotImplementedError?)"
    ]
    assert R.check_table("q1", [[1, 2]], Q1) == ["q1_table must be a pandas DataFrame, got list"]
    problems = R.check_table("q1", q1().drop(columns=["runs"]), Q1)
    assert problems == [
        "q1_table lacks the columns runs (expected timeout_ms, throughput_kBps, throughput_kBps_ci95, "
        "retransmissions, retransmissions_ci95, runs, failed)"
    ]
    [problem] = R.check_table("q1", q1(throughput_kBps=["fast", "slow", "ok"]), Q1)
    assert problem.startswith("q1_table['throughput_kBps'] must hold numbers, got ")  # object or str by pandas


def test_each_cell_needs_a_row_whose_runs_all_completed():
    problems = R.check_table("q1", q1().iloc[1:], Q1, CELLS)
    assert problems == ["q1_table has no row for Q1 timeout_ms=10"]
    problems = R.check_table("q1", q1(failed=[0, 1, 0], runs=[2, 1, 0]), Q1, CELLS)
    assert problems == [
        "q1_table: Q1 timeout_ms=20 had 1 failed and 1 good runs: your programs must complete every run",
        "q1_table: Q1 timeout_ms=40 had 0 failed and 0 good runs: your programs must complete every run",
    ]


def test_units_and_gaps():
    problems = R.check_table("q1", q1(throughput_kBps=[30000.0, 60.0, math.nan], retransmissions=[-1.0, 5, 4]), Q1)
    assert problems == [
        "q1_table['throughput_kBps'] has cells with no number",
        "q1_table['throughput_kBps'] must be in KB/s (0 < x <= 1250 on a 10 Mbit/s link)",
        "q1_table['retransmissions'] cannot be negative",
    ]


def test_kernel_tcp_rows_are_matched_by_text_and_missing_runs_are_excused_only_where_it_cannot_run():
    cells = [{"netem": "loss 1%"}, {"netem": "loss 5%"}]
    table = pd.DataFrame(
        [
            {"rule": c["netem"], "throughput_kBps": math.nan, "throughput_kBps_ci95": math.nan, "runs": 0, "failed": 0}
            for c in cells
        ]
    )
    assert R.check_table("q7", table, TCP, cells, not_here="kernel TCP needs the netns backend") == []
    assert R.check_table("q7", table, TCP, cells) == [
        "q7_table: Q7 rule=loss 1% has no completed run (run its cell again)",
        "q7_table: Q7 rule=loss 5% has no completed run (run its cell again)",
        "q7_table['throughput_kBps'] has cells with no number",
    ]
    # a text column is allowed only where the cells hold text
    [problem] = R.check_table("q7", table, TCP)
    assert problem.startswith("q7_table['rule'] must hold numbers, got ")


def test_the_accepted_range_and_the_rule_as_students_read_it():
    assert R.accepted_range([60.0, 64.0]) == (40.0, 96.0)
    assert R.accepted_range([60.0, 64.0], tol=3) == (37.0, 99.0)
    text = R.rule({"retransmissions": 2})
    assert (
        "(each seed once, and again while a reported mean falls outside the runs so far: twice, then 4 times in all)"
    ) in text
    assert "divided by 1.5 and the highest times 1.5, give or take 2 retransmissions." in text
    assert "(each seed twice, and again while a reported mean falls outside the runs so far: 4 times in all)" in R.rule(
        {}, rounds=(2, 2)
    )
    assert R.rule({}, rounds=(1,)).endswith(
        "seeds, in the grader's jail outside your notebook; a reported mean passes "
        "when it lies between the lowest of those runs divided by 1.5 and the "
        "highest times 1.5, give or take nothing."
    )


def fresh(goodputs, timeout=20, ok=True, error=None) -> pd.DataFrame:
    return pd.DataFrame(
        [{"timeout": timeout, "ok": ok, "goodput_kBps": g, "retransmissions": 4, "error": error} for g in goodputs]
    )


def test_judge_accepts_what_the_fresh_runs_support_and_names_what_they_cannot():
    runs = pd.concat([fresh([60.0, 64.0]), fresh([500.0, 510.0], timeout=10)])  # another cell's runs
    problems, figures = R.judge("q1", Q1, {"retransmissions": 3}, q1(), [{"timeout": 20}], runs)
    assert problems == []
    assert figures == [
        "Q1 timeout_ms=20: throughput_kBps re-measured 60.0, 64.0 (accepted 40.0–96.0); you report 60.0",
        "Q1 timeout_ms=20: retransmissions re-measured 4.0, 4.0 (accepted -0.3–9.0); you report 5.0",
    ]
    moved = q1(throughput_kBps=[30.0, 120.0, 50.0])
    problems, _ = R.judge("q1", Q1, {}, moved, [{"timeout": 20}], runs)
    assert problems == [
        "Q1 timeout_ms=20: you report throughput_kBps 120.0, re-measured 60.0–64.0 over 2 runs (accepted 40.0–96.0)"
    ]


def test_each_miss_says_how_it_misses():
    runs = fresh([60.0, 64.0])
    table = q1(rows=((10, 30.0, 40.0), (20, 120.0, 0.0), (40, 50.0, 4.0)))  # 120 above, 0 inside (slack 3)
    [miss], _ = R.misses("q1", Q1, {"retransmissions": 3}, table, [{"timeout": 20}], runs)
    assert (miss.how, miss.metric, miss.cell) == (R.ABOVE, "goodput_kBps", {"timeout": 20})
    [miss], _ = R.misses("q1", Q1, {}, q1(rows=((20, 20.0, 4.0),)), [{"timeout": 20}], runs)
    assert (miss.how, miss.metric) == (R.BELOW, "goodput_kBps")
    [miss], _ = R.misses("q1", Q1, {}, q1(rows=((20, 60.0, 40.0),)), [{"timeout": 20}], runs)
    assert (miss.how, miss.metric) == (R.ABOVE, "retransmissions")
    failed = fresh([math.nan], ok=False, error="receiver wrote nothing to its output file")
    assert {m.how for m in R.misses("q1", Q1, {}, q1(), [{"timeout": 20}], failed)[0]} == {R.FAILED}
    assert {m.how for m in R.misses("q1", Q1, {}, q1().iloc[:1], [{"timeout": 20}], runs)[0]} == {R.MISSING}


def test_judge_when_the_programs_fail_or_nothing_was_reported():
    failed = fresh([math.nan, math.nan], ok=False, error="receiver wrote nothing to its output file")
    problems, figures = R.judge("q1", Q1, {}, q1(), [{"timeout": 20}], failed)
    assert problems[0] == (
        "Q1 timeout_ms=20: you report throughput_kBps 60.0 but your programs fail there when "
        "re-run (receiver wrote nothing to its output file)"
    )
    assert figures[0].endswith("not re-measured: your programs fail there (receiver wrote nothing to its output file)")
    problems, _ = R.judge("q1", Q1, {}, q1().iloc[:1], [{"timeout": 20}], fresh([60.0]))
    assert problems == [
        "Q1 timeout_ms=20: no throughput_kBps reported",
        "Q1 timeout_ms=20: no retransmissions reported",
    ]


def test_runs_that_gave_no_figure_are_named_beside_the_ones_that_did():
    runs = pd.concat([fresh([60.0, 64.0]), fresh([math.nan], ok=False, error="sender ran past its time limit (30 s)")])
    problems, figures = R.judge("q1", Q1, {}, q1(), [{"timeout": 20}], runs)
    assert problems == []  # judged on the runs that succeeded
    assert figures[0] == (
        "Q1 timeout_ms=20: throughput_kBps re-measured 60.0, 64.0 (and 1 run failed: sender ran "
        "past its time limit (30 s)) (accepted 40.0–96.0); you report 60.0"
    )
    blank = fresh([60.0, math.nan])
    assert (
        "re-measured 60.0 (and 1 gave no figure) (accepted"
        in R.judge("q1", Q1, {}, q1(), [{"timeout": 20}], blank)[1][0]
    )


def test_a_shown_metric_is_re_measured_and_shown_but_never_judged():
    """Stop-and-wait's delay variation on a link without jitter is the machine's
    scheduling (from two round trips, far larger beside busy loops than on a quiet machine):
    an honest kernel's figure cannot be told from a moved one, so it decides nothing."""
    shown = Question(Q1.params, Q1.metrics, Q1.title, Q1.programs, shown=("retransmissions",))
    runs = fresh([60.0, 64.0])  # 4 retransmissions each
    table = q1(retransmissions=[40.0, 400.0, 4.0])  # 400 is far outside anything re-measured
    problems, figures = R.judge("q1", shown, {"retransmissions": 3}, table, [{"timeout": 20}], runs)
    assert problems == []
    assert figures[1] == "Q1 timeout_ms=20: retransmissions re-measured 4.0, 4.0 (not judged); you report 400.0"
    assert R.judge("q1", Q1, {"retransmissions": 3}, table, [{"timeout": 20}], runs)[0] == [  # judged otherwise
        "Q1 timeout_ms=20: you report retransmissions 400.0, re-measured 4.0–4.0 over 2 runs (accepted -0.3–9.0)"
    ]
    # the other metrics are still judged, and a run with no figure of it is no problem
    problems, figures = R.judge(
        "q1",
        shown,
        {},
        q1(throughput_kBps=[30.0, 120.0, 50.0]),
        [{"timeout": 20}],
        fresh([60.0, 64.0]).drop(columns=["retransmissions"]),
    )
    assert problems == [
        "Q1 timeout_ms=20: you report throughput_kBps 120.0, re-measured 60.0–64.0 over 2 runs (accepted 40.0–96.0)"
    ]
    assert figures[1] == "Q1 timeout_ms=20: retransmissions re-measured nothing (not judged); you report 5.0"
    assert R.rule({"retransmissions": 2}, shown=("delay_var_ms",)).endswith(
        "give or take 2 retransmissions. delay_var_ms is re-measured and shown, not judged: the machine's "
        "scheduling decides it more than your programs do."
    )


def test_a_row_is_found_by_number_or_by_text():
    table = pd.DataFrame({"window": ["4", "8"], "delay_ms": [25.0, 25.0], "x": [1, 2]})
    assert R.row_of(table, {"window": "8"})["x"] == 2  # text matches text
    assert R.row_of(table, {"delay_ms": 25, "window": "4"})["x"] == 1
    assert R.row_of(table, {"window": "16"}) is None
    assert (
        R.cell_text("q3", Question({"delay": "delay_ms", "netem": "rule"}, {}, "Q3"), {"delay_ms": 25.0, "rule": ""})
        == "Q3 delay_ms=25 rule=none"
    )


def test_the_optimal_timeout_is_the_fastest_of_those_with_few_retransmissions():
    # comn's rule (assignments/comn/spec.py) on acceptable_best: 10 ms is fastest but
    # retransmits 8x the fewest; of the rest 20 ms is best and 40 ms lies within its 95%
    # interval (60 - 2 <= 59)
    assert comn.optimal_timeouts(q1(((10, 90.0, 40.0), (20, 60.0, 5.0), (40, 59.0, 4.0), (80, 30.0, 4.0)))) == {20, 40}
    assert comn.optimal_timeouts(q1(((10, 90.0, 4.0), (20, 60.0, 4.0)))) == {10}


def test_the_peak_window_per_delay_takes_any_within_the_best_ones_interval():
    table = pd.DataFrame(
        [
            {"delay_ms": d, "window": w, "throughput_kBps": tp, "throughput_kBps_ci95": ci}
            for d, w, tp, ci in (
                (5, 1, 100.0, 1.0),
                (5, 8, 300.0, 5.0),
                (5, 16, 296.0, 1.0),
                (25, 8, 200.0, math.nan),
                (25, 16, 199.0, 1.0),
                (100, 8, math.nan, math.nan),
            )
        ]
    )
    assert comn.peak_windows(table) == {5: {8, 16}, 25: {8}}


@pytest.mark.parametrize(
    "value,ok", [(1, True), (2.5, True), ("3", True), (math.nan, False), (None, False), ("x", False), (math.inf, False)]
)
def test_finite(value, ok):
    assert R.finite(value) is ok
