"""The grader's kernels measure a notebook's questions at once (harness.notebook
Lab.measure_all, asked for by RDTLAB_MEASURE_AT_ONCE): with the reference programs, in
tiny mode, on real transfers, every question the kernel can measure is in its results
file when the Lab is made, and each question's cell then reads its runs back without
running any."""
from __future__ import annotations

import os

import pytest

from grader.planted import reference_submission
from harness import notebook as nb
from harness.experiments import sweep as sweep_module
from harness.experiments.sweep import is_complete


@pytest.mark.timeout(300)
def test_every_question_is_measured_when_the_lab_is_made(tmp_path, monkeypatch):
    reference_submission(str(tmp_path))
    monkeypatch.setenv(nb.AT_ONCE, "1")
    lab = nb.Lab("tiny", "comn", folder=str(tmp_path), backend="local", progress=False)
    ready = [q for q in lab.spec.questions if not lab.unavailable(q)]
    assert {"q1", "q3", "q5"} <= set(ready)
    for q in ready:
        assert is_complete(lab._built(q), lab.results_path(q)), q
    monkeypatch.setattr(sweep_module, "_run_one_rep", lambda *a: pytest.fail("a cell ran its runs again"))
    for q in ready:
        table = lab.measure(q)
        assert len(table) and (table["runs"] > 0).all(), (q, table)
