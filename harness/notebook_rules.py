"""The rules a course notebook's answers are graded by, as pure functions of tables:
the shape of a reported table (`check_table`), the re-measurement rule (`rule`,
`accepted_range`, `judge`), and the one the answers derived from a student's own table
use (`acceptable_best`, which an assignment's spec.py applies to its own columns, e.g.
comn's optimal timeout and peak window). No `Lab`, no runs: harness/notebook.py measures
and calls these, and so does the grader (grader/notebook/remeasure.py), outside the kernel;
tests/harness/test_notebook_rules.py checks them on synthetic tables.

A question is an assignment's `Question` (harness/assignments; each assignment's
assignments/<name>/spec.py declares its own: its params and metrics, each sweep field ->
table column, and the student's programs it runs); cells are the sweep's dicts of parameters.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import pandas as pd

from harness.assignments import Question

# ---- the re-measurement rule ------------------------------------------------------------

# Runs with the same seeds can still differ by a timeout or two (timing decides which
# packet meets which loss), most on the tiny files of quick grading: hence a factor, and
# an absolute slack per metric (the assignment's `tolerance`).
FACTOR = 1.5
REMEASURE_RULE = (
    f"Rule: a sample of your cells, drawn by the grader after your notebook ran, is re-run with your "
    f"programs on the same link and seeds{{reruns}}, in the grader's jail outside your notebook; a "
    f"reported mean passes when it lies between the lowest of those runs divided by {FACTOR:g} and the "
    f"highest times {FACTOR:g}, give or take"
)
# How often the grader runs each seed, round by round, while a reported mean falls
# outside the runs so far: once, then once more, then twice (four runs of it in all). A
# mean passes inside the range of all the runs made, and more runs only widen it, so a
# table passes exactly when it would on four runs a seed (as with the two rounds of two
# this replaced), and one run that the machine's timing decided (a timeout cascade)
# never stands alone against a failing figure; an honest table mostly passes on the
# first round, on half the runs.
RERUN_ROUNDS = (1, 1, 2)
UNITS = {
    "goodput_kBps": "KB/s",
    "retransmissions": "retransmissions",
    "wire_time_s": "s",
    "total_s": "s",
    "queue_delay_mean_ms": "ms of queueing delay",
    "goodput_mbps": "Mbit/s",
    "rtt_ms": "ms",
    "delay_var_ms": "ms",
    "resends_per_packet": "resends per packet",
}


def rule(tolerance: dict, rounds: tuple[int, ...] = RERUN_ROUNDS, shown: tuple[str, ...] = ()) -> str:
    """REMEASURE_RULE with how often each seed runs, the assignment's slack per metric,
    and the columns it shows but does not judge (Question.shown)."""
    slack = [f"{tol:g} {UNITS.get(m, m)}" for m, tol in tolerance.items()]
    made = list(itertools.accumulate(rounds))
    text = REMEASURE_RULE.format(
        reruns=""
        if made == [1]
        else f" (each seed {_times(made[0])}, and again while a reported mean falls outside the "
        f"runs so far: {', then '.join(_times(n) for n in made[1:])} in all)"
    )
    text = f"{text} {', '.join(slack) or 'nothing'}."
    if shown:
        text += (
            f" {', '.join(shown)} {'is' if len(shown) == 1 else 'are'} re-measured and shown, not judged: "
            f"the machine's scheduling decides {'it' if len(shown) == 1 else 'them'} more than your programs do."
        )
    return text


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def accepted_range(values: list[float], tol: float = 0.0) -> tuple[float, float]:
    """The reported means the runs support (REMEASURE_RULE), `tol` the metric's slack."""
    return min(values) / FACTOR - tol, max(values) * FACTOR + tol


# How a reported number misses what the fresh runs support (`Miss.how`).
ABOVE, BELOW, FAILED, MISSING = "above", "below", "failed", "missing"


@dataclass(frozen=True)
class Miss:
    """A reported number the fresh runs cannot support: the line the student reads, the
    sweep cell and metric, and how it misses: ABOVE or BELOW the accepted range, FAILED
    (the programs fail there when re-run) or MISSING (nothing reported)."""

    text: str
    cell: dict
    metric: str
    how: str


def runs_of(frame: pd.DataFrame, question: Question, cell: dict) -> pd.DataFrame:
    """The runs of `frame` in `cell` (all of its parameters equal)."""
    runs = frame
    for p in question.params:
        runs = runs[runs[p] == cell[p]] if p in runs else runs.iloc[0:0]
    return runs


