"""Grade many submissions on one machine: a pool of jobs, one submission each.

A job mostly waits on timers and the link (its programs run as other processes), so
threads suffice; `jobs` is the CPU budget: how many submissions are graded at once, and
how many transfers run at once. A job starts the reference run a check compares with
beside the student's, and its next lane beside its others (grader/protocol/lanes.py),
only on a spare transfer: the pool's tail, where fewer submissions are left than
`jobs`, or a submission whose programs wait out their time limits, then finishes
sooner. Every job, and every lane, has its own jail uid, scratch folder and
namespaces, so a hostile submission cannot disturb the one graded beside it.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Callable

from grader.protocol.battery import Battery
from grader.collect import Submission
from grader.protocol import grade as grade_module
from grader.protocol.grade import Options, grade_again_alone, grade_submission

# A class waits on time limits and the link more than it computes: on two cores every
# class measured grades sooner at 6 than at 4, with the same grades (BENCHMARKS.md,
# "Grading"); what crowding fails is graded again alone.
DEFAULT_JOBS = max(1, min(6, (os.cpu_count() or 1) * 3))
# Notebooks at once, at most: each starts only while the machine has room
# (grader.disturbance.Admission: the last start 10 s old, tasks waiting for a CPU under
# 65% of the last 10 s), so the gate, not this number, sets how many run. At 4 the
# pool, not the gate, held a class's rate down
# (BENCHMARKS.md, "Notebooks").
NOTEBOOK_JOBS = 8


def grade_all(
    subs: list[Submission],
    battery: Battery,
    out_dir: str | None,
    options: Options,
    jobs: int = DEFAULT_JOBS,
    done: Callable[[dict], None] | None = None,
    battery_of: Callable[[Submission], Battery] | None = None,
) -> list[dict]:
    """Results in the order of `subs`; `done(result)` as each finishes. Scenarios the
    machine disturbed on every try, or that failed while the pool crowded the machine
    (grader/disturbance.py), are graded again at the end, one submission at a time (up to
    disturbance.AGAIN_ALONE times while the machine still disturbs them).
    `battery_of(sub)`: a submission's own selection of scenarios (the calibration's
    planted bugs), `battery` for every one if not given."""
    battery_of = battery_of or (lambda sub: battery)
    grade_module.BUDGET.size = jobs  # transfers at once, reference runs beside included
    grade_module.BUDGET.pooled = jobs > 1
    results: list = [None] * len(subs)
    if jobs <= 1:
        for k, sub in enumerate(subs):
            results[k] = grade_submission(sub, battery_of(sub), out_dir, options)
            if done and not results[k]["ungraded"]:
                done(results[k])
    else:
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="grade") as pool:
            futures = {
                pool.submit(grade_submission, sub, battery_of(sub), out_dir, options): k for k, sub in enumerate(subs)
            }
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                if done and not results[futures[future]]["ungraded"]:
                    done(results[futures[future]])
    grade_module.BUDGET.size, grade_module.BUDGET.pooled = 1, False
    try:
        for k, sub in enumerate(subs):
            if results[k]["ungraded"]:
                results[k] = grade_again_alone(sub, battery_of(sub), out_dir, options, results[k])
                if done:
                    done(results[k])
    finally:
        grade_module.BUDGET.size = jobs
    return results
