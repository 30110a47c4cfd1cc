"""What students do to a notebook, autograded by the real nbgrader (one submission that
carries the faults at once, so the course pays for one autograde): deleted cells, an
edited read-only cell, changed cell ids, a hung program. Each fault is one line in the
autograde log and in the graded notebook; the student loses what depends on it only,
and nothing is left running. nbgrader 0.9 alone fails this whole submission (a changed
grade_id: KeyError 'grade_id'); the course's RestoreCells (grader/notebook/restorecells.py) is
what grades it."""

from __future__ import annotations

import os
import shutil
import subprocess

import nbformat
import pytest

from tests.support import course as C

HERE = os.path.dirname(os.path.abspath(__file__))
HUNG_SENDER = os.path.join(HERE, "students", "hung_sr", "Sender4.py")
STUDENT = "tamperer"

# grade_id -> what the student did to that cell
DELETED = ("setup", "test_q1_table", "q7_answer", "test_q7_table")
EDITED = {"q3_measure": '\nq3_measured["throughput_kBps"] *= 2   # "better numbers"'}
RENAMED = {"test_q3_bdp": "my_bdp_test"}  # the grade_id only (the cell id says the old one)
RENAMED_BOTH = {"test_q8_mathis": "my_mathis"}  # grade_id and cell id: the student's own cell now
NEW_CELL_ID = {"q5_answer": "my-q5"}  # the cell id only: nbgrader does not use it

# What the student loses: Q5 (the hung Sender4.py) and Q7's test (its answer was deleted,
# so it is put back as the unanswered stub). Everything else keeps its points.
LOSES = {"test_q5_table", "test_q5_remeasured", "test_q7_table"}
LOG = {
    "setup": "this cell was missing from the submission; put back as handed out",
    "test_q1_table": "this cell was missing from the submission; put back as handed out",
    "q7_answer": "this cell was missing from the submission; put back as handed out",
    "test_q7_table": "this cell was missing from the submission; put back as handed out",
    "test_q8_mathis": "this cell was missing from the submission; put back as handed out",
    "q3_measure": "this read-only cell was edited in the submission; graded as handed out",
    "test_q3_bdp": "its grade_id was changed to 'my_bdp_test'; restored from the cell id",
}


def tamper(path: str) -> None:
    nb = nbformat.read(path, as_version=4)
    kept = []
    for cell in nb.cells:
        name = cell.metadata.get("nbgrader", {}).get("grade_id")
        if name in DELETED:
            continue
        cell.source += EDITED.get(name, "")
        if name in RENAMED or name in RENAMED_BOTH:
            cell.metadata.nbgrader["grade_id"] = {**RENAMED, **RENAMED_BOTH}[name]
        if name in RENAMED_BOTH or name in NEW_CELL_ID:
            cell.id = {**RENAMED_BOTH, **NEW_CELL_ID}[name]
        kept.append(cell)
    nb.cells = kept
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def tampered(course, tmp_path_factory):
    """The course's release and gradebook copied (the class graded elsewhere is not
    touched), one tampered submission, `nbgrader autograde` for that student."""
    mine = str(tmp_path_factory.mktemp("faults") / "course")
    os.makedirs(mine)
    shutil.copy(os.path.join(course, "nbgrader_config.py"), mine)
    for part in ("source", "release"):
        shutil.copytree(os.path.join(course, part), os.path.join(mine, part))
    shutil.copy(os.path.join(course, "gradebook.db"), mine)
    programs = str(tmp_path_factory.mktemp("programs"))
    for name in os.listdir(C.REFERENCE):
        if name[0] in "SR":
            shutil.copy(os.path.join(C.REFERENCE, name), programs)
    shutil.copy(HUNG_SENDER, programs)
    folder = C.student_folder(course, os.path.join(mine, "submitted", STUDENT, "comn"), programs=programs)
    tamper(os.path.join(folder, C.NOTEBOOK))
    done = C.nbgrader(mine, "autograde", "comn", "--student", STUDENT)
    graded = nbformat.read(os.path.join(mine, "autograded", STUDENT, "comn", C.NOTEBOOK), as_version=4)
    return mine, done.stderr, graded


@pytest.mark.netns
@pytest.mark.timeout(600)
def test_student_loses_only_what_depends_on_the_fault(tampered):
    points = autograded_points(tampered[0])
    got = {cell: C.scores(tampered[0])[STUDENT].get(cell) for cell in points}
    assert got == {cell: 0.0 if cell in LOSES else p for cell, p in points.items()}


def autograded_points(course: str) -> dict[str, float]:
    """{test cell: its points}, from the gradebook (the discussions are graded by hand)."""
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + os.path.join(course, "gradebook.db"), course_id="rdtlab") as gb:
        nb = gb.find_notebook(C.NOTEBOOK[:-6], "comn")
        manual = {c.name for c in nb.solution_cells}
        return {c.name: float(c.max_score) for c in nb.grade_cells if c.name not in manual}


@pytest.mark.netns
def test_autograder_says_each_fault_in_one_line(tampered):
    _, log, nb = tampered
    ours = sorted(line.split("rdtlab autograde: ", 1)[1] for line in log.splitlines() if "rdtlab autograde: " in line)
    assert ours == sorted(
        [f"cell {name}: {what}" for name, what in LOG.items()]
        + [
            "cell 'my_mathis' is not in the assignment (a changed id?): graded as the student's own cell, "
            "and the assignment's cell put back"
        ]
    ), log[-3000:]
    # nbgrader's own checksum warnings are gone: untouched test cells (their hidden tests
    # differ from what the student was given) are not reported as changed
    assert "has changed" not in log and "does not exist in the database" not in log
    # the graded notebook (and so the feedback) starts each repaired cell with its line
    notes = {
        c.metadata.get("nbgrader", {}).get("grade_id"): c.source.split("\n", 1)[0]
        for c in nb.cells
        if c.source.startswith("# rdtlab autograde: ")
    }
    assert notes == {name: f"# rdtlab autograde: {what}" for name, what in LOG.items()}
    q3 = next(c for c in nb.cells if c.get("id") == "q3_measure")
    assert "*= 2" not in q3.source, "the edited read-only cell runs as handed out"
    # the hung program: one line in the question's output and in its test
    out = C.text_output(nb, "q5_measure")
    assert "had failed runs" in out and "no progress" in out and "never sent a packet" in out, out[-800:]
    picture = C.text_output(nb, "q5_picture")
    assert "this transfer failed: stopped: no progress" in picture and "Warning" not in picture, picture
    errors = C.errors(nb)
    assert set(errors) == {"test_q5_table", "test_q5_remeasured", "q7_answer", "test_q7_table"}, errors
    assert "Q5 window=1 had 2 failed and 0 good runs" in errors["test_q5_table"]
    assert "q7_table is not set" in errors["test_q7_table"]
    assert all("\n" not in line for line in errors.values())


@pytest.mark.netns
def test_hung_program_left_nothing_running(tampered):
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert tampered[0] not in ps  # the programs run from the autograded folder, inside it
