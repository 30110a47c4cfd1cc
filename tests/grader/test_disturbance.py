"""No grade from a disturbed run (grader/disturbance.py): real runs of a correct
submission, with the engine's word that the machine disturbed them (its lag warning)
replaced by a script, since a real disturbance cannot be ordered on cue. A pass on a
disturbed run stands; a failure on one is run again with the same seed and graded; one
disturbed on every try is not scored but graded again after the pool, one submission at
a time; what is still disturbed then is marked ungraded everywhere the grade shows."""

from __future__ import annotations

import csv
import os
import shutil
from dataclasses import replace

import pytest

from grader import disturbance

from grader.protocol import grade as grade_module
from grader.protocol.battery import load_battery
from grader.collect import Submission
from grader.export_csv import write_class_csv
from grader.protocol.grade import Options
from grader.parallel import grade_all

from tests.support.grading import STUDENT, TINY

pytestmark = pytest.mark.netns
LAG = "the engine sent packets up to 3.2 ms late (p99 lag > 1 ms): the machine was busy, timings are disturbed"


def battery():
    return load_battery(TINY).select(names=["t-clean"])


def class_of(tmp_path, n=2) -> list[Submission]:
    return [Submission(f"s{k}", str(shutil.copytree(STUDENT, tmp_path / f"s{k}"))) for k in range(n)]


def script(monkeypatch, disturbed) -> list:
    """disturbance.why answers `disturbed(call, run)` for each run it is asked about."""
    calls = []

    def why(run):
        if run is None:
            return None
        calls.append((run.seed, grade_module.BUDGET.size))
        return LAG if disturbed(len(calls), run) else None  # the machine's own lag would blur the script

    monkeypatch.setattr(disturbance, "why", why)
    return calls


def writing_nothing(sub: Submission) -> Submission:
    """`sub` with a receiver that ACKs the whole file but writes it nowhere (its output
    file is left empty), as one starved before it wrote would be: it fails t-clean, and a
    disturbed machine can fail a correct receiver so (grader.disturbance.machine_can_fail)."""
    os.rename(os.path.join(sub.path, "Receiver2.py"), os.path.join(sub.path, "Receiver2Whole.py"))
    with open(os.path.join(sub.path, "Receiver2.py"), "w") as f:
        f.write(WRITES_NOTHING)
    return sub


WRITES_NOTHING = """import os, sys
here = os.path.dirname(os.path.abspath(__file__))
os.execv(sys.executable, [sys.executable, os.path.join(here, "Receiver2Whole.py"), sys.argv[1], os.devnull])
"""


def truncating(sub: Submission) -> Submission:
    """`sub` with a sender that never sends the file's last byte: it fails t-clean, on
    wrong bytes, which no disturbance causes."""
    os.rename(os.path.join(sub.path, "Sender2.py"), os.path.join(sub.path, "Sender2Whole.py"))
    with open(os.path.join(sub.path, "Sender2.py"), "w") as f:
        f.write(TRUNCATES)
    return sub


def test_a_pass_on_a_disturbed_run_stands_without_running_it_again(tmp_path, monkeypatch):
    calls = script(monkeypatch, lambda n, run: True)
    [result] = grade_all(class_of(tmp_path, 1), battery(), None, Options(backend="netns"), jobs=1)
    s = result["scenarios"][0]
    assert result["score"] == battery().max_score and result["ungraded"] == []
    assert s["passed"] and "retried" not in s and len(calls) == 1


def test_a_failure_on_a_disturbed_run_is_run_again_with_the_same_seed_and_graded(tmp_path, monkeypatch):
    calls = script(monkeypatch, lambda n, run: n == 1)
    [result] = grade_all(
        [writing_nothing(s) for s in class_of(tmp_path, 1)], battery(), None, Options(backend="netns"), jobs=1
    )
    s = result["scenarios"][0]
    assert result["ungraded"] == [] and s["retried"] == 1
    assert s["score"] == 0 and "not graded" not in s["reason"] and s["reason"]  # its own fault decides it
    assert len(calls) == 2 and len({seed for seed, _ in calls}) == 1  # the same seed: the replay still reproduces it


