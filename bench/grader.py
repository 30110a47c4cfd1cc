"""Benchmark: how many COMN submissions an hour the grader grades on this machine,
on the full battery, with copies of the reference and planted-bug variants.

    python -m bench.grader [--copies 3] [--jobs 4] [--backend netns]

Prints the figures for BENCHMARKS.md: wall time, submissions per hour, the serial
estimate (the sum of the jobs' own times), the machine's load, and checks that every
reference copy scored full marks and every planted bug lost points in its scenario.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from harness.engine import REPO

from grader.protocol.battery import load_battery
from grader.collect import Submission
from grader.protocol.grade import Options
from grader.parallel import grade_all
from grader.protocol.planted import load_bugs, plant, reference_submission

FIXTURES = os.path.join(REPO, "tests", "fixtures", "submissions")


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench.grader")
    p.add_argument("--copies", type=int, default=3, help="copies of the reference (default 3)")
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--backend", default="auto")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    battery = load_battery("comn")
    bugs = load_bugs(os.path.join(FIXTURES, "bugs.toml"))
    with tempfile.TemporaryDirectory(prefix="rdt-grade-bench-") as tmp:
        subs = [
            Submission(
                f"reference-{k}", reference_submission(os.path.join(tmp, f"ref{k}"), who=f"Reference Copy s000000{k}")
            )
            for k in range(args.copies)
        ]
        subs += [
            Submission(b["name"], plant(os.path.join(FIXTURES, "student"), b, os.path.join(tmp, b["name"])))
            for b in bugs
        ]
        load_before = os.getloadavg()
        started = time.monotonic()
        results = grade_all(
            subs,
            battery,
            None,
            Options(backend=args.backend),
            jobs=args.jobs,
            done=lambda r: print(
                f"  {r['student']}: {r['score']:g}/{r['max_score']:g} in {r['execution_time']:.0f} s", flush=True
            ),
        )
        wall = time.monotonic() - started
    serial = sum(r["execution_time"] for r in results)
    print(
        f"grader bench ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}): {len(subs)} submissions x "
        f"{len(battery.scenarios)} scenarios, --jobs {args.jobs}, backend {results[0]['backend']}, "
        f"sandbox {results[0]['sandbox']}"
    )
    print(
        f"  wall {wall:.0f} s = {3600 * len(subs) / wall:.0f} submissions/hour; serial estimate "
        f"{serial:.0f} s = {3600 * len(subs) / serial:.0f} submissions/hour; load average "
        f"{load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after (2 cores shared)"
    )
    per_scenario: dict[str, float] = {}
    for r in results:
        for sc in r["scenarios"]:
            per_scenario[sc["name"]] = per_scenario.get(sc["name"], 0.0) + sc.get("seconds", 0.0)
    top = sorted(per_scenario.items(), key=lambda kv: -kv[1])[:8]
    print(
        "  where the time went (seconds summed over the submissions): "
        + ", ".join(f"{name} {sec:.0f}" for name, sec in top)
    )
    failures = []
    for r in results[: args.copies]:
        lost = [(s["name"], s["reason"]) for s in r["scenarios"] if not s["passed"]]
        if lost:
            failures.append(f"{r['student']} (the reference) lost points: {lost}")
    for bug, r in zip(bugs, results[args.copies :]):
        named = next(s for s in r["scenarios"] if s["name"] == bug["caught_by"])
        print(
            f"  {bug['name']}: {r['score']:g}/{r['max_score']:g}, {named['name']} "
            f"{named['score']:g}/{named['max_score']:g}"
        )
        if named["score"] >= named["max_score"]:
            failures.append(f"{bug['name']} kept full marks in {bug['caught_by']}")
    for f in failures:
        print("  PROBLEM: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
