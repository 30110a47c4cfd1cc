"""A copy of the course and students' folders made from its release, for the tests and
the benchmarks that run the course: the course directory in a temporary folder with the
comn release generated (nbgrader's own command), a student's folder with their programs
and answers, and the environment nbgrader and the kernels run in (the tiny plan)."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile

import nbformat

from assignments import build_results_sheet

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSIGNMENTS = os.path.join(REPO, "assignments")
REFERENCE = os.path.join(REPO, "reference", "comn")
NOTEBOOK = "results_sheet.ipynb"
SOLUTIONS = build_results_sheet.solutions("comn")  # comn's reference answers, by grade_id
BIN = os.path.dirname(sys.executable)

# The tiny mode (harness/notebook.py TINY: 20 KB transfers, fewer cells, 2 runs per
# cell), so a notebook runs in well under a minute and a class of two in a few.
TINY = {"RDTLAB_NOTEBOOK_MODE": "tiny"}


def env(**extra) -> dict:
    """The environment of nbgrader and the kernels: the venv first on PATH (nbgrader
    runs `alembic` by name), the tiny mode, and the caller's additions."""
    return {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), **TINY, **extra}


def nbgrader(course: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [os.path.join(BIN, "nbgrader"), *args], cwd=course, env=env(), capture_output=True, text=True, timeout=900
    )
    if check and done.returncode != 0:
        raise AssertionError(f"nbgrader {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


_generated: list[str] = []  # this test process's generated course, copied for each test


def make_course(root: str) -> str:
    """A copy of assignments/ (config and source) with the comn release generated (and
    its gradebook): generated once in a test process, then copied, since each
    `nbgrader generate_assignment` is slow and half a dozen tests make a course."""
    if not _generated:
        template = tempfile.mkdtemp(prefix="rdtlab-course-template-")
        atexit.register(shutil.rmtree, template, True)
        course = os.path.join(template, "course")
        os.makedirs(course)
        shutil.copy(os.path.join(ASSIGNMENTS, "nbgrader_config.py"), course)
        shutil.copytree(
            os.path.join(ASSIGNMENTS, "source"),
            os.path.join(course, "source"),
            ignore=shutil.ignore_patterns(".rdtlab", "__pycache__", ".ipynb_checkpoints"),
        )
        nbgrader(course, "generate_assignment", "comn", "--force")
        _generated.append(course)
    course = os.path.join(root, "course")
    shutil.copytree(_generated[0], course)
    return course


def student_folder(
    course: str, dest: str, programs: str | None = REFERENCE, answers: dict | None = None, drop: tuple = ()
) -> str:
    """A student's comn folder: the release, their programs copied over the starter
    code (minus `drop`), and their answers typed into the answer cells."""
    shutil.copytree(os.path.join(course, "release", "comn"), dest)
    if programs:
        for name in os.listdir(programs):
            if name.endswith(".py") and name[0] in "SR":
                shutil.copy(os.path.join(programs, name), dest)
    for name in drop:
        os.remove(os.path.join(dest, name))
    answer_cells(os.path.join(dest, NOTEBOOK), {**SOLUTIONS, **DISCUSSIONS, **(answers or {})})
    return dest


DISCUSSIONS = {
    q: f"My discussion of {q[:2].upper()}: the numbers in my table show ..."
    for q in ("q2_discussion", "q4_discussion", "q6_discussion", "q8_discussion")
}


def answer_cells(path: str, answers: dict) -> None:
    """Type each answer (source by grade_id) into its answer cell, as a student does."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    nbformat.write(nb, path)


def set_parameter(path: str, name: str, value: str) -> None:
    """Set `name = "value"` in the notebook's parameters cell (the student's own cell)."""
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    lines = [line for line in cell.source.splitlines() if not line.startswith(f"{name} =")]
    cell.source = "\n".join([*lines, f"{name} = {value!r}"])
    nbformat.write(nb, path)


@contextlib.contextmanager
def environment(**extra):
    """This process's environment as env() makes it (kernels and children inherit it)."""
    saved = dict(os.environ)
    os.environ.update(env(**extra))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
