"""Writes source/<name>/results_sheet.ipynb for every assignment of the course (or the
ones named), the results sheets as nbgrader notebooks.

    python assignments/build_results_sheet.py [NAME ...] [--check] [--course DIR]

The notebooks are generated so that they can be reviewed as text: each cell is one call
in <folder>/notebook.py of the assignment (questions, points, reference answers, marking
notes), with the cells the sheets share in results_sheets/builder.py. An assignment that
keeps its starter programs in its own folder (<folder>/starter/) has them copied beside
its notebook. Re-run after editing; `--check` says which committed notebook differs from
what this writes (tests/course checks it). `--course DIR`: another course directory
(its source/<name>/) than this one.
"""

from __future__ import annotations

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the kit, when run as a script

import assignments  # noqa: E402
from assignments.results_sheets.builder import text as notebook_text  # noqa: E402

NOTEBOOK = "results_sheet.ipynb"


def module(name: str):
    return assignments.get(name).notebook()


def target(name: str, course: str = HERE) -> str:
    return os.path.join(course, "source", name, NOTEBOOK)


def solutions(name: str) -> dict:
    """The reference answers of assignment `name`, by grade_id."""
    return module(name).build().solutions


def text(name: str) -> str:
    return notebook_text(module(name).build())


def write(name: str, course: str = HERE) -> str:
    """source/<name>/ of `course`: the notebook, and the starter programs of the
    assignment's folder if it keeps them there."""
    path = target(name, course)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    starter = os.path.join(assignments.get(name).folder, "starter")
    if os.path.isdir(starter):
        shutil.copytree(
            starter, os.path.dirname(path), dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    with open(path, "w") as f:
        f.write(text(name))
    return path


def main(argv: list[str]) -> int:
    check = "--check" in argv
    argv = [a for a in argv if a != "--check"]
    course = HERE
    if "--course" in argv:
        at = argv.index("--course")
        if at + 1 >= len(argv):
            print("--course needs a directory", file=sys.stderr)
            return 2
        course = os.path.abspath(argv[at + 1])
        del argv[at : at + 2]
    known = assignments.names()
    names = argv or known
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"no assignment {', '.join(unknown)}; the course has {', '.join(known)}", file=sys.stderr)
        return 2
    stale = []
    for name in names:
        if check:
            path = target(name, course)
            with open(path) as f:
                if f.read() != text(name):
                    stale.append(name)
                    print(f"{path} differs from what {os.path.basename(__file__)} writes")
            continue
        print(f"wrote {write(name, course)}")
    if check and not stale:
        print("up to date")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
