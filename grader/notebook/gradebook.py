"""Write protocol scores into an nbgrader course's gradebook, beside the notebook
scores, so `nbgrader export` gives one total per student and assignment; and the
scores the grader decides for notebook cells itself (the re-measured cells,
grader/notebook/remeasure.py), over what the student's kernel gave them.

The assignment gets a notebook `protocol` (no .ipynb behind it) with one grade cell
per scenario; each student's submission of the assignment gets a graded copy of it
(auto_score = the scenario's points). Re-importing overwrites the same grades.
"""

from __future__ import annotations

import os
import re

from harness.procs import UsageError

PROTOCOL_NOTEBOOK = "protocol"


def gradebook_url(course_dir: str) -> str:
    """The course's db_url as its nbgrader_config.py sets it, else nbgrader's default
    (gradebook.db in the course root)."""
    from traitlets.config.loader import PyFileConfigLoader

    if not os.path.isdir(course_dir):
        raise UsageError(f"nbgrader course folder not found: {course_dir}")
    root = os.path.abspath(course_dir)
    if os.path.exists(os.path.join(course_dir, "nbgrader_config.py")):
        config = PyFileConfigLoader("nbgrader_config.py", path=root).load_config().CourseDirectory
        if "db_url" in config:
            return config.db_url
        root = config.root if "root" in config else root
    return f"sqlite:///{os.path.join(root, 'gradebook.db')}"


def import_scores(course_dir: str, assignment: str, results: list[dict]) -> None:
    from nbgrader.api import Gradebook, Grade, MissingEntry, SubmittedNotebook

    with Gradebook(gradebook_url(course_dir)) as gb:
        gb.update_or_create_assignment(assignment)
        notebook = gb.update_or_create_notebook(PROTOCOL_NOTEBOOK, assignment)
        names = []
        for r in results:
            for s in r["scenarios"]:
                if s["name"] not in names:
                    names.append(s["name"])
                    gb.update_or_create_grade_cell(
                        s["name"], PROTOCOL_NOTEBOOK, assignment, max_score=s["max_score"], cell_type="code"
                    )
        for r in results:
            first, _, last = (r.get("name") or "").partition(" ")
            gb.update_or_create_student(r["student"], **({"first_name": first, "last_name": last} if first else {}))
            try:
                submission = gb.find_submission(assignment, r["student"])
            except MissingEntry:
                submission = gb.add_submission(assignment, r["student"])
            try:
                nb = gb.find_submission_notebook(PROTOCOL_NOTEBOOK, assignment, r["student"])
            except MissingEntry:
                nb = SubmittedNotebook(notebook=notebook, assignment=submission)
                gb.db.add(nb)
            have = {g.cell_id: g for g in nb.grades}
            for s in r["scenarios"]:
                cell = gb.find_grade_cell(s["name"], PROTOCOL_NOTEBOOK, assignment)
                grade = have.get(cell.id) or Grade(cell_id=cell.id, notebook=nb)
                grade.auto_score = s["score"]
                gb.db.add(grade)
            gb.db.commit()


def set_cell_scores(course_dir: str, assignment: str, student: str, scores: dict[tuple[str, str], bool]) -> None:
    """{(notebook, grade_id): passed} as the cells' autograded scores, full points or none,
    over nbgrader's (a cell the gradebook has no grade of, nbgrader having failed that
    notebook, is left alone)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(gradebook_url(course_dir)) as gb:
        for (notebook, grade_id), passed in scores.items():
            try:
                grade = gb.find_grade(grade_id, notebook, assignment, student)
            except MissingEntry:
                continue
            grade.auto_score = grade.max_score if passed else 0.0
            gb.db.add(grade)
        gb.db.commit()


def notebook_scores(course_dir: str, assignment: str) -> dict:
    """Each autograded notebook's score per question, as the gradebook holds them
    (nbgrader's, or the grader's over a re-measured cell): {notebook: {question: {"max":
    points, "scores": {student: points}}}}, the protocol's own notebook left out."""
    from nbgrader.api import Gradebook, MissingEntry

    out: dict = {}
    with Gradebook(gradebook_url(course_dir)) as gb:
        try:
            found = gb.find_assignment(assignment)
        except MissingEntry:
            return out
        for nb in found.notebooks:
            if nb.name != PROTOCOL_NOTEBOOK:
                out[nb.name] = {c.name: {"max": c.max_score, "scores": {}} for c in nb.grade_cells}
        for submission in found.submissions:
            for nb in submission.notebooks:
                for grade in nb.grades if nb.name in out else ():
                    question = out[nb.name].setdefault(grade.name, {"max": grade.max_score, "scores": {}})
                    question["scores"][submission.student.id] = grade.score
    return {name: dict(sorted(questions.items(), key=_question_order)) for name, questions in sorted(out.items())}


def _question_order(item) -> tuple:
    """By the question's number (q1_..., test_q7_...), then its name: the notebook's order,
    which the gradebook does not keep."""
    found = re.search(r"q(\d+)", item[0])
    return (int(found.group(1)) if found else 1 << 30, item[0])
