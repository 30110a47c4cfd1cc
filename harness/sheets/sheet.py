"""A results sheet as declared data: sections of sweeps, tables, plots and prompts.

A sheet module (e.g. comn.py) builds a `Sheet`; `measure` runs every sweep of it in
one pool (resumable through a JSONL file) and `render.write_sheet` turns the results
into Markdown, HTML, PNG plots and CSV. Tables, plots and prompts are functions of the
results, so a sheet renders whatever was measured: a section whose sweep could not
run, or a cell whose every run failed, is shown as such, never left out silently.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Union

import pandas as pd

from harness.experiments.sweep import Sweep, SweepInterrupted, run_sweeps


@dataclass
class Results:
    """What a sheet measured: rows per sweep name, and why a section did not run."""
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)     # section title -> reason
    interrupted: bool = False

    def rows(self, sweep: str) -> pd.DataFrame:
        return self.frames.get(sweep, pd.DataFrame())


@dataclass
class Table:
    title: str
    build: Callable[[Results], pd.DataFrame]    # cells already formatted as text
    note: str = ""


@dataclass
class Plot:
    title: str
    filename: str                                # PNG file name in the sheet's directory
    draw: Callable[[Results, object], None]      # (results, matplotlib Axes)
    note: str = ""


@dataclass
class Prompt:
    question: str
    answer: Callable[[Results], str]             # discussion text, numbers filled in


Block = Union[Table, Plot, Prompt, str]          # a str is a paragraph


@dataclass
class Section:
    title: str
    sweeps: list[Sweep]
    blocks: list[Block]
    unavailable: str | None = None               # why this section cannot run here


@dataclass
class Sheet:
    name: str
    title: str
    intro: list[str]
    sections: list[Section]

    @property
    def sweeps(self) -> list[Sweep]:
        return [s for sec in self.sections if not sec.unavailable for s in sec.sweeps]


def measure(sheet: Sheet, *, jobs: int | None, results_path: str, progress: bool = True,
            cpu_budget: float | None = None) -> Results:
    """Run (or resume) every sweep of the sheet. Ctrl-C stops the runs and returns what
    was measured, with `interrupted` set, so the sheet can still be rendered."""
    results = Results(skipped={s.title: s.unavailable for s in sheet.sections if s.unavailable})
    try:
        extra = {} if cpu_budget is None else {"cpu_budget": cpu_budget}
        results.frames = run_sweeps(sheet.sweeps, jobs=jobs, results_path=results_path,
                                    progress=progress, desc=sheet.name, **extra)
    except SweepInterrupted as e:
        results.frames, results.interrupted = e.frames, True
    return results
