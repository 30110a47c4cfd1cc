"""Grading for real (netns backend, jailed): the reference and a correct student get
full marks; a re-grade, serial or parallel, gives the same scores; the outputs."""

import json
import shutil

import pytest

from grader.protocol.battery import load_battery
from grader.collect import Submission
from grader.protocol.grade import Options, grade_submission, regrade_ungraded
from grader.parallel import grade_all

from tests.support.grading import TINY, grade, lost_points, verdicts

pytestmark = pytest.mark.netns


def scores(result: dict) -> dict:
    return {s["name"]: s["score"] for s in result["scenarios"]}


def test_reference_copy_gets_full_marks_in_every_scenario(reference_copy, tmp_path):
    result = grade(reference_copy, out=tmp_path)
    assert result["sandbox"] == "bubblewrap"
    assert lost_points(verdicts(result)) == {} and result["max_score"] == 8
    gbn = next(s for s in result["scenarios"] if s["name"] == "t-gbn-loss")
    if not gbn.get("ungraded"):
        assert gbn["runs"][0]["reference_goodput_kBps"] > 0  # compared with the reference's own run


def test_student_gets_full_marks_and_the_same_scores_serially_and_in_parallel(student, tmp_path):
    copies = []
    for k in range(3):  # the same submission three times: same digest, same seeds
        copies.append(Submission(f"copy{k}", str(shutil.copytree(student, tmp_path / f"copy{k}"))))
    battery = load_battery(TINY)
    options = Options(backend="netns")
    serial = grade_all(copies[:1], battery, None, options, jobs=1)
    parallel = grade_all(copies, battery, None, options, jobs=3)
    assert lost_points(verdicts(serial[0])) == {}
    graded = [s["name"] for s in serial[0]["scenarios"] if not s.get("ungraded")]  # the machine's word aside
    assert [{n: scores(r)[n] for n in graded if n not in r["ungraded"]} for r in parallel] == [
        {n: scores(serial[0])[n] for n in graded if n not in r["ungraded"]} for r in parallel
    ]
    assert {r["digest"] for r in parallel} == {serial[0]["digest"]}
    seeds = [[s["seeds"] for s in r["scenarios"]] for r in parallel + serial]
    assert all(s == seeds[0] for s in seeds)


def test_outputs_gradescope_results_and_feedback_with_replay(student, tmp_path):
    (student / "Receiver4.py").unlink()  # part 4's receiver missing: one scenario fails
    result = grade(student, out=tmp_path)
    folder = tmp_path / student.name
    gs = json.loads((folder / "results.json").read_text())
    assert gs["score"] == result["score"] == 8 - 2 - 2 * len(result["ungraded"])  # the machine's word aside
    assert list(lost_points(verdicts(result))) == ["t-receiver"]
    failed = [t for t in gs["tests"] if t["status"] == "failed" and t["name"].split(": ")[1] not in result["ungraded"]]
    assert [t["name"] for t in failed] == ["part 4: t-receiver"]
    assert "Receiver4 is missing from the submission (expected Receiver4.py, Receiver4.java" in failed[0]["output"]
    md = (folder / "feedback.md").read_text()
    assert "rdtlab run --sender" in md and "Receiver4.py" in md and "--seed" in md
    assert "<table>" in (folder / "feedback.html").read_text()


def test_a_little_endian_student_meets_a_little_endian_reference(student, tmp_path):
    rdt = student / "rdt.py"
    text = rdt.read_text()
    for old, new in (('struct.Struct("!HB")', 'struct.Struct("<HB")'), ('struct.Struct("!H")', 'struct.Struct("<H")')):
        assert text.count(old) == 1
        text = text.replace(old, new)
    rdt.write_text(text)
    result = grade(student, names=["t-sender", "t-receiver"], out=tmp_path)
    assert result["byte_order"] == "little"
    assert [s["reason"] for s in result["scenarios"] if not s["passed"]] == []


LEAVES_EARLY = """import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", int(sys.argv[1])))
s.recvfrom(4096)    # the first packet, then gone: nothing written
"""


def test_a_scenario_graded_again_keeps_its_failing_runs_pcap(student, tmp_path):
    """A scenario the machine disturbed is graded again alone (grade_all's last round):
    the failing run of that grading keeps its pcap beside the feedback, which names it."""
    (student / "Receiver2.py").write_text(LEAVES_EARLY)
    battery = load_battery(TINY).select(names=["t-clean"])
    sub, options = Submission(student.name, str(student)), Options(backend="netns")
    first = grade_submission(sub, battery, str(tmp_path), options)
    folder = tmp_path / student.name
    for pcap in folder.glob("*.pcap"):
        pcap.unlink()
    merged = regrade_ungraded(sub, battery, str(tmp_path), options, {**first, "ungraded": ["t-clean"]})
    again = merged["scenarios"][0]
    assert merged["graded_again"] == ["t-clean"] and not again["passed"]
    if again.get("ungraded"):  # the machine disturbed the grading alone too: nothing to keep
        assert again["pcap"] is None and not list(folder.glob("*.pcap"))
        return
    assert "receiver exited" in again["reason"], again["reason"]
    assert again["pcap"] and (folder / again["pcap"]).stat().st_size > 0
    assert f"`{again['pcap']}`" in (folder / "feedback.md").read_text()
    assert json.loads((folder / "results.json").read_text())["tests"][0]["status"] == "failed"
