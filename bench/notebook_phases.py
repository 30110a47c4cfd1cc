"""Where one jailed notebook autograde spends its time.

    python -m bench notebook_phases [--mode tiny|quick]   (as root: the jail, netns)

One course (tests/course's helpers: the comn release), one student handing in the
reference programs; `grader.notebook.autograde.autograde_students` at --jobs 1, then the phases:
nbgrader's autograde of the notebook (the kernel in the jail), each measured cell's time
in the kernel (nbclient's execution timestamps), and the grader's re-measurement outside
the kernel (grader/notebook/remeasure.py), with the children's CPU-seconds.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from datetime import datetime


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench notebook_phases")
    p.add_argument("--mode", choices=("tiny", "quick"), default="tiny")
    return p


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    from assignments import course_copy as C
    import nbformat
    from grader.notebook.autograde import autograde_students
    from grader.protocol.planted import reference_submission
    from bench.notebooks import machine_cpu_s
    from bench._own_cpu import OwnCpu

    root = tempfile.mkdtemp(prefix="rdtlab-bench-course-", dir="/opt")  # /opt: a folder the jail shows
    os.chmod(root, 0o755)
    try:
        started = time.monotonic()
        course = C.make_course(root)
        print(f"course made (nbgrader generate_assignment): {time.monotonic() - started:.1f} s")
        dest = os.path.join(course, "submitted", "ann", "comn")
        os.makedirs(os.path.dirname(dest))
        C.student_folder(course, dest, programs=None)
        reference_submission(dest, who="Ann s0000001")
        with C.environment(RDTLAB_NOTEBOOK_MODE=args.mode), OwnCpu() as own:
            before, began, busy = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic(), machine_cpu_s()
            [result] = autograde_students(course, "comn", ["ann"], jobs=1)
            after, busy = resource.getrusage(resource.RUSAGE_CHILDREN), machine_cpu_s() - busy
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        print(
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {args.mode} mode, load "
            f"{os.getloadavg()[0]:.1f}: autograde {result.seconds:.1f} s, re-measurement "
            f"{result.remeasure_seconds:.1f} s, {time.monotonic() - began:.1f} s in all; children "
            f"{cpu:.1f} CPU-s, this process {time.process_time():.1f} CPU-s; the machine busy {busy:.1f} CPU-s "
            f"(the jailed kernel's processes are killed, not reaped: the children's figure misses them); "
            + (
                f"the grading's own processes {own.seconds:.1f} CPU-s (its cpuacct group); "
                if own.seconds is not None
                else ""
            )
            + result.remeasure_line()
        )
        for verdict in result.remeasured:  # the grader's runs per cell: how many rounds it took
            for line in verdict.figures:
                print(f"  {line}")
        nb = nbformat.read(os.path.join(course, "autograded", "ann", "comn", C.NOTEBOOK), as_version=4)
        total = 0.0
        for cell in nb.cells:
            ex = cell.get("metadata", {}).get("execution", {})
            if "iopub.execute_input" in ex and "shell.execute_reply" in ex:
                took = (
                    datetime.fromisoformat(ex["shell.execute_reply"].replace("Z", "+00:00"))
                    - datetime.fromisoformat(ex["iopub.execute_input"].replace("Z", "+00:00"))
                ).total_seconds()
                total += took
                if took >= 0.5:
                    print(f"  cell {cell.get('id')}: {took:.1f} s")
        print(f"  cells in all: {total:.1f} s (the rest of the autograde: the kernel's start, nbgrader)")
        return 0 if result.ok else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)
