"""The pieces of the grader's re-measurement outside the kernel (grader/notebook/remeasure.py), on
data: the secret sample, the rule on fresh runs only, the table read back from a test
cell's output, the verdict written as that cell's output. The whole path, hostile
notebooks and all, is in test_jailed_autograde.py."""

from __future__ import annotations

import math

import nbformat
import pandas as pd
import pytest

from grader.notebook import remeasure as R
from harness import notebook as nb, notebook_rules

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return nb.Lab("tiny", "comn", folder=str(tmp_path_factory.mktemp("empty")), backend="local", progress=False)


def test_the_grader_draws_its_sample_from_a_secret_seed(lab):
    light = [c for c in lab.sweeps["q3"].cells if lab.sweeps["q3"].load(c) < nb.HEAVY]
    drawn = [lab.sample("q3", 3, seed=s) for s in range(40)]
    for cells in drawn:
        assert len(cells) == 3 and all(c in light for c in cells)
        assert cells == [c for c in light if c in cells]  # in sweep order
    assert lab.sample("q3", 3, seed=7) == drawn[7]  # the same seed, the same cells
    assert len({tuple(map(str, cells)) for cells in drawn}) > 5  # not one fixed, public sample
    assert all(any(c in cells for cells in drawn) for c in light)  # any light cell may be drawn
    key = b"x" * 32
    assert R.draw_seed(key, "comn", "ann", "q1", {"data": [1]}) == R.draw_seed(key, "comn", "ann", "q1", {"data": [1]})
    assert R.draw_seed(key, "comn", "ann", "q1", {"data": [1]}) != R.draw_seed(key, "comn", "bob", "q1", {"data": [1]})
    assert R.draw_seed(key, "comn", "ann", "q1", {"data": [1]}) != R.draw_seed(key, "comn", "ann", "q1", {"data": [2]})
    assert R.draw_seed(key, "comn", "ann", "q1", {}) != R.draw_seed(b"y" * 32, "comn", "ann", "q1", {})


def _q1(throughput: float, retransmissions: float = 4.0) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "timeout_ms": 20,
                "retransmissions": retransmissions,
                "retransmissions_ci95": 1.0,
                "throughput_kBps": throughput,
                "throughput_kBps_ci95": 1.0,
                "runs": 2,
                "failed": 0,
            }
        ]
    )


def test_only_the_fresh_runs_set_the_accepted_range(lab):
    cell = next(c for c in lab.cells("q1") if c["timeout"] == 20)
    fresh = pd.DataFrame(
        [{**cell, "ok": True, "goodput_kBps": g, "retransmissions": 4, "error": None} for g in (60.0, 64.0)]
    )
    # what this notebook's own runs say (a cache an answer cell rewrote) is not consulted
    lab.frames["q1"] = pd.DataFrame([{**cell, "ok": True, "goodput_kBps": 500.0, "retransmissions": 0}])
    problems, figures = lab.judge("q1", _q1(62.0), [cell], fresh)
    assert problems == []
    assert "Q1 timeout_ms=20: throughput_kBps re-measured 60.0, 64.0 (accepted 37.0–99.0); you report 62.0" in figures
    problems, _ = lab.judge("q1", _q1(500.0), [cell], fresh)
    assert problems == [
        "Q1 timeout_ms=20: you report throughput_kBps 500.0, re-measured 60.0–64.0 over 2 runs (accepted 37.0–99.0)"
    ]
    failed = fresh.assign(ok=False, goodput_kBps=math.nan, error="the receiver's output differs")
    problems, figures = lab.judge("q1", _q1(62.0), [cell], failed)
    assert "fail there when re-run (the receiver's output differs)" in problems[0]


def _test_cell(outputs: list, source: str = 'nb.assert_supported(lab, "q1", nb.given("q1_table", globals()), k=3)'):
    cell = nbformat.v4.new_code_cell(
        source, metadata={"nbgrader": {"grade_id": "test_q1_remeasured", "grade": True, "points": 3}}
    )
    cell.outputs = outputs
    return cell


