"""Helpers the sheets share: cell summaries by parameters, formatting, and the
"measurement next to its model" table every sheet question uses."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

from harness.experiments.sweep import summarize_cells

DASH = "–"


def fmt(x, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return DASH
    return f"{x:,.{digits}f}"


def fmt_error(model: float, measured: float) -> str:
    """Model error relative to the measurement, signed: +20% = model 20% too high."""
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (model, measured)) or measured == 0:
        return DASH
    return f"{(model - measured) / measured * 100:+.0f}%"


def cells(frame: pd.DataFrame, params: list[str], metric: str) -> dict[tuple, dict]:
    """{(param values...): summary row} for one metric of one sweep."""
    if frame is None or frame.empty or any(p not in frame for p in params):
        return {}
    table = summarize_cells(frame, params, metric)
    return {tuple(row[p] for p in params): row for row in table.to_dict("records")}


def mean_of(summary: dict[tuple, dict], key: tuple) -> float:
    row = summary.get(key)
    return row["mean"] if row and row["n"] else float("nan")


@dataclass
class Metric:
    label: str  # column header, with unit
    column: str  # field of the sweep rows
    digits: int = 1
    models: list[tuple[str, Callable[[dict], float]]] = field(default_factory=list)  # (header, f(cell))


def comparison_table(
    frame: pd.DataFrame, cell_list: list[dict], params: list[tuple[str, str]], metrics: list[Metric]
) -> pd.DataFrame:
    """One row per cell: the parameters, then for each metric the mean, its 95% margin
    and each model's value with its error; then how many runs succeeded. A cell whose
    every run failed says so in place of the mean, with the reason."""
    names = [p for _, p in params]
    headers = [label for label, _ in params] + [h for m in metrics for h in (m.label, *(n for n, _ in m.models))]
    if len(set(headers)) != len(headers):
        raise ValueError(f"comparison_table: column headers must differ: {headers}")
    summaries = {
        m.column: cells(frame, names, m.column) if frame is not None and m.column in frame else {} for m in metrics
    }  # a column no run produced: "not measured", not "FAILED"
    rows = []
    for cell in cell_list:
        key = tuple(cell[p] for p in names)
        row = {label: cell[p] for label, p in params}
        first = None
        for m in metrics:
            s = summaries[m.column].get(key)
            first = first or s
            if s is None:
                row[m.label], row[f"{m.label} ±95%"] = "not measured", DASH
            elif s["status"] == "failed":
                row[m.label], row[f"{m.label} ±95%"] = f"FAILED: {(s['error'] or '')[:90]}", DASH
            else:
                row[m.label], row[f"{m.label} ±95%"] = fmt(s["mean"], m.digits), fmt(s["margin"], m.digits)
            for header, model in m.models:
                value = model(cell)
                row[header] = fmt(value, m.digits)
                row[f"{header} error"] = fmt_error(value, s["mean"] if s is not None and s["n"] else float("nan"))
        row["runs ok"] = runs_text(first)
        rows.append(row)
    return pd.DataFrame(rows)


def runs_text(s: dict | None) -> str:
    if s is None:
        return "0"
    total = s["n"] + s["failed"]
    text = f"{s['n']}/{total}"
    if s["failed"] and s["status"] != "failed":
        text += f" ({s['error'][:60]})"
    return text


@dataclass
class Reported:
    """A number a course report gives for a setting the sheet reproduces."""

    setting: str  # what was measured, in words
    value: float  # the report's number
    ours: Callable[["pd.DataFrame"], dict | None]  # frame -> our cell summary (mean, margin, n), or None
    source: str = ""  # where in the report (table, figure, text)


def reported_table(
    frames: dict, entries: list[Reported], unit: str, digits: int = 1, tolerance: float = 0.15
) -> pd.DataFrame:
    """The report's numbers beside ours: ratio ours/report, and whether the difference
    exceeds `tolerance` (the sheet must then explain it)."""
    rows = []
    for e in entries:
        s = e.ours(frames)
        mean = s["mean"] if s and s.get("n") else float("nan")
        ratio = mean / e.value if math.isfinite(mean) and e.value else float("nan")
        rows.append(
            {
                "setting": e.setting,
                f"report ({unit})": fmt(e.value, digits),
                f"ours ({unit})": fmt(mean, digits),
                "±95%": fmt(s["margin"], digits) if s and s.get("n") else DASH,
                "runs": s["n"] if s else 0,
                "ours / report": fmt(ratio, 2),
                f"differs > {tolerance:.0%}": (
                    DASH if not math.isfinite(ratio) else ("yes" if abs(ratio - 1) > tolerance else "no")
                ),
                "source": e.source,
            }
        )
    return pd.DataFrame(rows)


def minmax_table(
    series: list[tuple[str, pd.DataFrame]],
    rows: list[tuple[str, tuple]],
    params: list[str],
    metric: str,
    digits: int = 2,
) -> pd.DataFrame:
    """One row per (label, key of `params`) in `rows`; for each (name, frame) in `series`
    the average, min and max of `metric` over its runs and how many succeeded (seed
    001's figures as a table). A cell whose every run failed says so, with the reason."""
    summaries = [(name, cells(frame, params, metric)) for name, frame in series]
    out = []
    for label, key in rows:
        row = {"setting": label}
        for name, summary in summaries:
            s = summary.get(key)
            if s is None or not s["n"]:
                row[f"{name} avg"] = "not measured" if s is None else f"FAILED: {(s['error'] or '')[:90]}"
                row[f"{name} min"] = row[f"{name} max"] = DASH
            else:
                row[f"{name} avg"] = fmt(s["mean"], digits)
                row[f"{name} min"], row[f"{name} max"] = fmt(s["min"], digits), fmt(s["max"], digits)
            row[f"{name} runs ok"] = runs_text(s)
        out.append(row)
    return pd.DataFrame(out)
