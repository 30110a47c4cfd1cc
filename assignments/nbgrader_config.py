"""nbgrader configuration of the rdtlab course (nbgrader 0.9). Run nbgrader's commands
from this directory: `nbgrader generate_assignment comn`, `nbgrader autograde comn`, ...
(assignments/README.md has the whole workflow)."""

import os

from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, DeduplicateIds, OverwriteKernelspec

import assignments
from grader.notebook.restorecells import RestoreCells

c = get_config()  # noqa: F821 (nbgrader provides it)

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "rdtlab"
# The harness keeps each folder's measurements in .rdtlab/ (a resumable cache): never
# release or collect it, so a grade comes from fresh runs of the student's programs.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".rdtlab"]

# The student's programs are what the notebook measures: autograde must keep the
# submitted ones, not put the starter code back (nbgrader overwrites non-notebook
# files with the source versions unless told otherwise). A missing program stays
# missing, and the questions that need it score zero.
# Each assignment's folder names them (assignments/<name>/__init__.py: PROGRAMS).
c.Autograde.exclude_overwriting = {name: list(a.programs) for name, a in assignments.by_name().items()}

# What students do to a notebook: a deleted cell is put back, a changed grade_id restored
# from the cell id, an edited read-only cell graded as handed out, each said in one line
# (grader/notebook/restorecells.py: nbgrader 0.9's own OverwriteCells fails the whole submission
# on a changed grade_id, and does not put back a deleted read-only cell).
c.Autograde.sanitize_preprocessors = [ClearOutput, DeduplicateIds, OverwriteKernelspec, RestoreCells, CheckCellMetadata]
c.OverwriteCells.add_missing_cells = True  # what nbgrader does alone: a missing test cell put back

# Measured cells run transfers for up to a few minutes (full mode); a hung program is
# stopped by the harness's own time limits, this is the last resort.
c.Execute.timeout = 1800

# Grading runs the quick sheet unless the instructor says otherwise
# (RDTLAB_NOTEBOOK_MODE=full nbgrader autograde comn): the kernel inherits this.
os.environ.setdefault("RDTLAB_NOTEBOOK_MODE", "quick")

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
