"""Protocol scores land in a real nbgrader gradebook beside the notebook's, and
`nbgrader export` reads them back as one total (a temporary course, real nbgrader)."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat

from grader.notebook.gradebook import import_scores

NBGRADER = str(Path(sys.executable).parent / "nbgrader")


def nbgrader(course: Path, *args):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([NBGRADER, *args], cwd=course, capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def make_course(course: Path) -> None:
    (course / "source" / "comn").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.root = %r\nc.CourseDirectory.course_id = 'test'\n" % str(course)
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    answer = nbformat.v4.new_code_cell("### BEGIN SOLUTION\nanswer = 42\n### END SOLUTION")
    answer.metadata["nbgrader"] = {
        "solution": True,
        "grade": False,
        "locked": False,
        "grade_id": "answer",
        "schema_version": 3,
    }
    test = nbformat.v4.new_code_cell("assert answer == 42")
    test.metadata["nbgrader"] = {
        "solution": False,
        "grade": True,
        "locked": True,
        "points": 3,
        "grade_id": "test_answer",
        "schema_version": 3,
    }
    nb.cells = [answer, test]
    nbformat.write(nb, course / "source" / "comn" / "sheet.ipynb")


def result(student: str, name: str, points: list[float]) -> dict:
    """A grade_submission result, reduced to what the import reads."""
    return {
        "student": student,
        "name": name,
        "score": sum(points),
        "max_score": 2.0 * len(points),
        "scenarios": [{"name": f"p{k}", "score": p, "max_score": 2.0} for k, p in enumerate(points)],
    }


def test_protocol_scores_join_the_notebook_scores_in_nbgrader_export(tmp_path):
    course = tmp_path / "course"
    make_course(course)
    nbgrader(course, "generate_assignment", "comn", "--force")
    submitted = course / "submitted" / "ada" / "comn"
    submitted.mkdir(parents=True)
    nb = nbformat.read(course / "release" / "comn" / "sheet.ipynb", as_version=4)
    nb.cells[0].source = "answer = 42"
    nbformat.write(nb, submitted / "sheet.ipynb")
    nbgrader(course, "autograde", "comn", "--create")
    import_scores(str(course), "comn", [result("ada", "Ada Lovelace", [2.0, 1.0]), result("bob", "", [0.0, 2.0])])
    import_scores(str(course), "comn", [result("ada", "Ada Lovelace", [2.0, 1.5])])  # a re-grade overwrites
    nbgrader(course, "export", "--to", str(tmp_path / "grades.csv"))
    rows = {r["student_id"]: r for r in csv.DictReader(open(tmp_path / "grades.csv"))}
    assert float(rows["ada"]["score"]) == 3 + 3.5  # the notebook's 3 points + the protocol's
    assert float(rows["ada"]["max_score"]) == 3 + 4
    assert float(rows["bob"]["score"]) == 2.0  # no notebook handed in, protocol only
    assert rows["ada"]["first_name"] == "Ada" and rows["ada"]["last_name"] == "Lovelace"
