"""One submission, one job: the stable command line a scheduler (Gradescope, Slurm,
a Dask worker) runs for each student.

    python -m grader.protocol.job SUBMISSION [--assignment comn] [--battery TOML] [--student ID]
                         [--out DIR] [--results FILE] [--backend local|netns|auto] [--no-sandbox]
                         [--runner-isolates-network]

Writes DIR/<student>/ (results.json, feedback, pcaps) and/or the Gradescope
results.json at FILE; prints one JSON line {student, score, max_score}. Exit 0 when
graded (whatever the score), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from harness.backends import BACKENDS
from harness.procs import UsageError

from grader.protocol.battery import load_battery
from grader.collect import Submission, find_submissions
from grader.export_gradescope import gradescope_results
from grader.protocol.grade import Options, grade_submission


def grade_one(
    path: str,
    assignment: str = "comn",
    battery: str | None = None,
    student: str | None = None,
    out: str | None = None,
    results: str | None = None,
    backend: str = "auto",
    sandbox: bool | None = None,
    scenarios: list[str] | None = None,
    runner_isolates_network: bool = False,
) -> dict:
    b = load_battery(battery or assignment)
    if scenarios:
        b = b.select(names=scenarios)
    with tempfile.TemporaryDirectory(prefix="rdt-unpack-") as unpack:
        sub = find_submissions(path, assignment, unpack)[0] if os.path.isdir(path) else None
        if sub is None:
            raise UsageError(f"submission folder not found: {path}")
        if student:
            sub = Submission(student, sub.path, sub.name, sub.matric)
        hidden = [p for p in (out, os.path.dirname(os.path.abspath(results)) if results else None) if p]
        result = grade_submission(
            sub,
            b,
            out,
            Options(backend=backend, sandbox=sandbox, hidden=hidden, runner_isolates_network=runner_isolates_network),
        )
    if results:
        os.makedirs(os.path.dirname(os.path.abspath(results)), exist_ok=True)
        with open(results, "w") as f:
            json.dump(gradescope_results(result), f, indent=1)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.protocol.job", description="grade one submission")
    p.add_argument("submission")
    p.add_argument("--assignment", default="comn")
    p.add_argument("--battery")
    p.add_argument("--student")
    p.add_argument("--out")
    p.add_argument("--results", help="write Gradescope's results.json here")
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    p.add_argument("--no-sandbox", action="store_true")
    p.add_argument("--scenario", action="append")
    p.add_argument(
        "--runner-isolates-network",
        action="store_true",
        help="this runner is disposable and network-isolated (Gradescope's): see rdtlab grade --help",
    )
    args = p.parse_args(argv)
    try:
        r = grade_one(
            args.submission,
            args.assignment,
            args.battery,
            args.student,
            args.out,
            args.results,
            args.backend,
            False if args.no_sandbox else None,
            args.scenario,
            args.runner_isolates_network,
        )
    except UsageError as e:
        print(f"grader.protocol.job: {e}", file=sys.stderr)
        return 2
    print(json.dumps({"student": r["student"], "score": r["score"], "max_score": r["max_score"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
