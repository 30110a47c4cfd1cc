"""The kit's figures in a real Jupyter kernel: at their own size, in the
formats the inline backend shows; a plain Figure still as the inline backend shows it."""

import base64
import struct

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.timeout(120)

# Two figures with the same content (a constrained layout, a legend outside the axes),
# one the kit's (LaidOut), one a plain Figure.
MAKE = """
from matplotlib.figure import Figure
from harness.plots.inline import LaidOut
def make(cls):
    fig = cls(figsize=(4, 3), dpi=50, layout="constrained")
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_xlabel("time")
    return fig
"""


def run_cells(*sources: str) -> list:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    return nb.cells


def png_size(b64: str) -> tuple[int, int]:
    png = base64.b64decode(b64)
    return struct.unpack(">II", png[16:24])


def results(cell) -> dict:
    return next(o for o in cell.outputs if o.output_type == "execute_result").data


def test_the_kits_figure_is_shown_at_its_own_size():
    cells = run_cells(MAKE, "make(LaidOut)", "make(Figure)")
    ours, plain = results(cells[1]), results(cells[2])
    assert png_size(ours["image/png"]) == (200, 150), "the whole canvas: 4 x 3 inches at 50 dpi"
    assert png_size(plain["image/png"]) != (200, 150), "a plain Figure keeps the inline backend's tight box"


def test_the_kits_figure_follows_the_inline_backends_formats():
    cells = run_cells(MAKE, "%config InlineBackend.figure_formats = ['svg']", "make(LaidOut)")
    shown = results(cells[2])
    assert "image/svg+xml" in shown and "image/png" not in shown, list(shown)
