"""A notebook on the local backend and a question with no programs of the student's
(comn's Q7, iperf3): not measurable here, unless complete netns runs of it are kept in
the folder (a grader measures them once for a class outside the jails), which are then
used, and checked, as runs made here."""

import json
import os

import pandas as pd

from harness import notebook as nb
from harness.experiments.sweep import cell_key


def keep_netns_runs(lab: nb.Lab, q: str, reps: int) -> None:
    sweep = lab._built(q)
    path = lab.results_path(q, backend="netns")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for cell in sweep.cells:
            for rep in range(reps):
                f.write(
                    json.dumps(
                        {"sweep": q, "cell": cell_key(cell), "rep": rep, "ok": True, sweep.metric: 500.0, **cell}
                    )
                    + "\n"
                )


def test_kernel_tcp_on_local_uses_kept_netns_runs_and_checks_them(tmp_path):
    lab = nb.Lab("tiny", "comn", folder=str(tmp_path), backend="local", progress=False)
    assert lab.unavailable("q7") and lab.cannot_measure("q7") == lab.unavailable("q7")
    empty = lab.table("q7")
    # nothing kept: only the table's shape can count, and the test says why
    assert nb.check_table("q7", empty, lab) == []
    # the netns runs kept, but too few: the question still cannot be measured here
    keep_netns_runs(lab, "q7", reps=lab._built("q7").runs - 1)
    assert lab.cannot_measure("q7") is not None
    # every run kept: measured (from them), and an empty table is now wrong
    keep_netns_runs(lab, "q7", reps=lab._built("q7").runs)
    assert lab.cannot_measure("q7") is None
    problems = nb.check_table("q7", empty, lab)
    assert any("has no completed run" in p for p in problems), problems
    table = lab.measure("q7")
    assert isinstance(table, pd.DataFrame) and (table["runs"] == lab._built("q7").runs).all()
    assert nb.check_table("q7", table, lab) == []
