"""nbgrader's OverwriteCells, made safe for what students do to a notebook before
autograde (the course's `nbgrader_config.py` puts it in OverwriteCells' place).

nbgrader 0.9 alone:
- a cell whose nbgrader `grade_id` the student changed (JupyterLab's property inspector
  shows it) makes autograde fail for the whole submission (KeyError 'grade_id' in
  OverwriteCells.add_missing_grade_cells): the student gets nothing;
- a deleted read-only cell that is not graded (the set-up, a measurement) is not put
  back, so every answer after it fails; a deleted answer cell whose test was deleted too
  makes add_missing_grade_cells fail (KeyError) for the whole submission;
- every test cell with hidden tests is reported as "changed" (its checksum in the
  gradebook includes the hidden tests the student never saw), so the log cannot tell an
  edited read-only cell from an honest one.

Here, before nbgrader's own checks, each cell gets back the nbgrader metadata the
gradebook has for it: a changed `grade_id` is restored from the cell's id (the course's
notebooks give each nbgrader cell the id of its grade_id); a cell neither names is the
student's own, ungraded, and the assignment's cell is put back. Every missing
assignment cell (read-only, answer stub, test, discussion) is put back after the cell
that precedes it in the assignment. A read-only cell runs as handed out: an edit is
undone and reported. Each fault is one warning line in the autograde log and one line
at the top of the cell in the graded notebook (so the feedback shows it too).
"""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell
from nbgrader.api import Gradebook
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells

NOTE = "rdtlab autograde: "


class RestoreCells(OverwriteCells):
    """OverwriteCells after repairing changed ids, deleted cells and edited read-only cells."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            source = gb.find_notebook(info["notebook"], info["assignment"])
            points = {c.name: c.max_score for c in source.grade_cells}
            answers = {c.name for c in source.solution_cells}
            cells = [
                dict(name=c.name, cell_type=c.cell_type, locked=c.locked, source=c.source, checksum=c.checksum)
                for c in source.source_cells
            ]
        self.expected = {
            c["name"]: {
                **c,
                "grade": c["name"] in points,
                "points": points.get(c["name"]),
                "solution": c["name"] in answers,
            }
            for c in cells
        }
        self.order = [c["name"] for c in cells]  # the assignment's order (nbgrader's add_missing relies on it too)
        self.notes: dict[str, str] = {}
        self._repair_ids(nb)
        self._undo_edits(nb)
        self._restore_missing(nb)
        nb, resources = super().preprocess(nb, resources)
        self._annotate(nb)
        return nb, resources

    # ---- the steps -----------------------------------------------------------------------

    def _repair_ids(self, nb) -> None:
        present = {_grade_id(c) for c in nb.cells} - {None}
        for cell in nb.cells:
            name = _grade_id(cell)
            if name is None or name in self.expected:
                continue
            if cell.get("id") in self.expected and cell.get("id") not in present:
                self._warn(cell.id, f"its grade_id was changed to {name!r}; restored from the cell id")
                present.add(cell.id)
            else:
                self.log.warning(
                    "%scell %r is not in the assignment (a changed id?): graded as the "
                    "student's own cell, and the assignment's cell put back",
                    NOTE,
                    name,
                )
                del cell.metadata["nbgrader"]
                continue
            cell.metadata.nbgrader["grade_id"] = cell.id

    def _undo_edits(self, nb) -> None:
        """Every assignment cell gets the gradebook's metadata back; a read-only cell its
        source (silently when it is the released source, i.e. without the hidden tests)."""
        for cell in nb.cells:
            name = _grade_id(cell)
            if name not in self.expected:
                continue
            want = self.expected[name]
            cell.metadata.nbgrader = _metadata(want)
            if want["locked"] and cell.source not in (want["source"], _released(want)):
                self._warn(name, "this read-only cell was edited in the submission; graded as handed out")
            if want["locked"]:
                cell.source = want["source"]

    def _restore_missing(self, nb) -> None:
        at = {_grade_id(c): i for i, c in enumerate(nb.cells)}
        missing = [n for n in self.order if n not in at]
        for name in missing:
            self._warn(name, "this cell was missing from the submission; put back as handed out")
        # each missing cell goes after the nearest assignment cell before it that is there
        # (before the first one there, if none precedes it: the set-up needs the parameters)
        for name in missing:
            before = [n for n in self.order[: self.order.index(name)] if n in at]
            after = [n for n in self.order[self.order.index(name) :] if n in at]
            index = at[before[-1]] + 1 if before else (at[after[0]] if after else len(nb.cells))
            nb.cells.insert(index, _cell(self.expected[name]))
            at = {_grade_id(c): i for i, c in enumerate(nb.cells)}

    def _annotate(self, nb) -> None:
        for cell in nb.cells:
            note = self.notes.get(_grade_id(cell))
            if note:
                line = f"# {NOTE}{note}" if cell.cell_type == "code" else f"*{NOTE}{note}*\n"
                cell.source = f"{line}\n{cell.source}"

    def _warn(self, name: str, what: str) -> None:
        self.log.warning("%scell %s: %s", NOTE, name, what)
        self.notes[name] = what


def _grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _metadata(want: dict) -> dict:
    m = {
        "cell_type": want["cell_type"],
        "grade": want["grade"],
        "grade_id": want["name"],
        "locked": want["locked"],
        "schema_version": 3,
        "solution": want["solution"],
        "checksum": want["checksum"],
    }
    if want["grade"]:
        m["points"] = want["points"]
    return m


def _cell(want: dict):
    make = new_code_cell if want["cell_type"] == "code" else new_markdown_cell
    cell = make(
        want["source"],
        metadata={"nbgrader": _metadata(want), "deletable": False, **({} if want["solution"] else {"editable": False})},
    )
    cell.id = want["name"]
    return cell


def _released(want: dict) -> str:
    """The source the student was given: the gradebook's, without its hidden tests."""
    cell = new_code_cell(want["source"], metadata={"nbgrader": _metadata(want)})
    ClearHiddenTests().preprocess_cell(cell, {}, 0)
    return cell.source