def judge(
    q: str, question: Question, tolerance: dict, reported: pd.DataFrame, cells: list[dict], frame: pd.DataFrame
) -> tuple[list[str], list[str]]:
    """(one line per reported number the fresh runs in `frame` cannot support, one line
    per cell and metric with the fresh figures): `misses`, as the student reads them."""
    found, figures = misses(q, question, tolerance, reported, cells, frame)
    return [m.text for m in found], figures


def misses(
    q: str, question: Question, tolerance: dict, reported: pd.DataFrame, cells: list[dict], frame: pd.DataFrame
) -> tuple[list[Miss], list[str]]:
    """(each reported number the fresh runs in `frame` cannot support, one line per cell
    and metric with the fresh figures). Only these runs set the accepted range;
    `tolerance` is the assignment's slack per metric; the question's `shown` metrics are
    shown, not judged."""
    spec = question
    found, figures = [], []
    for cell in cells:
        key = {col: cell[p] for p, col in spec.params.items()}
        row = row_of(reported, key)
        runs = runs_of(frame, spec, cell)
        ok = runs[runs["ok"].astype(bool)] if "ok" in runs else runs
        where = cell_text(q, spec, key)
        for metric, col in spec.metrics.items():
            value = row.get(col) if row is not None else None
            values = [float(v) for v in ok[metric] if finite(v)] if metric in ok else []
            if metric in spec.shown:  # the machine's scheduling: shown, never judged
                measured = (
                    f"{', '.join(f'{v:.1f}' for v in values)}{_unused(runs, ok, metric)}" if values else "nothing"
                )
                figures.append(f"{where}: {col} re-measured {measured} (not judged); you report {num_or(value)}")
                continue
            if not values:
                why = _first_error(runs) or "no run succeeded"
                figures.append(f"{where}: {col} not re-measured: your programs fail there ({why})")
                found.append(
                    Miss(
                        f"{where}: you report {col} {num_or(value)} but your programs fail there when re-run ({why})",
                        cell,
                        metric,
                        FAILED,
                    )
                )
                continue
            low, high = accepted_range(values, tolerance.get(metric, 0.0))
            figures.append(
                f"{where}: {col} re-measured {', '.join(f'{v:.1f}' for v in values)}"
                f"{_unused(runs, ok, metric)} (accepted {low:.1f}–{high:.1f}); you report {num_or(value)}"
            )
            if row is None or not finite(value):
                found.append(Miss(f"{where}: no {col} reported", cell, metric, MISSING))
            elif not low <= float(value) <= high:
                found.append(
                    Miss(
                        f"{where}: you report {col} {float(value):.1f}, re-measured "
                        f"{min(values):.1f}–{max(values):.1f} over {len(values)} runs "
                        f"(accepted {low:.1f}–{high:.1f})",
                        cell,
                        metric,
                        ABOVE if float(value) > high else BELOW,
                    )
                )
    return found, figures


def _unused(runs: pd.DataFrame, ok: pd.DataFrame, metric: str) -> str:
    """ ", and N more runs that failed (the first error)" when some runs gave no figure:
    the accepted range comes from the others, and the feedback says so."""
    failed = len(runs) - len(ok)
    blank = sum(1 for v in ok[metric] if not finite(v)) if metric in ok else len(ok)
    if not failed and not blank:
        return ""
    first = _first_error(runs)
    why = f": {first}" if first else ""
    parts = ([f"{failed} run{'s' * (failed > 1)} failed{why}"] if failed else []) + (
        [f"{blank} gave no figure"] if blank else []
    )
    return f" (and {'; '.join(parts)})"


def _first_error(runs: pd.DataFrame) -> str | None:
    """The first error of the runs that failed (None when none says why)."""
    if "error" not in runs:
        return None
    failed = runs[~runs["ok"].astype(bool)] if "ok" in runs else runs
    err = failed["error"].dropna()
    return err.iloc[0] if len(err) else None


# ---- reading tables ----------------------------------------------------------------------


def finite(v) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int too large for a float
        return False


def num_or(v) -> str:
    return f"{float(v):.1f}" if finite(v) else "nothing"


def row_of(table: pd.DataFrame, key: dict) -> dict | None:
    rows = table
    for col, v in key.items():  # a parameter is a number, or a text such as a netem rule
        rows = rows[
            (rows[col].astype(str) == v) if isinstance(v, str) else (pd.to_numeric(rows[col], errors="coerce") == v)
        ]
    return rows.iloc[0].to_dict() if len(rows) else None


def num(v) -> str:
    return f"{v:g}" if isinstance(v, (int, float)) else (str(v) or "none")


def columns_of(question: Question) -> list[str]:
    """The columns of a question's table, in order."""
    return [
        *question.params.values(),
        *(c for m in question.metrics.values() for c in (m, f"{m}_ci95")),
        "runs",
        "failed",
    ]


