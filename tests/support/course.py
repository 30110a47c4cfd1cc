"""What the course tests share: the course's copy and students' folders
(assignments/course_copy.py, which the benchmarks use too), notebooks executed by a real
kernel (nbclient), and what the gradebook and the autograded notebooks say."""

from __future__ import annotations

import os

import nbformat

from assignments import build_results_sheet  # noqa: F401 (the course tests' C.build_results_sheet)
from assignments.course_copy import (  # noqa: F401 (the course tests' names)
    REPO,
    ASSIGNMENTS,
    REFERENCE,
    NOTEBOOK,
    SOLUTIONS,
    BIN,
    TINY,
    DISCUSSIONS,
    env,
    nbgrader,
    make_course,
    student_folder,
    answer_cells,
    set_parameter,
    environment,
)


def execute(path: str, timeout: int = 600) -> nbformat.NotebookNode:
    """Run a notebook top to bottom in a real kernel (errors recorded, not raised)."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    with environment():
        NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": os.path.dirname(path)}},
        ).execute()
    nbformat.write(nb, path)
    return nb


def errors(nb: nbformat.NotebookNode) -> dict[str, str]:
    """{cell id: 'Ename: value'} of every cell that raised."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                out[cell.get("id")] = f"{o['ename']}: {o['evalue']}"
    return out


def text_output(nb: nbformat.NotebookNode, cell_id: str) -> str:
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    parts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            parts.append(o["text"])
        elif "data" in o:
            parts.append(o["data"].get("text/plain", ""))
    return "".join(parts)


def autograded_scores(course: str, assignment: str, student: str) -> dict[str, tuple[float, float]]:
    """{grade_id: (auto score, max)} of a student's autograded cells, from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + os.path.join(course, "gradebook.db"), course_id="rdtlab") as gb:
        nb = gb.find_submission_notebook(NOTEBOOK[:-6], assignment, student)
        return {g.name: (g.auto_score, g.max_score) for g in nb.grades if g.auto_score is not None}


def notebook_verdicts(course: str, assignment: str, student: str) -> list[tuple[str, bool, str]]:
    """(grade_id, full marks, the assertion it raised) of each autograded cell, the
    verdicts tests.support.grading.lost_points reads: a re-measured cell the machine
    disturbed on every try raised "not graded: ..." (grader.notebook.remeasure.NOT_GRADED)."""
    nb = nbformat.read(os.path.join(course, "autograded", student, assignment, NOTEBOOK), as_version=4)
    raised = {cell: error.removeprefix("AssertionError: ") for cell, error in errors(nb).items()}
    return [
        (cell, score == most, raised.get(cell, ""))
        for cell, (score, most) in autograded_scores(course, assignment, student).items()
    ]


def scores(course: str) -> dict[str, dict[str, float]]:
    """{student: {grade_id: autograded score}} from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    out: dict[str, dict[str, float]] = {}
    with Gradebook("sqlite:///" + os.path.join(course, "gradebook.db"), course_id="rdtlab") as gb:
        for student in gb.students:
            nb = gb.find_submission_notebook(NOTEBOOK[:-6], "comn", student.id)
            out[student.id] = {g.name: g.auto_score for g in nb.grades}
    return out
