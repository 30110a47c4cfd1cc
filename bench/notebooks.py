"""Benchmark: students' notebooks autograded per hour with jailed kernels (as root).

    python -m bench.notebooks [--assignment comn] [--students 4] [--jobs 2] [--mode quick]

Makes a course in a temporary folder (assignments/' config and source, nbgrader's
release), hands in copies of the reference (grader.protocol.planted) with the reference answers
typed in, and autogrades them as `rdtlab grade --gradebook` does. Prints the wall time,
notebooks per hour, each notebook's time, the CPU a notebook cost, the host's speed (what
a start of the jails' python3 costs it, before and after) and steal, and checks each
scored every autograded point.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import nbformat

import assignments
from harness.assignments import get as get_assignment
from harness.engine import REPO
from harness.steal import cpu_times, stolen_share

from grader.notebook.autograde import autograde_students
from grader.protocol.planted import reference_submission

from bench._own_cpu import OwnCpu
from bench.starts import SYSTEM_PYTHON, cpu_ms

NOTEBOOK = "results_sheet.ipynb"


def reference_programs(assignment: str) -> tuple[str, tuple[str, ...]]:
    """The reference's package for the assignment (its folder's REFERENCE) and the
    programs its notebook measures."""
    spec = get_assignment(assignment)
    names = {p[:-3] for q in spec.questions.values() for p in q.programs}
    return assignments.get(assignment).reference, tuple(sorted(names))


def make_course(root: str, assignment: str) -> str:
    course = os.path.join(root, "course")
    os.makedirs(os.path.join(course, "source"))
    shutil.copy(os.path.join(REPO, "assignments", "nbgrader_config.py"), course)
    shutil.copytree(
        os.path.join(REPO, "assignments", "source", assignment),
        os.path.join(course, "source", assignment),
        ignore=shutil.ignore_patterns(".rdtlab", "__pycache__", ".ipynb_checkpoints"),
    )
    nbgrader = os.path.join(os.path.dirname(sys.executable), "nbgrader")
    subprocess.run(
        [nbgrader, "generate_assignment", assignment, "--force"], cwd=course, check=True, capture_output=True
    )
    return course


def hand_in(course: str, assignment: str, student: str) -> None:
    from assignments import build_results_sheet

    dest = os.path.join(course, "submitted", student, assignment)
    shutil.copytree(os.path.join(course, "release", assignment), dest)
    package, names = reference_programs(assignment)
    reference_submission(dest, names=names, who=f"Student {student} s{student}", package=package)
    path = os.path.join(dest, NOTEBOOK)
    nb = nbformat.read(path, as_version=4)
    answers = build_results_sheet.solutions(assignment)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    nbformat.write(nb, path)


def points(course: str, assignment: str, student: str) -> tuple[float, float, list[str]]:
    """(autograded points scored, out of, the tests that lost points)."""
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + os.path.join(course, "gradebook.db")) as gb:
        nb = gb.find_submission_notebook(NOTEBOOK[:-6], assignment, student)
        graded = [g for g in nb.grades if g.auto_score is not None and g.name.startswith("test_")]
        lost = [g.name for g in graded if g.auto_score < g.max_score]
        return sum(g.auto_score for g in graded), sum(g.max_score for g in graded), lost


def machine_cpu_s() -> float:
    """CPU-seconds the whole machine has spent busy (user, nice, system, irq, softirq:
    /proc/stat). Not the bench's children's rusage: a jailed kernel's processes are
    killed, not reaped through this process, so rusage misses most of a notebook's CPU."""
    user, nice, system, _idle, _iowait, irq, softirq, _steal = cpu_times()
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _most_runs(result) -> int:
    """The most runs the grader made of one re-measured cell (its figure lines list them)."""
    counts = [
        len(line.split(" re-measured ", 1)[1].split(" (", 1)[0].split(", "))
        for v in result.remeasured
        for line in v.figures
        if " re-measured " in line
    ]
    return max(counts, default=0)


START_REPS = 20


