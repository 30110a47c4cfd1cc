"""Helpers the tests share, as modules of one package (imported as `tests.support.<name>`;
the repository's root is on pytest's path: pyproject.toml's `pythonpath`):

    runs          the harness tests' programs (tests/fixtures) and what a run may leave behind
    engine        a running link engine and small socket utilities
    lossy_relay   an impairing UDP relay for the reference programs' tests
    course        a course directory, students' folders from its release, nbgrader's commands
    grading       the grader tests' submissions, tiny battery and grade() (tests/grader)
    containers    the Docker tests' images, commands and leftovers (tests/docker)

Fixtures stay in each folder's conftest.py, which imports what it needs from here.
"""

from pathlib import Path

# The checkout the tests run from (not harness.engine.REPO: that is where the kit is installed).
REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