def _handed(table: pd.DataFrame, q: str = "q1"):
    import json

    data = json.loads(table.to_json(orient="split", index=False))
    return nbformat.v4.new_output("display_data", data={nb.HAND_IN: {"question": q, **data}, "text/plain": "x"})


def test_the_table_is_read_back_from_the_test_cells_output(lab):
    table = _q1(62.0, math.nan)
    notebook = nbformat.v4.new_notebook(cells=[_test_cell([_handed(table)])])
    [(cell, q, k)] = R.remeasured_cells(notebook)
    assert (q, k) == ("q1", 3)
    payload, why = R.handed_in(cell, "q1")
    back = nb.handed_in(payload)
    assert why is None and list(back.columns) == list(table.columns)
    assert notebook_rules.check_table("q1", back, lab.spec.questions["q1"]) == [
        "q1_table['retransmissions'] has cells with no number"
    ]
    assert pd.api.types.is_numeric_dtype(back["retransmissions"]) and back.at[0, "throughput_kBps"] == 62.0

    _, why = R.handed_in(_test_cell([]), "q1")
    assert why.startswith("no q1_table was handed in")
    _, why = R.handed_in(_test_cell([_handed(table), _handed(table)]), "q1")
    assert "handed in 2 times" in why
    _, why = R.handed_in(_test_cell([_handed(table, "q3")]), "q1")
    assert why.startswith("no q1_table")
    with pytest.raises(ValueError):
        nb.handed_in({"question": "q1", "columns": "timeout_ms"})


def test_the_verdict_replaces_what_the_kernel_showed():
    kernel_said = nbformat.v4.new_output("stream", name="stdout", text="all fine, trust me\n")
    cell = _test_cell([_handed(_q1(62.0)), kernel_said])
    verdict = R.Verdict(
        "results_sheet",
        "test_q1_remeasured",
        "q1",
        False,
        "you report throughput_kBps 500.0",
        ["Q1 timeout_ms=20: throughput_kBps re-measured 60.0, 64.0"],
        "Rule: ...",
    )
    R._show(cell, verdict)
    R._show(cell, verdict)  # a second grading replaces the first verdict
    kinds = [o.output_type for o in cell.outputs]
    assert kinds == ["display_data", "display_data", "error"], kinds
    assert nb.HAND_IN in cell.outputs[0].data
    assert "re-measured 60.0, 64.0" in cell.outputs[1].data["text/plain"]
    assert cell.outputs[2].evalue == "you report throughput_kBps 500.0"
    nbformat.validate(nbformat.v4.new_notebook(cells=[cell]))


def _pending(lab, reported: float, retransmissions: float = 4.0, **kernel) -> R._Pending:
    cell = next(c for c in lab.cells("q1") if c["timeout"] == 20)
    return R._Pending(
        R.Verdict("results_sheet", "test_q1_remeasured", "q1", False, ""),
        _q1(reported, retransmissions),
        [cell],
        kernel,
    )


def _fresh(lab, lag_us: float, goodput=(60.0, 64.0)) -> pd.DataFrame:
    """Runs of the cell, one per goodput, of its two seeds in turn."""
    cell = next(c for c in lab.cells("q1") if c["timeout"] == 20)
    return pd.DataFrame(
        [
            {
                **cell,
                "ok": True,
                "seed": 100 + k % 2,
                "goodput_kBps": g,
                "retransmissions": 4,
                "error": None,
                "lag_p99_us": lag_us,
            }
            for k, g in enumerate(goodput)
        ]
    )