def steady_rate(finished: list[tuple[float, float]]) -> float | None:
    """Notebooks an hour while the class was in full swing: the (start, end) of each
    first-round grading; the starts from the first end to the last start, when the pool
    starts one as the machine has room for it (before the first end it fills, one start
    a settle). A class's wall time also holds that ramp and its drain (the last gradings
    alone), each about one notebook's time whatever the class's size, so a class of
    hundreds goes at about this rate; a class of 20 spends a third of its time ramping
    and draining. None when the window is shorter than two gradings."""
    if not finished:
        return None
    first_end, last_start = min(e for _, e in finished), max(s for s, _ in finished)
    starts = sorted(s for s, _ in finished if first_end <= s <= last_start)
    took = sorted(e - s for s, e in finished)[len(finished) // 2]
    if len(starts) < 3 or last_start - first_end < 2 * took:
        return None
    return 3600 * (len(starts) - 1) / (starts[-1] - starts[0])


def python_start_ms() -> float:
    """CPU-ms a start of the interpreter the jails' programs run (`python3 -c pass`): a
    yardstick of the host, which changes speed from day to day and within the hour."""
    return cpu_ms([SYSTEM_PYTHON or "python3", "-c", "pass"], START_REPS)


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench.notebooks")
    p.add_argument("--assignment", default="comn", choices=assignments.names())
    p.add_argument("--students", type=int, default=4)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--mode", default="quick", choices=("quick", "full", "tiny"))
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    os.environ["RDTLAB_NOTEBOOK_MODE"] = args.mode
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    load = os.getloadavg()[0]
    start_before = python_start_ms()
    with tempfile.TemporaryDirectory(prefix="rdt-nb-bench-") as tmp:
        course = make_course(tmp, args.assignment)
        students = [f"{k:02d}" for k in range(args.students)]
        for s in students:
            hand_in(course, args.assignment, s)
        with OwnCpu() as own:
            started, busy, steal_before = time.monotonic(), machine_cpu_s(), cpu_times()
            finished = []  # (start, end) of each grading, first round or again
            results = autograde_students(
                course,
                args.assignment,
                students,
                jobs=args.jobs,
                done=lambda r: finished.append((time.monotonic() - r.seconds - r.remeasure_seconds, time.monotonic())),
            )
            wall, busy = time.monotonic() - started, machine_cpu_s() - busy
        scores = {r.student: points(course, args.assignment, r.student) if r.ok else (0, 0, []) for r in results}
    print(
        f"notebook bench ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}): {args.students} {args.assignment} "
        f"notebooks ({args.mode}), --jobs {args.jobs}, kernels jailed"
    )
    print(
        f"  wall {wall:.0f} s = {3600 * args.students / wall:.0f} notebooks/hour; each "
        f"{', '.join(f'{r.seconds:.0f}' for r in results)} s; load average {load:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after ({os.cpu_count()} cores)"
    )
    steady = steady_rate(finished[: args.students])
    if steady is not None:
        print(
            f"  in full swing (the starts from the first notebook done to the last started): "
            f"{steady:.0f} notebooks/hour"
        )
    print(
        f"  the machine busy {busy:.0f} CPU-s = {busy / args.students:.1f} CPU-s per notebook (all its "
        f"processes, the kernel's network work included; the course's set-up excluded)"
    )
    if own.seconds is not None:
        print(
            f"  the grading's own processes {own.seconds:.0f} CPU-s = {own.seconds / args.students:.1f} CPU-s per "
            f"notebook (its cpuacct group: nothing else the machine ran; interrupt work excluded)"
        )
    print(
        f"  this host's speed: the jail's `python3 -c pass` took {start_before:.1f} CPU-ms a start before the "
        f"grading, {python_start_ms():.1f} after ({START_REPS} starts each; each of a notebook's ~138 program "
        f"starts pays it)"
    )
    steal = stolen_share(steal_before, cpu_times())
    if steal is not None:
        print(f"  the VM's host held back {steal:.1%} of the CPU time during the grading (steal)")
    print(
        f"  re-measured outside the kernels in {', '.join(f'{r.remeasure_seconds:.0f}' for r in results)} s "
        f"(included above)"
    )
    print(
        f"  the grader's runs of a re-measured cell, most per notebook (more than one a seed: a figure fell "
        f"outside the first round): {', '.join(str(_most_runs(r)) for r in results)}"
    )
    print(
        f"  tasks waiting for a CPU (share of each grading's time): "
        f"{', '.join('-' if r.cpu_waiting is None else f'{r.cpu_waiting:.0%}' for r in results)}"
    )
    for r in results:
        if r.again:
            print(f"  {r.student}: {r.again}")
    bad = {s: v for s, v in scores.items() if v[1] == 0 or v[0] != v[1]}
    print(
        "  every notebook scored every autograded point"
        if not bad
        else f"  NOT full marks: {', '.join(f'{s} {v[0]:g}/{v[1]:g}' for s, v in bad.items())}"
    )
    for r in results:
        if not r.ok:
            print(f"  {r.student}: {r.reason}")
        elif r.student in bad:
            print(f"  {r.student} lost {', '.join(scores[r.student][2])}; re-measured: {r.remeasure_line()}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
