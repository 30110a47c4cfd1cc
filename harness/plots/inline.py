"""The kit's figures in Jupyter, at their own size.

The inline backend shows a Figure with `bbox_inches="tight"`: after a first drawing
without rendering, it finds the bounding box of everything on the figure, then draws it
again cropped. The kit's figures (`LaidOut`) keep every label inside their canvas by
constrained layout, so they are shown at their own size, without that search and the
instructions it costs (BENCHMARKS.md, "Notebooks"), in every kernel and graded notebook.
Only the bounding box changes: the format, dpi and colours stay the inline backend's
(what `%config InlineBackend` set), and a student's own figures are untouched.
"""

from __future__ import annotations

import sys
from functools import partial

from matplotlib.figure import Figure

# the mime types the inline backend may show a Figure as (IPython.core.pylabtools)
MIMES = ("image/png", "image/jpeg", "image/svg+xml", "application/pdf")


class LaidOut(Figure):
    """A Figure whose layout engine keeps every label inside it (make it with
    layout="constrained"); in an IPython kernel it is shown without the tight bounding box."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        register()


def _running_shell():
    """The running IPython's shell, or None (IPython is not imported outside a kernel)."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def show(fig: Figure) -> None:
    """Show `fig` in the running kernel, as pyplot's show() does with the inline
    backend; nothing outside one."""
    if _running_shell() is not None:
        from IPython.display import display

        display(fig)


def register() -> bool:
    """Show LaidOut figures without the tight bounding box in the running IPython, if
    any; whether there was one. Registering again is harmless."""
    formatters = getattr(getattr(_running_shell(), "display_formatter", None), "formatters", None)
    if not formatters:
        return False
    try:  # the inline backend registers its Figure formats when its module loads (pyplot loads it lazily)
        import matplotlib_inline.backend_inline  # noqa: F401
    except ImportError:
        pass
    for mime in MIMES:
        if mime in formatters:
            formatters[mime].for_type(LaidOut, partial(_as_inline, formatters[mime]))
    return True


def _as_inline(formatter, fig: Figure):
    """`fig` as the inline backend prints a Figure in this format, without its tight
    bounding box; None when the backend does not show figures in this format."""
    try:
        inline = formatter.lookup_by_type(Figure)
    except KeyError:
        return None
    if isinstance(inline, partial):
        return partial(inline.func, *inline.args, **{**inline.keywords, "bbox_inches": None})(fig)
    return inline(fig)
