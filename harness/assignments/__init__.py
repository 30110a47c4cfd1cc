"""What each course assignment's notebook measures: one small module per assignment
(comn, tcp_like, multihoming, gbn_vs_tcp, stop_and_wait_crc), read by the one notebook runtime (harness/notebook.py).

An `Assignment` names the results sheet whose sweeps the notebook runs on the student's
own programs (its `build(folder, plan, backend, seed=...)`: the same link, cells and seeds as
`rdtlab sheet NAME --impl DIR`), a plan per notebook mode, and its measured questions:
which sweep, which parameters and metrics become the table's columns, and which of the
student's files it runs. Model answers the hidden tests compare with are plain functions
of the assignment's module (`lab.models`).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Question:
    params: dict          # sweep parameter -> table column
    metrics: dict         # sweep field -> table column
    title: str
    programs: tuple = ()  # the student's files this question runs
    # cells whose figures the machine's timing decides more than the programs do (a timer
    # racing the round trip): never drawn for re-measurement, like CPU-heavy cells
    timing_bound: Callable[[dict], bool] | None = None


@dataclass(frozen=True)
class Assignment:
    name: str
    sheet: Callable                       # the sheet's build(folder, plan, backend, seed=) -> Sheet
    plans: dict                           # mode ("quick", "full", "tiny") -> the sheet's plan
    questions: dict                       # question (= sweep name) -> Question
    sizes: tuple = ("size",)              # plan fields that RDTLAB_NOTEBOOK_SIZE sets
    tolerance: dict = field(default_factory=dict)     # metric -> absolute slack of the re-measurement rule
    models: object = None                 # module with the model answers (lab.models)


MODULES = {"comn": "comn", "tcp-like": "tcp_like", "multihoming": "multihoming", "gbn-vs-tcp": "gbn_vs_tcp",
           "stop-and-wait-crc": "stop_and_wait_crc"}


def get(name: str) -> Assignment:
    """The assignment called `name` (one line naming the known ones otherwise)."""
    if name not in MODULES:
        raise ValueError(f"no assignment {name!r}; the course has {', '.join(MODULES)}")
    return importlib.import_module(f"harness.assignments.{MODULES[name]}").ASSIGNMENT
