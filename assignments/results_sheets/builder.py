"""What every results-sheet notebook is made of: cells with their nbgrader roles, and
the patterns the sheets repeat (a measured question with its table answer and tests).

Cell roles (nbgrader 0.9 metadata, schema_version 3):
  locked   read-only code the student runs (measurements, set-up)
  answer   autograded answer: the student writes it (the source holds the solution)
  test     autograded test: visible asserts, then `### BEGIN HIDDEN TESTS` ones
  manual   a discussion the instructor grades (the source holds the marking notes)
"""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

# Kernel TCP's congestion control, a parameter of the student's (harness/backends/tcp.py
# pins it in the namespaces, whatever the machine's default).
TCP_CC_LINE = (
    '\nTCP_CC = "cubic"  # kernel TCP\'s congestion control: "cubic" (Linux\'s default), '
    '"reno" (what Mathis and PFTK model) or "bbr"'
)


def meta(kind: str, grade_id: str, points: float = 0) -> dict:
    roles = {
        "locked": (False, False, True),
        "answer": (False, True, False),
        "test": (True, False, True),
        "manual": (True, True, False),
    }
    grade, solution, locked = roles[kind]
    m = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution}
    if grade:
        m["points"] = points
    return {"nbgrader": m}


class Notebook:
    """Cells in order. `solutions` and `marking` hold, by grade_id, the reference answers
    and the marking notes; answers written with a solution record it in `solutions`."""

    def __init__(self, solutions: dict | None = None, marking: dict | None = None):
        self.cells = []
        self.solutions = dict(solutions or {})
        self.marking = dict(marking or {})

    def md(self, text: str, kind: str | None = None, grade_id: str | None = None, points: float = 0):
        cell = new_markdown_cell(text.strip("\n"), metadata=meta(kind, grade_id, points) if kind else {})
        self._add(cell, grade_id)

    def code(
        self,
        source: str,
        kind: str | None = None,
        grade_id: str | None = None,
        points: float = 0,
        tags: list | None = None,
    ):
        metadata = meta(kind, grade_id, points) if kind else {}
        if tags:
            metadata["tags"] = tags
        self._add(new_code_cell(source.strip("\n"), metadata=metadata), grade_id)

    def answer(self, grade_id: str, prompt: str, solution: str | None = None):
        """An autograded answer: a comment saying what to set, then the solution region."""
        if solution is not None:
            self.solutions[grade_id] = solution.strip("\n")
        self.code(f"{prompt}\n### BEGIN SOLUTION\n{self.solutions[grade_id]}\n### END SOLUTION", "answer", grade_id)

    def test(self, grade_id: str, points: float, visible: str, hidden: str = ""):
        source = visible
        if hidden:
            source += f"\n### BEGIN HIDDEN TESTS\n{hidden}\n### END HIDDEN TESTS"
        self.code(source, "test", grade_id, points)

    def discussion(self, grade_id: str, points: float, notes: str | None = None):
        if notes is not None:
            self.marking[grade_id] = notes.strip("\n")
        self.md(
            "### BEGIN SOLUTION\n**Marking notes** (instructors only; "
            f"{points:g} marks)\n\n{self.marking[grade_id]}\n### END SOLUTION",
            "manual",
            grade_id,
            points,
        )

    # ---- patterns the sheets share ---------------------------------------------------

    def setup(self, assignment: str, mode_note: str = ""):
        """The parameters the student may set (the mode; kernel TCP's congestion control
        where the sheet runs kernel TCP) and the lab over the notebook's folder. The
        parameters cell is the student's to edit, the set-up cell is locked; the grader
        reads TCP_CC (grader.notebook.notebook_jail.asked_tcp_cc) and measures kernel TCP with it."""
        from harness.assignments import get
        from harness.backends.tcp import runs_kernel_tcp

        tcp = runs_kernel_tcp(get(assignment).sheet)
        self.code(
            'MODE = "quick"   # "quick" or "full"; the environment variable RDTLAB_NOTEBOOK_MODE overrides it'
            + (TCP_CC_LINE if tcp else "")
            + (f"\n# {mode_note}" if mode_note else ""),
            tags=["parameters"],
        )
        self.code(
            f"""
from harness import notebook as nb   # the rdtlab harness: measurements, tables, plots
lab = nb.Lab(MODE, "{assignment}"{", tcp_cc=TCP_CC" if tcp else ""})   # your programs: the folder of this notebook
lab
""",
            "locked",
            "setup",
        )

    def measured(self, q: str, plot: bool = True, show: str | None = None):
        """The locked cell that measures question q: `<q>_measured`, its plot, its table."""
        self.code(
            f'{q}_measured = lab.measure("{q}")\n' + (f'lab.plot("{q}")\n' if plot else "") + (show or f"{q}_measured"),
            "locked",
            f"{q}_measure",
        )

    def table_answer(
        self,
        q: str,
        columns: str,
        table_points: float = 1,
        remeasure_points: float = 3,
        k: int = 2,
        label: str | None = None,
    ):
        """`<q>_table`, its visible test (columns, units, a row per cell, every run done)
        and, with remeasure_points, its hidden re-measurement of k cells. `label` names
        the question where the sheet numbers them ("Question 1"); else q names it."""
        self.md(
            f"Set `{q}_table` to the table you report{f' for {label}' if label else ''}: a DataFrame with the "
            f"columns of `{q}_measured` ({columns})."
        )
        self.answer(f"{q}_answer", f"# {q}_table = ...", f"{q}_table = {q}_measured")
        self.test(f"test_{q}_table", table_points, f'nb.assert_table("{q}", nb.given("{q}_table", globals()), lab)')
        if remeasure_points:
            self.test(
                f"test_{q}_remeasured",
                remeasure_points,
                f"# Grading re-runs a sample of your {label or q} cells with your programs and checks your numbers.",
                f'nb.assert_supported(lab, "{q}", nb.given("{q}_table", globals()), k={k})',
            )

    def _add(self, cell, grade_id):
        cell["id"] = grade_id or f"cell-{len(self.cells):02d}"
        self.cells.append(cell)

    def notebook(self) -> nbformat.NotebookNode:
        notebook = new_notebook(
            cells=self.cells,
            metadata={
                "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            },
        )
        nbformat.validate(notebook)
        return notebook


def text(nb: Notebook) -> str:
    return nbformat.writes(nb.notebook()) + "\n"