def test_a_failure_on_disturbed_runs_is_not_graded(lab, monkeypatch):
    """A cell that fails on runs the engine saw disturbed, or while the machine was crowded,
    is said as not graded (autograde then grades the student again alone); one that passes,
    or fails on quiet runs, is decided as before. (_rerun is scripted: a disturbance cannot
    be ordered on cue.)"""
    lags = iter([])
    monkeypatch.setattr(
        R,
        "_rerun",
        lambda lab_, sandbox, pending, reruns: {
            i: _fresh(lab, next(lags), goodput=(60.0, 64.0) * reruns) for i in pending
        },
    )

    lags = iter([300.0, 300.0, 300.0])
    [v] = R._decide_all([_pending(lab, 500.0)], lab, None)
    assert not v.passed and v.disturbed == "" and v.reason.startswith("Q1 timeout_ms=20: you report"), v.reason

    lags = iter([4200.0, 4200.0, 4200.0])  # every round disturbed: no seed ran on a quiet machine
    [v] = R._decide_all([_pending(lab, 500.0)], lab, None)
    assert not v.passed and v.disturbed == "in 8 of the grader's 8 runs the engine sent packets up to 4.2 ms late"
    assert (
        v.reason.startswith("not graded: the machine may have made this miss (in 8 of")
        and "; on those runs: Q1 timeout_ms=20: you report throughput_kBps 500.0" in v.reason
    ), v.reason
    assert v.ours_only  # the kernel's table stands: re-measuring again is enough

    # disturbed in the first round only: each seed has quiet runs too, whose range the
    # report misses, so running the disturbed ones again could not bring it in
    lags = iter([4200.0, 300.0, 300.0])
    [v] = R._decide_all([_pending(lab, 500.0)], lab, None)
    assert not v.passed and v.disturbed == "" and v.reason.startswith("Q1 timeout_ms=20: you report"), v.reason

    lags = iter([300.0, 300.0, 300.0])
    [v] = R._decide_all([_pending(lab, 500.0)], lab, None, crowding=lambda: "tasks waited for a CPU 96% of the time")
    assert v.disturbed == "tasks waited for a CPU 96% of the time" and v.reason.startswith("not graded: ")

    asked = []
    lags = iter([4200.0])
    [v] = R._decide_all([_pending(lab, 62.0)], lab, None, crowding=lambda: asked.append(1) or "crowded")
    assert v.passed and v.disturbed == "" and v.reason == "" and asked == []  # a pass stands


def test_the_grader_runs_more_only_while_a_figure_falls_outside(lab, monkeypatch):
    """Each seed once; while a reported figure falls outside the runs so far, once more,
    then twice (four runs a seed in all). A table passes exactly when it lies inside the
    range of all the runs made (more runs only widen it), and an honest one mostly on the
    first round: one run a seed of the four the grader may make."""
    asked, rounds = [], iter([])

    def rerun(lab_, sandbox, pending, reruns):
        asked.append(reruns)
        return {i: _fresh(lab, 300.0, goodput=next(rounds) * reruns) for i in pending}

    monkeypatch.setattr(R, "_rerun", rerun)

    rounds = iter([(60.0, 64.0)])
    [v] = R._decide_all([_pending(lab, 62.0)], lab, None)
    assert v.passed and asked == [1]

    asked, rounds = [], iter([(60.0, 64.0), (70.0, 74.0)])  # 100: outside 37-99, inside 37-114 (slack 3)
    [v] = R._decide_all([_pending(lab, 100.0)], lab, None)
    assert v.passed and asked == [1, 1] and any("re-measured 60.0, 64.0, 70.0, 74.0" in f for f in v.figures), v.figures

    asked, rounds = [], iter([(60.0, 64.0)] * 3)
    [v] = R._decide_all([_pending(lab, 500.0)], lab, None)
    assert not v.passed and asked == [1, 1, 2] and "over 8 runs" in v.reason, v.reason


def test_disturbed_runs_reads_the_engine_lag_of_each_run(lab):
    assert R.disturbed_runs(_fresh(lab, 999.0)) == ""
    assert (
        R.disturbed_runs(_fresh(lab, 1500.0, goodput=(1.0,)))
        == "in 1 of the grader's 1 runs the engine sent packets up to 1.5 ms late"
    )
    assert R.disturbed_runs(_fresh(lab, 999.0).drop(columns="lag_p99_us")) == ""
    assert R.disturbed_runs(_fresh(lab, math.nan)) == ""  # a run with no figures (it failed)


