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
    skipped: dict[str, str] = field(default_factory=dict)  # section title -> reason
    interrupted: bool = False

    def rows(self, sweep: str) -> pd.DataFrame:
        return self.frames.get(sweep, pd.DataFrame())


@dataclass
class Table:
    title: str
    build: Callable[[Results], pd.DataFrame]  # cells already formatted as text
    note: str = ""


@dataclass
class Plot:
    title: str
    filename: str  # PNG file name in the sheet's directory
    draw: Callable[[Results, object], None]  # (results, matplotlib Axes)
    note: str = ""


@dataclass
class Prompt:
    question: str
    answer: Callable[[Results], str]  # discussion text, numbers filled in


Block = Union[Table, Plot, Prompt, str]  # a str is a paragraph


@dataclass
class Deferred:
    """A sweep whose cells depend on what other sweeps measured (say, the best window
    of a tuning sweep): `build` makes it from their rows once they have run, so its
    cells (and the results file's keys) hold the values chosen."""

    name: str  # the built sweep's name
    after: tuple[str, ...]  # the sweeps it needs
    build: Callable[[dict[str, pd.DataFrame]], Sweep]


@dataclass
class Section:
    title: str
    sweeps: list[Sweep | Deferred]
    blocks: list[Block]
    unavailable: str | None = None  # why this section cannot run here


@dataclass
class Sheet:
    name: str
    title: str
    intro: list[str]
    sections: list[Section]

    @property
    def sweeps(self) -> list[Sweep]:
        """The sweeps to run (a Deferred one once built by `measure`)."""
        return [s for sec in self.sections if not sec.unavailable for s in sec.sweeps if isinstance(s, Sweep)]

    @property
    def deferred(self) -> list[Deferred]:
        return [s for sec in self.sections if not sec.unavailable for s in sec.sweeps if isinstance(s, Deferred)]

    def resolve(self, frames: dict[str, pd.DataFrame]) -> list[Sweep]:
        """Build every Deferred sweep from `frames`, in place; returns the built ones."""
        built = []
        for sec in self.sections:
            for i, s in enumerate(sec.sweeps):
                if isinstance(s, Deferred) and not sec.unavailable:
                    sweep = s.build(frames)
                    if sweep.name != s.name:
                        raise ValueError(f"deferred sweep {s.name!r} was built as {sweep.name!r}")
                    sec.sweeps[i] = sweep
                    built.append(sweep)
        return built


def measure(
    sheet: Sheet, *, jobs: int | None, results_path: str, progress: bool = True, cpu_budget: float | None = None
) -> Results:
    """Run (or resume) every sweep of the sheet. Ctrl-C stops the runs and returns what
    was measured, with `interrupted` set, so the sheet can still be rendered.

    With Deferred sweeps it goes in two steps: first the sweeps they need, then those
    built from their rows together with all the others (one pool, longest first)."""
    results = Results(skipped={s.title: s.unavailable for s in sheet.sections if s.unavailable})
    extra = {} if cpu_budget is None else {"cpu_budget": cpu_budget}
    needed = {name for d in sheet.deferred for name in d.after}
    first = [s for s in sheet.sweeps if s.name in needed]
    try:
        if first:
            results.frames = run_sweeps(
                first,
                jobs=jobs,
                results_path=results_path,
                progress=progress,
                desc=f"{sheet.name} ({', '.join(s.name for s in first)})",
                **extra,
            )
        sheet.resolve(results.frames)
        rest = [s for s in sheet.sweeps if s.name not in needed]
        results.frames.update(
            run_sweeps(rest, jobs=jobs, results_path=results_path, progress=progress, desc=sheet.name, **extra)
        )
    except SweepInterrupted as e:
        results.frames.update(e.frames)
        results.interrupted = True
    return results
