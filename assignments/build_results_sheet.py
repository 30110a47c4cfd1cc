"""Writes source/<name>/results_sheet.ipynb for every assignment of the course (or the
ones named), the results sheets as nbgrader notebooks.

    python assignments/build_results_sheet.py [NAME ...] [--check]

The notebooks are generated so that they can be reviewed as text: each cell is one call
in results_sheets/<name>.py (questions, points, reference answers, marking notes), with
the cells the sheets share in results_sheets/builder.py. Re-run after editing; `--check`
says which committed notebook differs from what this writes (tests/course checks it).
"""
from __future__ import annotations

import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from results_sheets import ASSIGNMENTS  # noqa: E402
from results_sheets.builder import text as notebook_text  # noqa: E402
from results_sheets.comn import SOLUTIONS  # noqa: E402,F401  (comn's reference answers, for tests/course)

NOTEBOOK = "results_sheet.ipynb"


def module(name: str):
    return importlib.import_module(f"results_sheets.{ASSIGNMENTS[name]}")


def target(name: str) -> str:
    return os.path.join(HERE, "source", name, NOTEBOOK)


def solutions(name: str) -> dict:
    """The reference answers of assignment `name`, by grade_id."""
    return module(name).build().solutions


def text(name: str = "comn") -> str:
    return notebook_text(module(name).build())


TARGET = target("comn")


def main(argv: list[str]) -> int:
    check = "--check" in argv
    names = [a for a in argv if a != "--check"] or list(ASSIGNMENTS)
    unknown = [n for n in names if n not in ASSIGNMENTS]
    if unknown:
        print(f"no assignment {', '.join(unknown)}; the course has {', '.join(ASSIGNMENTS)}", file=sys.stderr)
        return 2
    stale = []
    for name in names:
        path = target(name)
        if check:
            with open(path) as f:
                if f.read() != text(name):
                    stale.append(name)
                    print(f"{path} differs from what {os.path.basename(__file__)} writes")
            continue
        with open(path, "w") as f:
            f.write(text(name))
        print(f"wrote {path}")
    if check and not stale:
        print("up to date")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
