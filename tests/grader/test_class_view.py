"""The class view (grader/export_class.py) as an instructor gets it from `rdtlab grade`:
class.csv names each planted bug's symptom in the scenario that catches it, and
class.html renders in chromium with its plots and no console errors; the failing
student's feedback says what went wrong and shows the failing run's picture beside the
reference's (grader/protocol/pictures.py)."""

from __future__ import annotations

import csv
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from grader.protocol.planted import plant, reference_submission
from harness.engine import REPO

from tests.support import TESTS
from tests.support.grading import grade_class_cli
from bench._browser import look_at

pytestmark = pytest.mark.netns
GBN = TESTS / "fixtures" / "batteries" / "gbn-vs-tcp"
BUGS = {"receiver-skips-crc": ("gv-corrupt-data", "wrong-bytes"), "timer-per-window": ("gv-clean", "storm")}


def test_the_class_view_names_each_bugs_symptom_and_renders(tmp_path):
    subs = tmp_path / "submitted"
    reference_submission(str(subs / "ref"), ("Sender3", "Receiver3"), package="gbn_vs_tcp")
    with open(GBN / "bugs.toml", "rb") as f:
        bugs = tomllib.load(f)["bug"]
    for name in BUGS:
        plant(str(GBN / bugs[name]["from"]), {**bugs[name], "name": name}, str(subs / name))
    done, out = grade_class_cli(
        subs,
        tmp_path / "graded",
        *("--assignment", "gbn-vs-tcp", "--backend", "netns", "--jobs", "2"),
        *("--scenario", "gv-clean", "--scenario", "gv-corrupt-data"),
    )
    assert done.returncode == 0, done.stderr
    rows = {r["scenario"]: r for r in csv.DictReader(open(out / "class.csv"))}
    for student, (scenario, kind) in BUGS.items():
        assert student in rows[scenario]["failed_students"].split(), rows[scenario]
        assert f"{kind} x1" in rows[scenario]["symptoms"], rows[scenario]
    assert "ref" not in rows["gv-clean"]["failed_students"].split()
    seen = look_at(
        (out / "class.html").as_uri(),
        str(tmp_path / "profile"),
        str(Path(REPO) / "out" / "test-artifacts" / "class.png"),
    )
    assert seen["errors"] == [] and len(seen["images"]) == 2 and all(ok for _, ok in seen["images"]), seen["images"]
    assert "What went wrong, and who" in seen["text"] and "the output is not the file sent" in seen["text"]
    feedback = (out / "receiver-skips-crc" / "feedback.html").read_text()
    assert "What went wrong: <b>the output is not the file sent</b>" in feedback
    page = look_at(
        (out / "receiver-skips-crc" / "feedback.html").as_uri(),
        str(tmp_path / "profile2"),
        str(Path(REPO) / "out" / "test-artifacts" / "feedback-receiver-skips-crc.png"),
    )
    assert page["errors"] == [] and [alt for alt, ok in page["images"] if ok] == [
        "your run",
        "the reference, same link and seed",
    ], page["images"]
    assert (out / "receiver-skips-crc" / "feedback.html").stat().st_size < 2 << 20
    assert not list(out.glob("*/*.trace.jsonl")), "the traces behind the pictures are not kept"
    import json
    import jsonschema
    from tests.support.grading import SCHEMA

    results = json.loads((out / "receiver-skips-crc" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    [failed] = [t for t in results["tests"] if t["status"] == "failed"]
    assert failed["output_format"] == "html" and failed["output"].count("<img") == 2  # Gradescope shows them too


def test_a_regrade_runs_only_the_changed_scenario_and_lists_whose_verdict_moved(tmp_path):
    """A copy of the battery with one scenario's bar changed: `--compare` runs that
    scenario alone again and lists the one student whose verdict moved in it."""
    subs = tmp_path / "submitted"
    reference_submission(str(subs / "ref"), ("Sender3", "Receiver3"), package="gbn_vs_tcp")
    with open(GBN / "bugs.toml", "rb") as f:
        bug = tomllib.load(f)["bug"]["timer-per-window"]
    plant(str(GBN / bug["from"]), {**bug, "name": "timer-per-window"}, str(subs / "timer-per-window"))
    battery = tmp_path / "battery.toml"
    text = (Path(REPO) / "assignments" / "gbn_vs_tcp" / "battery.toml").read_text()
    battery.write_text(text)
    rdtlab = [
        str(Path(sys.executable).parent / "rdtlab"),
        "grade",
        str(subs),
        "--battery",
        str(battery),
        "--backend",
        "netns",
        "--jobs",
        "2",
        "--scenario",
        "gv-clean",
        "--scenario",
        "gv-exact-multiple",
    ]
    first = subprocess.run(rdtlab + ["--out", str(tmp_path / "first")], capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    clean = (
        'name = "gv-clean"\npart = 1\nwhat = "a clean 10 ms link, window 16: every packet sent once"\n'
        "size = 131072\nretx_vs_losses = [1.0, 2]"
    )
    assert clean in text
    battery.write_text(text.replace(clean, clean.replace("[1.0, 2]", "[1.0, 40]")))
    again = subprocess.run(
        rdtlab + ["--out", str(tmp_path / "again"), "--compare", str(tmp_path / "first")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr
    assert "2 scenario gradings to run again, for 2 of 2 submission(s)" in again.stderr
    moved = list(csv.DictReader(open(tmp_path / "again" / "changes.csv")))
    assert [(m["student"], m["scenario"], m["passed_after"]) for m in moved] == [
        ("timer-per-window", "gv-clean", "True")
    ]
    assert "What the regrade changed" in (tmp_path / "again" / "class.html").read_text()
