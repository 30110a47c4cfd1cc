"""What a course assignment's notebook measures, read by the one notebook runtime
(harness/notebook.py); each assignment's folder declares its own (assignments/<name>/spec.py).

An `Assignment` names the results sheet whose sweeps the notebook runs on the student's
own programs (its `build(folder, plan, backend, seed=...)`: the same link, cells and seeds as
`rdtlab sheet NAME --impl DIR`), a plan per notebook mode, and its measured questions:
which sweep, which parameters and metrics become the table's columns, and which of the
student's files it runs. Model answers the hidden tests compare with are plain functions
of the assignment's spec module (`lab.models`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Question:
    params: dict  # sweep parameter -> table column
    metrics: dict  # sweep field -> table column
    title: str
    programs: tuple = ()  # the student's files this question runs
    # cells whose figures the machine's timing decides more than the programs do (a timer
    # racing the round trip): never drawn for re-measurement, like CPU-heavy cells
    timing_bound: Callable[[dict], bool] | None = None
    # metrics the machine's scheduling decides more than the programs do (the delay
    # variation of a link that adds no jitter, from two or three round trips in quick
    # mode): re-measured and shown beside the report, never judged
    shown: tuple = ()


@dataclass(frozen=True)
class Assignment:
    name: str
    sheet: Callable  # the sheet's build(folder, plan, backend, seed=) -> Sheet
    plans: dict  # mode ("quick", "full", "tiny") -> the sheet's plan
    questions: dict  # question (= sweep name) -> Question
    sizes: tuple = ("size",)  # plan fields that RDTLAB_NOTEBOOK_SIZE sets
    tolerance: dict = field(default_factory=dict)  # metric -> absolute slack of the re-measurement rule
    models: object = None  # module with the model answers (lab.models)


def get(name: str) -> Assignment:
    """The assignment called `name`, from the course's registry (assignments/__init__.py;
    one line naming the known ones otherwise)."""
    import assignments

    return assignments.get(name).spec()