def test_a_failure_no_disturbance_causes_stands_on_a_disturbed_run(tmp_path, monkeypatch):
    """Wrong bytes are the programs' own, however late the engine was: not run again."""
    calls = script(monkeypatch, lambda n, run: True)
    [result] = grade_all(
        [truncating(s) for s in class_of(tmp_path, 1)], battery(), None, Options(backend="netns"), jobs=1
    )
    s = result["scenarios"][0]
    assert result["ungraded"] == [] and "retried" not in s and len(calls) == 1
    assert s["score"] == 0 and "not graded" not in s["reason"] and "differs" in s["reason"], s["reason"]


def test_disturbed_in_the_pool_is_graded_again_alone_at_the_end(tmp_path, monkeypatch):
    calls = script(monkeypatch, lambda n, run: grade_module.BUDGET.size > 1)  # busy only while the pool runs
    out = tmp_path / "out"
    # no captures: a failure's picture would add a reference run to count (grader/protocol/pictures.py)
    results = grade_all(
        [writing_nothing(s) for s in class_of(tmp_path)],
        battery(),
        str(out),
        Options(backend="netns", pcaps=False),
        jobs=2,
    )
    assert all(r["ungraded"] == [] and r["score"] == 0 for r in results)
    assert {budget for _, budget in calls} == {2, 1}
    # in the pool: each submission's run tried TRIES times; then alone, graded at once
    assert sum(budget == 2 for _, budget in calls) == 2 * disturbance.TRIES
    assert sum(budget == 1 for _, budget in calls) == 2
    assert "UNGRADED" not in (out / "s0" / "feedback.md").read_text()


def test_a_scenario_the_course_does_not_score_runs_once_however_disturbed(tmp_path, monkeypatch):
    """Beyond the spec and not scored, a scenario only reports: a failure on a disturbed
    run, or in a crowded pool, is neither run again nor graded again alone (which costs a
    class its time for no point), and its reason says the machine may have caused it."""
    calls = script(monkeypatch, lambda n, run: True)
    unscored = replace(
        battery(), scenarios=[replace(s, beyond_spec=True, scored=False, points=0.0) for s in battery().scenarios]
    )
    results = grade_all(
        [writing_nothing(s) for s in class_of(tmp_path)], unscored, None, Options(backend="netns", pcaps=False), jobs=2
    )
    assert len(calls) == 2  # one run each, in the pool
    for r in results:
        [s] = r["scenarios"]
        assert r["ungraded"] == [] and not r.get("graded_again") and s["score"] == 0 and not s["passed"]
        assert "not scored, so not run again" in s["reason"] and "3.2 ms late" in s["reason"], s["reason"]


def test_a_program_that_crashes_before_its_first_packet_is_not_graded_again(tmp_path):
    """A sender with a syntax error, or a receiver that dies before it binds, fails in the
    pool on its own: crowding makes programs late, not crash before the link carries a
    packet. Its failure stands there; it is not graded again alone after the pool."""
    good, bad_sender, bad_receiver = class_of(tmp_path, 3)
    for sub, program in ((bad_sender, "Sender2.py"), (bad_receiver, "Receiver2.py")):
        with open(os.path.join(sub.path, program), "a") as f:
            f.write("\nif True\n    pass\n")  # a syntax error: Python compiles it before it runs
    out = tmp_path / "out"
    results = grade_all([good, bad_sender, bad_receiver], battery(), str(out), Options(backend="netns"), jobs=2)
    assert results[0]["score"] == battery().max_score
    for r, said in ((results[1], "sender failed"), (results[2], "before binding")):
        s = r["scenarios"][0]
        assert s["score"] == 0 and "SyntaxError" in s["reason"] and said in s["reason"], s["reason"]
        assert not r.get("graded_again") and r["ungraded"] == [], r.get("graded_again")
        assert "Graded again alone" not in (out / r["student"] / "feedback.md").read_text()


def test_a_scenario_disturbed_on_every_try_is_never_scored_and_says_so(tmp_path, monkeypatch):
    calls = script(monkeypatch, lambda n, run: True)
    out = tmp_path / "out"
    [result] = grade_all(
        [writing_nothing(s) for s in class_of(tmp_path, 1)], battery(), str(out), Options(backend="netns"), jobs=1
    )
    s = result["scenarios"][0]
    assert result["ungraded"] == ["t-clean"] and s["ungraded"] == LAG
    assert s["score"] == 0 and s["reason"].startswith("not graded: every try of this scenario was disturbed")
    assert s["retried"] == disturbance.TRIES
    assert len(calls) == disturbance.TRIES * (1 + disturbance.AGAIN_ALONE)  # graded alone AGAIN_ALONE times more
    feedback = (out / "s0" / "feedback.md").read_text()
    assert "Not graded yet: t-clean" in feedback and "| UNGRADED |" in feedback
    write_class_csv([result], str(out / "grades.csv"))
    assert next(csv.DictReader(open(out / "grades.csv")))["t-clean"] == "ungraded"


