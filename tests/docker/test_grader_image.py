"""The grading image on a small class: the reference as a submission and one with a
planted bug, graded by `rdtlab grade` (the entry point) with the sandbox and the netns
backend inside the container."""
import csv
import shutil
from pathlib import Path

import pytest

from conftest import GRADER, GRADER_OPTS, REPO, leftovers, run

pytestmark = [pytest.mark.netns, pytest.mark.timeout(1800)]
FIXTURES = REPO / "tests" / "fixtures" / "submissions"
TINY = REPO / "tests" / "grader" / "tiny.toml"


def test_grading_image_grades_the_reference_full_and_the_broken_one_down(images, tmp_path):
    from grader.planted import load_bugs, plant, reference_submission

    class_ = tmp_path / "submitted"
    reference_submission(str(class_ / "ref"))
    bug = next(b for b in load_bugs(str(FIXTURES / "bugs.toml")) if b["name"] == "gbn-acks-out-of-order")
    # A folder, not cw2.tar.gz: grader/collect.py unpacks with tarfile's filter=, which
    # bookworm's Python 3.11.2 lacks (added in 3.11.4).
    plant(str(FIXTURES / "student"), bug, str(class_ / "bob"))
    shutil.copy(TINY, tmp_path / "tiny.toml")
    out = tmp_path / "results"
    out.mkdir()
    before = leftovers()
    done = run("docker", "run", "--rm", "--label", "rdtlab-test", *GRADER_OPTS,
               "-v", f"{class_}:/submissions:ro", "-v", f"{tmp_path / 'tiny.toml'}:/battery.toml:ro",
               "-v", f"{out}:/results", GRADER, "/submissions", "--battery", "/battery.toml",
               "--jobs", "2", "--out", "/results", "--backend", "netns", timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "rdtlab-grader:" not in done.stderr, done.stderr     # the netns backend was possible
    rows = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))}
    assert set(rows) == {"ref", "bob"}
    assert float(rows["ref"]["score"]) == float(rows["ref"]["max_score"]) > 0
    assert float(rows["bob"]["score"]) < float(rows["ref"]["score"])
    assert float(rows["bob"]["t-gbn-loss"]) == 0
    assert (out / "bob" / "feedback.md").exists() and (out / "ref" / "results.json").exists()
    assert leftovers() == before


def test_grading_image_without_net_admin_says_so_in_one_line(images, tmp_path):
    done = run("docker", "run", "--rm", "--label", "rdtlab-test", GRADER, "--help", check=False)
    assert done.returncode == 0 and "usage: rdtlab grade" in done.stdout
    notes = [line for line in done.stderr.splitlines() if line.startswith("rdtlab-grader:")]
    assert len(notes) == 1 and "local backend" in notes[0] and "--cap-add NET_ADMIN" in notes[0]
