"""Planted bugs (tests/fixtures/submissions/bugs.toml): each loses points in the
scenario that names its fault, while the correct solution scores full marks there.
The gradings run side by side (as `rdtlab grade --jobs` does)."""
from concurrent.futures import ThreadPoolExecutor

import pytest

from grader.planted import load_bugs, plant

from conftest import FIXTURES, STUDENT, grade

pytestmark = pytest.mark.netns
BUGS = load_bugs(str(FIXTURES / "bugs.toml"))


def test_each_planted_bug_loses_points_where_the_correct_solution_gets_full_marks(tmp_path):
    folders = [plant(str(STUDENT), bug, str(tmp_path / bug["name"])) for bug in BUGS]
    with ThreadPoolExecutor(4) as pool:
        good = pool.submit(grade, STUDENT, battery="comn", names=sorted({b["caught_by"] for b in BUGS}))
        planted = list(pool.map(lambda fb: grade(fb[0], battery="comn", names=[fb[1]["caught_by"]]),
                                zip(folders, BUGS)))
    assert [(s["name"], s["reason"]) for s in good.result()["scenarios"] if not s["passed"]] == []
    for bug, result in zip(BUGS, planted):
        scenario = result["scenarios"][0]
        print(f"{bug['name']}: {scenario['name']} {scenario['score']}/{scenario['max_score']}: {scenario['reason']}")
        assert scenario["score"] < scenario["max_score"], (bug["name"], scenario["reason"])
        assert scenario["reason"] and "\n" not in scenario["reason"]
