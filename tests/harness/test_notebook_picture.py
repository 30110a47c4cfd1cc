"""A notebook's picture of a measured cell (Lab.picture) draws that cell's first measured
run, from the engine's trace the sweep kept of it, and runs a transfer of its own only
when no such run is kept (measured before traces were kept, or not measured yet)."""

from __future__ import annotations

import os

import pytest

import harness.transfer
from harness import notebook as nb
from harness.experiments.sweep import derive_seed
from harness.plots.trace import load
from harness.plots.tsg import describe


def _kept(lab, cell) -> str:
    """Where the sweep keeps the trace of `cell`'s first run (its seed derived here, as
    the sweep derives it)."""
    sweep = lab._built("q5")
    return os.path.join(lab._traces("q5"), f"{derive_seed(sweep.seed, 'q5', cell, 0)}.trace")


def _no_transfer(*args, **kwargs):
    raise AssertionError("the picture ran a transfer")


@pytest.fixture
def measured(tmp_path):
    from grader.protocol.planted import reference_submission

    reference_submission(str(tmp_path), names=("Sender4", "Receiver4"))
    lab = nb.Lab("tiny", "comn", folder=str(tmp_path), backend="local", progress=False)
    table = lab.measure("q5")
    assert (table["failed"] == 0).all() and (table["runs"] == lab.plan.runs).all(), table
    return lab


def test_the_sweep_keeps_the_trace_of_each_cells_first_run_only(measured):
    sweep = measured._built("q5")
    firsts = {os.path.basename(_kept(measured, cell)) for cell in sweep.cells}
    assert set(os.listdir(measured._traces("q5"))) == firsts
    assert len(measured.frames["q5"]) == len(sweep.cells) * sweep.runs > len(firsts)


def test_a_picture_draws_the_measured_run_without_running_one(measured, monkeypatch, capsys):
    monkeypatch.setattr(harness.transfer, "run_transfer", _no_transfer)
    cell = next(c for c in measured._built("q5").cells if c["window"] == 16)
    kept = _kept(measured, cell)
    fig = measured.picture("q5", window=16, focus="timeout")
    assert fig is not None, capsys.readouterr().out
    assert fig._suptitle.get_text().endswith(describe(load(kept)))
    # a kernel started again (a new Lab on the folder) resumes the runs and their traces
    again = nb.Lab("tiny", "comn", folder=measured.folder, backend="local", progress=False)
    again.measure("q5")
    assert again.picture("q5", window=16) is not None
    assert "no picture" not in capsys.readouterr().out


def test_a_picture_with_no_kept_run_runs_the_cells_first_seed(measured):
    cell = next(c for c in measured._built("q5").cells if c["window"] == 16)
    kept = _kept(measured, cell)
    os.remove(kept)
    fig = measured.picture("q5", window=16)
    assert fig is not None and "data messages" in fig._suptitle.get_text()
    assert not os.path.exists(kept), "a picture's own run keeps no trace"