def test_a_quiet_spell_after_the_first_grading_alone_is_graded(tmp_path, monkeypatch):
    """A VM's host steals CPU time in bursts: what the pool and the first grading alone
    found disturbed on every try is graded on a later grading alone."""
    calls = script(monkeypatch, lambda n, run: n <= 2 * disturbance.TRIES)
    [result] = grade_all(
        [writing_nothing(s) for s in class_of(tmp_path, 1)], battery(), None, Options(backend="netns"), jobs=1
    )
    s = result["scenarios"][0]
    assert result["ungraded"] == [] and not s.get("ungraded") and len(calls) == 2 * disturbance.TRIES + 1
    assert s["score"] == 0 and "not graded" not in s["reason"] and s["reason"]  # its own fault decides it
    assert result["graded_again"] == ["t-clean"]  # named once, however many times


TRUNCATES = """import os, subprocess, sys, tempfile
here = os.path.dirname(os.path.abspath(__file__))
host, port, path, *rest = sys.argv[1:]
with open(path, "rb") as f:     # a bug: the last byte is never sent
    data = f.read()[:-1]
fd, short = tempfile.mkstemp()
os.write(fd, data)
os.close(fd)
sys.exit(subprocess.run([sys.executable, os.path.join(here, "Sender2Whole.py"), host, port, short, *rest]).returncode)
"""


def test_a_failure_in_a_crowded_pool_is_graded_again_alone(tmp_path, monkeypatch):
    """A scenario that fails while the grader's own pool crowds the machine is not scored
    there but graded again alone, and its real fault then decides it; a pass stands
    without asking. (The machine's CPU pressure is scripted: crowding cannot be ordered on cue.)"""
    asked = []

    def crowded_failure(checks, pressure, at_once):  # as if its failed checks were timing ones
        asked.append(at_once)
        return "tasks waited for a CPU 97% of the time, 2 gradings at a time" if at_once > 1 else ""

    monkeypatch.setattr(
        disturbance,
        "crowded_failure",
        lambda checks, runs, pressure, at_once: (
            crowded_failure(checks, pressure, at_once) if not all(c.passed for c in checks) else ""
        ),
    )
    good, bad = class_of(tmp_path)
    truncating(bad)
    out = tmp_path / "out"
    results = grade_all([good, bad], battery(), str(out), Options(backend="netns"), jobs=2)
    assert results[0]["score"] == battery().max_score and asked == [2, 1], (
        asked,
        results[1]["scenarios"],
    )  # asked of the failure only
    s = results[1]["scenarios"][0]
    assert results[1]["ungraded"] == [] and s["score"] == 0 and not s.get("ungraded")
    assert "not graded" not in s["reason"] and s["reason"], s["reason"]  # its own fault, said as such
    feedback = (out / "s1" / "feedback.md").read_text()
    assert "UNGRADED" not in feedback
    assert (
        results[1]["graded_again"] == [s["name"]] and f"Graded again alone, after the others: {s['name']}" in feedback
    )
    assert not results[0].get("graded_again")


def test_rdtlab_check_checks_again_what_the_machine_disturbed_on_every_try(tmp_path, monkeypatch, capsys):
    """A student's machine has quiet spells: `rdtlab check` grades a scenario disturbed on
    every try again (here, the first grading's three tries), and says so, before it says
    it could not tell."""
    from rdtlab.cli import main

    calls = script(monkeypatch, lambda n, run: n <= disturbance.TRIES)
    [sub] = [writing_nothing(s) for s in class_of(tmp_path, 1)]
    code = main(["check", "--battery", TINY, "--scenario", "t-clean", "--backend", "netns", sub.path])
    printed = capsys.readouterr()
    assert "the machine disturbed every try of t-clean: checking again" in printed.err
    assert code == 1 and len(calls) == disturbance.TRIES + 1  # graded on its first quiet try
    assert "not graded" not in printed.out and "t-clean" in printed.out
