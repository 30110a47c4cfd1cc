"""A submission's scenarios in lanes, graded side by side where the grading pool has room.

A part whose programs hang with the same partner stops being run after
grade.TIMEOUTS_BEFORE_SKIP hangs, counted per (part, meet): the scenarios of one
(part, meet), in the battery's order, decide among themselves which of them run. That
is a lane, and lanes are independent: graded one after another or side by side, each
scenario gets the same grade.

The submission's own thread grades the lanes in order. While the pool has a spare
transfer (grade.BUDGET, when a pool grades several submissions), a helper thread
grades the next lane beside it in a jail of its own: its own uid, so the kill after
each scenario reaches only its processes, and its own copy of the built submission
as it was before any scenario ran. A class's tail, where fewer submissions are left
than the pool has room for, and a student whose programs hang on every time limit
then finish sooner.
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
from collections import deque
from contextlib import AbstractContextManager
from typing import Callable

from grader.protocol.battery import Scenario


def lanes_of(scenarios: list[Scenario]) -> list[list[Scenario]]:
    """The scenarios grouped by (part, meet), each group in the battery's order, the
    groups in the order of their first scenario."""
    lanes: dict[tuple, list[Scenario]] = {}
    for scenario in scenarios:
        lanes.setdefault((scenario.part, scenario.meet), []).append(scenario)
    return list(lanes.values())


def copy_built(folder: str, scratch: str, uid: int | None = None) -> str:
    """A copy of the built submission `folder` at `scratch`/sub, owned by `uid` (None:
    by this process, out of the jails' reach): its folders, regular files and symbolic
    links (not followed), never a FIFO, socket or device its build may have made, nor a
    `__pycache__` (the jail compiles its own)."""

    def skipped(where: str, names: list[str]) -> set[str]:
        out = {"__pycache__"} & set(names)
        for name in names:
            mode = os.lstat(os.path.join(where, name)).st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                out.add(name)
        return out

    os.chmod(scratch, 0o711 if uid is not None else 0o700)  # a jail may pass through, not list
    dest = os.path.join(scratch, "sub")
    shutil.copytree(folder, dest, symlinks=True, ignore=skipped)
    if uid is None:
        return dest
    for root, dirs, files in os.walk(dest):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, uid)
    os.chown(dest, uid, uid)
    return dest


def grade_lanes(
    lanes: list[list[Scenario]],
    grade: Callable[[Scenario, object, dict], dict],
    side,
    jail: Callable[[], AbstractContextManager],
    budget=None,
) -> dict[str, dict]:
    """Each scenario's record, by name: `grade(scenario, side, timeouts)` grades one in
    `side`'s jail (`timeouts`: its lane's hangs so far). This thread grades the lanes in
    order in `side`; with a `budget` (grade.Budget), whenever it has a spare transfer
    after a scenario, a helper takes the next lane in the side `jail()` makes for it."""
    queue, lock = deque(lanes), threading.Lock()
    records: dict[str, dict] = {}
    helpers: list[threading.Thread] = []
    failures: list[BaseException] = []

    def run(lane: list[Scenario], where) -> None:
        timeouts: dict = {}
        for scenario in lane:
            records[scenario.name] = grade(scenario, where, timeouts)
            offer()

    def helper(lane: list[Scenario]) -> None:
        try:
            with jail() as where:
                run(lane, where)
        except BaseException as e:  # raised again in the submission's thread
            failures.append(e)
        finally:
            budget.give()

    def offer() -> None:
        while budget is not None and not failures:
            with lock:
                if not queue or not budget.take(spare_only=True):
                    return
                thread = threading.Thread(target=helper, args=(queue.popleft(),), name="lane")
                helpers.append(thread)
                thread.start()  # under the lock: joined only once started

    try:
        offer()
        while not failures:
            with lock:
                lane = queue.popleft() if queue else None
            if lane is None:
                break
            run(lane, side)
    finally:
        with lock:
            queue.clear()  # helpers still running take no more
        while True:
            with lock:
                if not helpers:
                    break
                thread = helpers.pop()
            thread.join()
    if failures:
        raise failures[0]
    return records