def test_a_failure_the_kernel_says_the_machine_disturbed_is_graded_again_never_passed(lab, monkeypatch):
    """The kernel's word on its own runs (the engine's lag, the host's steal: handed in
    with its table) can only have a failed cell graded again: the grader's quiet runs
    cannot tell an honest figure the machine disturbed in the kernel from a wrong one
    (BENCHMARKS.md, "Notebooks": stop-and-wait-crc's delay variation)."""
    monkeypatch.setattr(
        R,
        "_rerun",
        lambda lab_, sandbox, pending, reruns: {i: _fresh(lab, 300.0, goodput=(60.0, 64.0) * reruns) for i in pending},
    )
    # 20 KB/s against 37-99 accepted: what a kernel whose runs were late measures
    [v] = R._decide_all([_pending(lab, 20.0, lag_p99_us=3100.0, steal=0.0)], lab, None)
    assert (
        not v.passed
        and v.disturbed == "in your kernel's own runs the engine sent packets up to 3.1 ms late, as it recorded them"
    )
    assert v.reason.startswith("not graded: the machine may have made this miss (in your kernel's own runs"), v.reason
    assert not v.ours_only  # the notebook runs again
    [v] = R._decide_all([_pending(lab, 20.0, lag_p99_us=400.0, steal=0.021)], lab, None)
    assert v.disturbed == "in your kernel's own runs the VM's host stole 2.1% of the CPU time, as it recorded them"
    [v] = R._decide_all([_pending(lab, 20.0, retransmissions=40.0, lag_p99_us=400.0, steal=0.021)], lab, None)
    assert v.disturbed and "[1 more]" in v.reason  # retransmissions: a disturbance moves them either way
    [v] = R._decide_all([_pending(lab, 20.0, lag_p99_us=900.0, steal=0.004)], lab, None)  # quiet: a failure stands
    assert not v.passed and v.disturbed == "" and v.reason.startswith("Q1 timeout_ms=20: you report")
    # better than the runs: a late kernel's runs can meet other draws of the link than
    # quiet ones, luckier ones too, so that is graded again as well
    for table in (_pending(lab, 500.0, lag_p99_us=3100.0), _pending(lab, 500.0, steal=0.05)):
        [v] = R._decide_all([table], lab, None)
        assert not v.passed and v.disturbed.startswith("in your kernel's own runs") and not v.ours_only, v.reason
    [v] = R._decide_all([_pending(lab, 62.0, lag_p99_us=9000.0, steal=0.5)], lab, None)  # a pass is the grader's runs'
    assert v.passed and v.disturbed == ""
    assert R.disturbed_kernel() == R.disturbed_kernel(math.nan, math.nan) == R.disturbed_kernel(1000.0, 0.0) == ""
    assert R.disturbed_kernel(2000.0, 0.01) == (
        "in your kernel's own runs the engine sent packets up to 2.0 ms late "
        "and the VM's host stole 1.0% of the CPU time, as it recorded them"
    )


def test_the_lab_hands_in_the_worst_the_machine_did_to_its_runs(lab):
    assert lab.disturbance("q1") == {"lag_p99_us": None, "steal": None}  # nothing measured
    lab.frames["q1"] = _fresh(lab, 700.0).assign(lag_p99_us=[700.0, 2500.0], steal=[0.03, None])
    try:
        assert lab.disturbance("q1") == {"lag_p99_us": 2500.0, "steal": 0.03}
        # steal over all the runs, each by its length: one tick in a short run is not a host that steals
        lab.frames["q1"] = _fresh(lab, 700.0, goodput=(60.0, 64.0, 62.0)).assign(
            steal=[0.05, 0.0, 0.0], elapsed_s=[0.2, 4.0, 3.8]
        )
        assert lab.disturbance("q1")["steal"] == pytest.approx(0.05 * 0.2 / 8.0)
        lab.frames["q1"] = _fresh(lab, math.nan)
        assert lab.disturbance("q1") == {"lag_p99_us": None, "steal": None}
    finally:
        lab.frames.pop("q1")


