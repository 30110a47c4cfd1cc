"""Protocol scores land in a real nbgrader gradebook beside the notebook's, and
`nbgrader export` reads them back as one total (a temporary course, real nbgrader)."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat

from grader.export_class import write_class_view
from grader.notebook.gradebook import import_scores, notebook_scores

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


def test_the_class_view_shows_each_notebook_question_from_the_gradebook(tmp_path):
    """After autograde, class.html and class.csv carry each question's points from the
    gradebook: who has full marks and who not, beside the protocol's scenarios."""
    course = tmp_path / "course"
    make_course(course)
    nbgrader(course, "generate_assignment", "comn", "--force")
    for student, answer in (("ada", "answer = 42"), ("bob", "answer = 41")):
        submitted = course / "submitted" / student / "comn"
        submitted.mkdir(parents=True)
        nb = nbformat.read(course / "release" / "comn" / "sheet.ipynb", as_version=4)
        nb.cells[0].source = answer
        nbformat.write(nb, submitted / "sheet.ipynb")
    nbgrader(course, "autograde", "comn", "--create")
    results = [result("ada", "Ada Lovelace", [2.0, 1.0]), result("bob", "", [0.0, 2.0])]
    for r in results:
        for s in r["scenarios"]:
            s.update(part=1, passed=s["score"] == s["max_score"])
    import_scores(str(course), "comn", results)

    scores = notebook_scores(str(course), "comn")
    assert scores == {"sheet": {"test_answer": {"max": 3.0, "scores": {"ada": 3.0, "bob": 0.0}}}}
    write_class_view(results, str(tmp_path), 1.0, None, scores)
    rows = {r["scenario"]: r for r in csv.DictReader(open(tmp_path / "class.csv"))}
    q = rows["sheet/test_answer"]
    assert (q["part"], q["points"], q["failed_students"]) == ("notebook", "3.0", "bob")
    assert (q["passed"], q["failed"]) == ("1", "1")
    page = (tmp_path / "class.html").read_text()
    assert "<h2>Notebook questions</h2>" in page and "<td>test_answer</td><td>3</td><td>1.5</td>" in page
    assert "<td>3 / 3</td>" in page and "<td>0 / 3</td>" in page  # each student's notebook total