def cell_text(q: str, question: Question, key) -> str:
    """'Q3 delay_ms=25 window=8': a cell of question q by its table's columns."""
    items = dict(key)
    return f"{q.upper()} " + " ".join(f"{c}={num(items[c])}" for c in question.params.values() if c in items)


# ---- a reported table's shape -------------------------------------------------------------

# What a metric's numbers must look like: (lowest allowed, highest allowed, what to say)
RANGES = {
    "goodput_kBps": (1e-9, 1250, "must be in KB/s (0 < x <= 1250 on a 10 Mbit/s link)"),
    "retransmissions": (0, math.inf, "cannot be negative"),
    "wire_time_s": (1e-9, 3600, "must be in seconds (0 < x <= 3600)"),
    "queue_delay_mean_ms": (0, 1000, "must be in ms (0 <= x <= 1000)"),
    "total_s": (1e-9, 36000, "must be in seconds (0 < x <= 36000)"),
    "goodput_mbps": (1e-9, 10, "must be in Mbit/s (0 < x <= 10 on a 10 Mbit/s link)"),
    "rtt_ms": (0, 10000, "must be in ms (0 <= x <= 10000)"),
    "delay_var_ms": (0, 10000, "must be in ms (0 <= x <= 10000)"),
    "resends_per_packet": (0, math.inf, "cannot be negative"),
}


def check_table(
    q: str, table, question: Question, cells: list[dict] | None = None, not_here: str | None = None
) -> list[str]:
    """One line per thing wrong with a reported table: type, columns, cells, units, gaps.
    `cells`: the question's cells, each of which needs a row with complete runs (None:
    the table's shape only); `not_here`: why a question with no programs of the
    student's (kernel TCP, iperf3) has no runs here, so only its table's shape counts."""
    name = f"{q}_table"
    spec = question
    expected = columns_of(spec)
    if table is None:
        return [f"{name} is not set: run its answer cell (does it still raise NotImplementedError?)"]
    if not isinstance(table, pd.DataFrame):
        return [f"{name} must be a pandas DataFrame, got {type(table).__name__}"]
    missing = [c for c in expected if c not in table.columns]
    if missing:
        return [f"{name} lacks the columns {', '.join(missing)} (expected {', '.join(expected)})"]
    problems = []
    text_params = {
        col for p, col in spec.params.items() if cells is not None and any(isinstance(c.get(p), str) for c in cells)
    }
    for col in expected:
        if col not in text_params and not pd.api.types.is_numeric_dtype(table[col]):
            problems.append(f"{name}[{col!r}] must hold numbers, got {table[col].dtype}")
    if problems:
        return problems
    if cells is not None:
        for cell in cells:
            key = {col: cell[p] for p, col in spec.params.items()}
            row = row_of(table, key)
            if row is None:
                problems.append(f"{name} has no row for {cell_text(q, spec, key)}")
            elif not spec.programs:
                # kernel TCP (no programs of the student's): a failed run is not theirs to answer for
                if row["runs"] < 1 and not not_here:
                    problems.append(f"{name}: {cell_text(q, spec, key)} has no completed run (run its cell again)")
            elif row["failed"] > 0 or row["runs"] < 1:
                problems.append(
                    f"{name}: {cell_text(q, spec, key)} had {int(row['failed'])} failed and "
                    f"{int(row['runs'])} good runs: your programs must complete every run"
                )
    for metric, col in spec.metrics.items():
        values = pd.to_numeric(table[col], errors="coerce")
        if values.isna().any() and not not_here:
            problems.append(f"{name}[{col!r}] has cells with no number")
        low, high, say = RANGES.get(metric, (-math.inf, math.inf, ""))
        if ((values < low) | (values > high)).any():
            problems.append(f"{name}[{col!r}] {say}")
    return problems


# ---- answers derived from the student's own table --------------------------------------------


def acceptable_best(table: pd.DataFrame, by: list[str], metric: str, ok_rows=None) -> dict[tuple, set]:
    """Per group of `by`, the rows whose `metric` (higher is better) is within the best
    row's 95% CI (the column `<metric>_ci95`) of the best: {group: {row index}}. Answers
    that pick any of them are right."""
    out: dict[tuple, set] = {}
    groups = table.groupby(by, sort=False) if by else [((), table)]
    for key, group in groups:
        group = group[pd.to_numeric(group[metric], errors="coerce").notna()]
        if ok_rows is not None:
            group = group[ok_rows(group)]
        if group.empty:
            continue
        best = group[metric].idxmax()
        margin = group.at[best, f"{metric}_ci95"]
        margin = margin if finite(margin) else 0.0
        floor = group.at[best, metric] - margin
        out[key if isinstance(key, tuple) else (key,)] = set(group.index[group[metric] >= floor])
    return out
