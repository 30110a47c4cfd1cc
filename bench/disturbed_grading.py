"""What a host that disturbs every run costs the grading of failing submissions.

    python -m bench disturbed_grading      (as root: netns)

The planted bugs of tests/fixtures/submissions/bugs.toml, each graded on the comn
scenario that catches it (as tests/grader/test_planted.py does), with the engine's word
that the machine delayed the run (grader.disturbance.why) scripted to say so of every
run: how long the class takes and how many runs were tried again. A failure a late
engine cannot cause (wrong bytes, a hang) stands; one it can is run again, up to
disturbance.TRIES, then after the class, alone.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path

LAG = "the engine sent packets up to 3.2 ms late (p99 lag > 1 ms): scripted"


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    return argparse.ArgumentParser(
        prog="python -m bench disturbed_grading",
        description="each planted bug graded alone, every run scripted as late",
    )


def run(argv: list[str]) -> int:
    parser().parse_args(argv)
    import os

    from grader import disturbance
    from grader.protocol.battery import load_battery
    from grader.collect import Submission
    from grader.protocol.grade import Options
    from grader.parallel import grade_all
    from grader.protocol.planted import load_bugs, plant

    # the planted bugs and the correct student they are planted in (the tests' fixtures: data, not code)
    fixtures = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "submissions"
    student = fixtures / "student"

    asked = []
    disturbance.why = lambda run: None if run is None else (asked.append(run.seed) or LAG)
    bugs = load_bugs(str(fixtures / "bugs.toml"))
    battery = load_battery("comn")
    print(
        f"{datetime.now():%Y-%m-%d %H:%M} UTC, load {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs, "
        f"{len(bugs)} planted bugs, each graded alone, every run scripted as late"
    )
    root = tempfile.mkdtemp(prefix="rdtlab-bench-disturbed-")
    try:
        total = 0.0
        for bug in bugs:
            sub = Submission(bug["name"], plant(str(student), bug, os.path.join(root, bug["name"])))
            began, before = time.monotonic(), len(asked)
            [result] = grade_all(
                [sub], battery.select(names=[bug["caught_by"]]), None, Options(backend="netns"), jobs=1
            )
            took = time.monotonic() - began
            total += took
            s = result["scenarios"][0]
            print(
                f"  {bug['name']:<24} {bug['caught_by']:<28} {took:6.1f} s, {len(asked) - before} runs asked "
                f"about, {s['score']:g}/{s['max_score']:g}: {s['reason'][:90]}"
            )
        print(f"total {total:.1f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0
