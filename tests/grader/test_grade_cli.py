"""`rdtlab grade` and `rdtlab check` end to end (the installed command, the tiny battery)."""

import csv
import json
import shlex
import shutil
import subprocess
import tarfile

import jsonschema
import pytest

from grader.protocol.planted import load_bugs, plant

from tests.support.grading import (
    FIXTURES,
    GRADER_TESTS,
    RDTLAB,
    STUDENT,
    TINY,
    gradescope_verdicts,
    lost_points,
    rdtlab,
)

pytestmark = pytest.mark.netns
SCHEMA = json.loads((GRADER_TESTS / "gradescope_schema.json").read_text())


def test_grade_a_class_writes_results_feedback_csv_and_a_replay_that_replays(tmp_path):
    root = tmp_path / "submitted"
    shutil.copytree(STUDENT, root / "ada" / "comn")
    bug = next(b for b in load_bugs(str(FIXTURES / "bugs.toml")) if b["name"] == "gbn-acks-out-of-order")
    plant(str(STUDENT), bug, str(tmp_path / "cw2"))
    (root / "bob").mkdir()
    with tarfile.open(root / "bob" / "cw2.tar.gz", "w:gz") as t:
        t.add(tmp_path / "cw2", arcname="cw2")
    out = tmp_path / "out"
    done = rdtlab("grade", str(tmp_path), "--battery", TINY, "--jobs", "2", "--out", str(out), "--backend", "netns")
    assert done.returncode == 0, done.stderr
    rows = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))}
    for student in ("ada", "bob"):
        jsonschema.validate(json.loads((out / student / "results.json").read_text()), SCHEMA)
    ada = json.loads((out / "ada" / "results.json").read_text())
    assert lost_points(gradescope_verdicts(ada)) == {}
    if rows["bob"]["t-gbn-loss"] == "ungraded":  # the host disturbed every try: no failure to replay
        return
    assert float(rows["bob"]["score"]) < 8 and float(rows["bob"]["t-gbn-loss"]) == 0
    md = (out / "bob" / "feedback.md").read_text()
    replay = next(line for line in md.splitlines() if line.startswith("rdtlab run") and "Sender3.py" in line)
    assert "--seed" in replay and list((out / "bob").glob("t-gbn-loss-*.pcap"))
    again = subprocess.run(
        [RDTLAB, *shlex.split(replay)[1:], "--json"], capture_output=True, text=True, cwd=tmp_path / "cw2", timeout=120
    )
    assert again.stdout, again.stderr
    result = json.loads(again.stdout)
    assert again.returncode == 1 and not result["ok"] and result["seed"] == int(replay.split("--seed ")[1].split()[0])


def test_check_runs_the_public_scenarios_of_a_part(tmp_path):
    done = rdtlab("check", "--part", "2", "--battery", TINY, str(STUDENT), "--backend", "netns")
    assert done.returncode == 0, done.stderr
    assert "| 2 | t-clean | pass | 2 / 2 |" in done.stdout
    assert "t-sender" not in done.stdout  # not public


@pytest.mark.parametrize(
    "args, words",
    [
        (["grade", "/nonexistent/subs"], "submissions folder not found: /nonexistent/subs"),
        (["grade", ".", "--assignment", "nope"], "no battery 'nope'"),
        (["check", "/"], "holds no Sender/Receiver programs"),
        (["grade", ".", "--jobs", "0"], "--jobs must be at least 1"),
        (["grade", ".", "--notebook-jobs", "0"], "--notebook-jobs must be at least 1"),
        (["grade", ".", "--gradebook", ".", "--no-sandbox"], "--no-sandbox was given: add --no-notebooks"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, words):
    done = rdtlab(*args)
    assert done.returncode == 2
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
