"""Hostile submissions in the jail: each scores 0 for what it breaks with a one-line
reason, the grader finishes, a correct submission graded beside them keeps exactly
its scores, and nothing is left running or mounted (the autouse fixture, and below)."""

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from grader.protocol.battery import load_battery
from grader.collect import Submission
from grader.protocol.grade import Options
from grader.parallel import grade_all
from grader.jail.sandbox import Limits
from harness.engine import REPO

from tests.support.grading import (
    FIXTURES,
    HOSTILE_REASONS as EXPECT,
    STUDENT,
    TINY,
    laid_over_student,
    lost_points,
    verdicts,
)

pytestmark = pytest.mark.netns
HOSTILE = FIXTURES / "hostile"


def hostile_submission(name: str, root: Path, targets: list[str]) -> Submission:
    return laid_over_student(HOSTILE / name, root, targets)


def mounts() -> str:
    with open("/proc/self/mountinfo") as f:
        return "".join(line for line in f if f"rdt-grade-{os.getpid()}-" in line)  # ours, not a neighbour's


def test_every_hostile_submission_scores_zero_and_spares_its_neighbour(tmp_path):
    assert set(EXPECT) == {d.name for d in HOSTILE.iterdir() if d.is_dir()}
    battery = load_battery(TINY).select(names=["t-clean"])
    battery.scenarios[0] = dataclasses.replace(battery.scenarios[0], time_limit=8)
    root, out = tmp_path / "submissions", tmp_path / "out"
    root.mkdir(), out.mkdir()
    good = Submission("good", str(shutil.copytree(STUDENT, root / "good")))
    (out / "good").mkdir()
    (out / "good" / "results.json").write_text('{"score": 0}')
    course = tmp_path / "course"  # what `rdtlab grade --gradebook course` hides
    (course / "source").mkdir(parents=True)
    (course / "gradebook.db").write_bytes(b"SQLite format 3\0")
    (course / "source" / "answers.ipynb").write_text("{}")
    secrets = [
        str(course / "gradebook.db"),
        str(course / "source" / "answers.ipynb"),
        str(REPO / "assignments" / "comn" / "battery.toml"),
        str(REPO / "reference" / "comn" / "Sender2.py"),
        str(root / "good" / "rdt.py"),
        str(out / "good" / "results.json"),
        "/etc/shadow",
    ]
    writes = [str(out / "good" / "results.json"), str(out / "gradebook.db"), str(REPO / "grader" / "owned.txt")]
    subs = [hostile_submission(name, root, writes if name == "write-results" else secrets) for name in sorted(EXPECT)]
    options = Options(
        backend="netns",
        hidden=[str(root), str(out), str(course)],
        build_time_limit=3,
        limits=Limits(memory_bytes=384 << 20),
    )
    alone = grade_all([good], battery, None, options, jobs=1)[0]
    results = grade_all(subs + [good], battery, None, options, jobs=4)
    by_name = {r["student"]: r for r in results}
    assert lost_points(verdicts(by_name["good"])) == lost_points(verdicts(alone)) == {}
    for name, words in EXPECT.items():
        scenario = by_name[name]["scenarios"][0]
        assert scenario["score"] == 0, name
        assert any(w in scenario["reason"] for w in ((words,) if isinstance(words, str) else words)), (
            name,
            scenario["reason"],
        )
        assert "\n" not in scenario["reason"], name
    assert (out / "good" / "results.json").read_text() == '{"score": 0}'
    assert not (out / "gradebook.db").exists() and not (REPO / "grader" / "owned.txt").exists()
    assert mounts() == ""
    assert not [
        p
        for p in os.listdir("/tmp")
        if p.startswith(f"rdt-grade-{os.getpid()}-") and os.stat(f"/tmp/{p}").st_mtime > tmp_path.stat().st_mtime
    ]
