"""Planted bugs (tests/fixtures/submissions/bugs.toml): each loses points in the
scenario that names its fault, while the correct solution scores full marks there.
The gradings run side by side (as `rdtlab grade --jobs` does)."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from grader.protocol.planted import load_bugs, plant

from tests.support.grading import FIXTURES, STUDENT, grade, lost_points, verdicts

pytestmark = pytest.mark.netns
BUGS = load_bugs(str(FIXTURES / "bugs.toml"))
VALID = load_bugs(str(FIXTURES / "bugs.toml"), "valid")


def test_each_planted_bug_loses_points_where_the_correct_solution_gets_full_marks(tmp_path):
    folders = [plant(str(STUDENT), bug, str(tmp_path / bug["name"])) for bug in BUGS]
    with ThreadPoolExecutor(4) as pool:
        good = pool.submit(grade, STUDENT, battery="comn", names=sorted({b["caught_by"] for b in BUGS}))
        planted = list(
            pool.map(lambda fb: grade(fb[0], battery="comn", names=[fb[1]["caught_by"]]), zip(folders, BUGS))
        )
    assert lost_points(verdicts(good.result())) == {}
    for bug, result in zip(BUGS, planted):
        scenario = result["scenarios"][0]
        print(f"{bug['name']}: {scenario['name']} {scenario['score']}/{scenario['max_score']}: {scenario['reason']}")
        assert not scenario["passed"] and (scenario["score"] < scenario["max_score"] or scenario.get("beyond_spec")), (
            bug["name"],
            scenario["reason"],
        )
        assert scenario["reason"] and "\n" not in scenario["reason"]


def test_what_the_spec_allows_keeps_full_marks_where_a_bug_would_be_caught(tmp_path):
    """A receiver that leaves once the file is complete: valid (the spec puts ending on
    the sender), so the student's sender gives up after the last ACK is lost and that
    is fine; the sender's own termination is graded in p2-receiver-gone."""
    for variant in VALID:
        folder = plant(str(STUDENT), variant, str(tmp_path / variant["name"]))
        result = grade(folder, battery="comn", names=variant["full_marks_in"])
        assert lost_points(verdicts(result)) == {}, variant["name"]
        lost = next(s for s in result["scenarios"] if s["name"] == "p2-last-ack-lost")
        if not lost.get("ungraded"):
            assert "gave up" in lost["reason"]  # some seed lost the last ACK: the sender ended on its own