def test_what_the_kernel_hands_in_is_read_as_numbers_or_not_at_all(lab, tmp_path):
    """_prepare keeps only numbers of the two figures the kernel may hand in."""
    folder = tmp_path / "programs"
    folder.mkdir()
    for name in lab.spec.questions["q1"].programs:
        (folder / name).write_text("")
    here = nb.Lab("tiny", "comn", folder=str(folder), backend="local", progress=False)
    table = pd.concat([_q1(62.0).assign(timeout_ms=c["timeout"]) for c in here.cells("q1")], ignore_index=True)
    for extra, kept in (
        ({"lag_p99_us": 2500, "steal": 0.02}, {"lag_p99_us": 2500.0, "steal": 0.02}),
        ({"lag_p99_us": "late", "steal": True, "other": 1}, {}),
        ({}, {}),
        ({"lag_p99_us": 10**400, "steal": math.inf}, {}),
    ):
        output = _handed(table)
        output["data"][nb.HAND_IN].update(extra)
        pending = R._prepare(
            R.Verdict("results_sheet", "test_q1_remeasured", "q1", False, ""),
            here,
            _test_cell([output]),
            "q1",
            3,
            b"key",
            "comn",
            "s1",
        )
        assert isinstance(pending, R._Pending) and pending.kernel == kept, pending


def test_a_failure_disturbed_only_in_the_graders_runs_needs_only_the_remeasurement_again(lab, monkeypatch):
    """A disturbance can move a figure either way (the runs it hits meet other draws of
    the link: BENCHMARKS.md, "Notebooks"). So the grader's late or crowded runs explain
    a report outside them either way (the re-measurement again is enough), and so does
    the kernel's word or crowding (its notebook runs again); a failure on quiet runs of
    a quiet kernel stands."""
    lags = iter([])
    monkeypatch.setattr(
        R,
        "_rerun",
        lambda lab_, sandbox, pending, reruns: {
            i: _fresh(lab, next(lags), goodput=(60.0, 64.0) * reruns) for i in pending
        },
    )
    for reported in (500.0, 20.0):  # better, worse: late runs explain both
        lags = iter([4200.0] * 3)
        [v] = R._decide_all([_pending(lab, reported)], lab, None)
        assert v.disturbed.startswith("in 8 of the grader's 8 runs") and v.ours_only, (reported, v.reason)
    lags = iter([4200.0] * 3)
    [v] = R._decide_all([_pending(lab, 20.0, retransmissions=40.0, lag_p99_us=3000.0)], lab, None)  # both
    assert v.disturbed == (
        "in 8 of the grader's 8 runs the engine sent packets up to 4.2 ms late; in your kernel's "
        "own runs the engine sent packets up to 3.0 ms late, as it recorded them"
    ), v.disturbed
    assert not v.ours_only
    crowded = "while the grader re-measured, tasks waited for a CPU 96% of the time, 2 gradings at a time"
    for reported in (500.0, 20.0):
        lags = iter([300.0] * 3)
        [v] = R._decide_all([_pending(lab, reported)], lab, None, crowding=lambda: crowded)
        assert v.disturbed == crowded and v.ours_only, (reported, v.reason)
    crowded = "while your notebook ran, tasks waited for a CPU 96% of the time, 2 gradings at a time"
    for reported in (500.0, 20.0):  # a crowded kernel's table: better or worse, its notebook runs again
        lags = iter([300.0] * 3)
        [v] = R._decide_all([_pending(lab, reported)], lab, None, kernel_crowded=crowded)
        assert v.disturbed == crowded and not v.ours_only, (reported, v.reason)
    lags = iter([300.0] * 3)
    [v] = R._decide_all([_pending(lab, 500.0)], lab, None)  # all quiet: it stands
    assert not v.passed and v.disturbed == "" and v.reason.startswith("Q1 timeout_ms=20: you report"), v.reason
