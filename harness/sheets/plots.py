"""Plot pieces the sheets share: measured means with their 95% margins, model lines."""
from __future__ import annotations

import math


def errorbar(ax, xs: list, summary: dict, keys: list[tuple], colour: str, label: str) -> None:
    """Means of `summary` ({key: cell summary}) at xs, with the 95% margin as error bars;
    cells not measured (or every run failed) are left out."""
    points = [(x, summary[k]["mean"], summary[k]["margin"]) for x, k in zip(xs, keys)
              if k in summary and summary[k]["n"]]
    if not points:
        return
    x, y, e = zip(*points)
    e = [v if math.isfinite(v) else 0 for v in e]
    ax.errorbar(x, y, yerr=e, fmt="o-", color=colour, ms=4, capsize=3, label=label)


def legend(ax, **kw) -> None:
    """A legend if anything was drawn (a sheet whose runs all failed draws nothing)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=kw.pop("fontsize", 8), **kw)


def minmax(ax, xs: list, summary: dict, keys: list[tuple], colour: str, label: str, shift: float = 0.0) -> None:
    """Means of `summary` at xs (moved by `shift`, so series side by side stay apart),
    with bars from the least to the greatest run: seed 001's average, min and max."""
    points = [(x + shift, summary[k]["mean"], summary[k]["min"], summary[k]["max"]) for x, k in zip(xs, keys)
              if k in summary and summary[k]["n"]]
    if not points:
        return
    x, y, lo, hi = zip(*points)
    ax.errorbar(x, y, yerr=[[m - a for m, a in zip(y, lo)], [b - m for m, b in zip(y, hi)]], fmt="o-",
                color=colour, ms=4, capsize=3, label=label)
