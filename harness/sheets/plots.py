"""Plot pieces the sheets share: measured means with their 95% margins, model lines."""

from __future__ import annotations

import math


def errorbar(
    ax, xs: list, summary: dict, keys: list[tuple], colour: str, label: str, spread: str = "margin", shift: float = 0.0
) -> None:
    """Means of `summary` ({key: cell summary}) at xs (moved by `shift`, so series side by
    side stay apart), with bars of the 95% margin, or with spread="range" from the least
    to the greatest run (seed 001's average, min and max); cells not measured (or every
    run failed) are left out."""
    drawn = [(x + shift, summary[k]) for x, k in zip(xs, keys) if k in summary and summary[k]["n"]]
    if not drawn:
        return
    x, y = [p for p, _ in drawn], [c["mean"] for _, c in drawn]
    if spread == "range":
        yerr = [[c["mean"] - c["min"] for _, c in drawn], [c["max"] - c["mean"] for _, c in drawn]]
    else:
        yerr = [c["margin"] if math.isfinite(c["margin"]) else 0 for _, c in drawn]
    ax.errorbar(x, y, yerr=yerr, fmt="o-", color=colour, ms=4, capsize=3, label=label)


def legend(ax, **kw) -> None:
    """A legend if anything was drawn (a sheet whose runs all failed draws nothing)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=kw.pop("fontsize", 8), **kw)
