"""The course's assignments: one folder each, found by scanning this package (no list to
keep). An assignment is a package `assignments/<snake_name>/` holding

    __init__.py    NAME (the course's name, e.g. "tcp-like") and the program contract:
                   PROGRAMS, the student's files (the starter programs in source/NAME/,
                   kept from a submission by nbgrader's autograde); REFERENCE, the
                   package of reference/ whose programs keep the same contract
    sheet.py       its results sheet (`rdtlab sheet NAME`): build(impl, plan, backend, ...),
                   QUICK and FULL plans, missing_programs(impl) -> the files impl lacks
    spec.py        its notebook's measurements: ASSIGNMENT (harness.assignments.Assignment:
                   questions, plans per mode with the tests' tiny one, slack, model answers)
    notebook.py    its notebook's cells (build() -> results_sheets.builder.Notebook), with
                   the reference answers and marking notes: the instructor's, never shown
                   to a student's kernel
    battery.toml   its grader battery, if the programs are graded on one (grader/protocol/battery.py)

and nbgrader's course layout beside them (source/NAME/: the notebook that
build_results_sheet.py writes and the starter programs). Folders named in
RDTLAB_ASSIGNMENTS_PATH (os.pathsep-separated) are searched after this one, so a course can
keep its own assignments outside the kit. assignments/README.md adds one, step by step.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from dataclasses import dataclass

PATH_ENV = "RDTLAB_ASSIGNMENTS_PATH"


@dataclass(frozen=True)
class Entry:
    """One assignment's folder: its parts are imported when asked for."""

    name: str  # the course's name: tcp-like
    package: str  # the Python package: assignments.tcp_like
    folder: str
    programs: tuple  # the student's files (PROGRAMS)
    reference: str  # reference/<reference>/: the reference's programs with this contract

    def sheet(self):
        """The results sheet's module (sheet.py)."""
        return importlib.import_module(f"{self.package}.sheet")

    def spec(self):
        """The notebook's measurements: a harness.assignments.Assignment (spec.py)."""
        return importlib.import_module(f"{self.package}.spec").ASSIGNMENT

    def notebook(self):
        """The notebook's cells' module (notebook.py: build() -> Notebook)."""
        return importlib.import_module(f"{self.package}.notebook")

    @property
    def battery(self) -> str | None:
        path = os.path.join(self.folder, "battery.toml")
        return path if os.path.isfile(path) else None


def _search_path() -> list[str]:
    """This package's folder, then RDTLAB_ASSIGNMENTS_PATH's (added to the package's
    __path__, so `assignments.<snake_name>` imports from there too)."""
    for folder in os.environ.get(PATH_ENV, "").split(os.pathsep):
        folder = os.path.abspath(folder) if folder else ""
        if folder and folder not in __path__:
            __path__.append(folder)
    return list(__path__)


def by_name() -> dict[str, Entry]:
    """name -> Entry of every assignment found, by name."""
    found: dict[str, Entry] = {}
    for info in pkgutil.iter_modules(_search_path(), f"{__name__}."):
        if not info.ispkg:
            continue
        module = importlib.import_module(info.name)
        name = getattr(module, "NAME", None)
        if name is None or name in found:  # the builder's machinery (results_sheets); a name taken
            continue
        found[name] = Entry(
            name,
            info.name,
            os.path.dirname(module.__file__),
            tuple(getattr(module, "PROGRAMS", ())),
            getattr(module, "REFERENCE", ""),
        )
    return dict(sorted(found.items()))


def names() -> list[str]:
    return list(by_name())


def get(name: str) -> Entry:
    """The assignment called `name` (a one-line error naming the known ones otherwise)."""
    found = by_name()
    if name not in found:
        raise ValueError(f"no assignment {name!r}; the course has {', '.join(found)}")
    return found[name]
