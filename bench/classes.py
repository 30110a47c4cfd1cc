"""Benchmark: a class of real-style submissions of an assignment, graded on its whole
battery in the jail as `rdtlab grade` grades it, at several --jobs; the rate and
whether every student got the same score at each.

    python -m bench.classes [--assignment NAME] [--jobs 1,2,6] [--seed 1]

The class is the assignment's calibration corpus (bench/calibrate.py's): each correct
member and each planted bug a student, so it fails, stalls and hangs as a real class
does. Prints, per --jobs: wall time, submissions an hour, CPU seconds a submission (the
whole tree's: the grader, the jailed programs, the link engines; bench/_own_cpu.py), and
the scores that differ from the first --jobs' (none, for a fair grader). Exit status 1
if any differ.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time

from bench._own_cpu import OwnCpu
from bench.calibrate import corpus_of, load_corpus, seeded_copy
from bench.planted_pictures import PictureClock


def cpu_s() -> float:
    """CPU seconds of this process and its waited-for children: where no cgroup counts the
    whole tree, the jailed programs (not waited for by this process) are missed."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench.classes", description=__doc__.split("\n\n")[0])
    p.add_argument("--assignment", default="comn")
    p.add_argument("--jobs", default="1,2,6", help="comma-separated pool sizes (default 1,2,6)")
    p.add_argument("--seed", type=int, default=1, help="the class's seed (its submissions' digests)")
    p.add_argument("--backend", default="netns")
    p.add_argument(
        "--pictures",
        action="store_true",
        help="write the feedback with the failing runs' pictures, and say their share of the grading",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from grader.protocol.battery import load_battery
    from grader.collect import Submission
    from grader.protocol.grade import Options, _reference_runs as reference_runs
    from grader.parallel import grade_all

    battery = load_battery(args.assignment)
    members = load_corpus(corpus_of(args.assignment))
    first, differ = None, 0
    with tempfile.TemporaryDirectory(prefix="rdt-class-") as tmp:
        subs = [Submission(m.name, seeded_copy(m, args.seed, tmp)) for m in members]
        for jobs in [int(j) for j in args.jobs.split(",")]:
            reference_runs.clear()  # each pass runs its own reference runs, as a class's first grading does
            out = tempfile.mkdtemp(prefix=f"out-{jobs}-", dir=tmp) if args.pictures else None
            with OwnCpu() as own, PictureClock() as drawing:
                began, cpu = time.monotonic(), cpu_s()
                results = grade_all(subs, battery, out, Options(backend=args.backend, pcaps=bool(out)), jobs=jobs)
                wall, used = time.monotonic() - began, cpu_s() - cpu
            tree = "the whole tree's" if own.seconds is not None else "the grader's own, its jailed programs missed"
            used = own.seconds if own.seconds is not None else used
            scores = {r["student"]: r["score"] for r in results}
            again = sum(len(r.get("graded_again", [])) for r in results)
            print(
                f"{args.assignment}: {len(subs)} submissions at --jobs {jobs}: {wall:.0f} s, "
                f"{3600 * len(subs) / wall:.0f} an hour, {used / len(subs):.1f} CPU-s a submission ({tree}), "
                f"{again} scenario(s) graded again alone",
                flush=True,
            )
            if out:
                own_time = sum(r["execution_time"] for r in results)
                print(
                    f"  the failing runs' pictures: {drawing.seconds:.0f} s, {100 * drawing.seconds / own_time:.1f}% "
                    f"of the submissions' own {own_time:.0f} s",
                    flush=True,
                )
            spent: dict = {}
            for r in results:
                for sc in r["scenarios"]:
                    spent[sc["name"]] = spent.get(sc["name"], 0.0) + sc.get("seconds", 0.0)
            top = sorted(spent.items(), key=lambda kv: -kv[1])[:6]
            print(
                "  where the time went (scenario: seconds over the class): "
                + ", ".join(f"{n} {t:.0f}" for n, t in top),
                flush=True,
            )
            if first is None:
                first = scores
                continue
            moved = {s: (first[s], scores[s]) for s in scores if scores[s] != first[s]}
            differ += len(moved)
            for student, (was, now) in sorted(moved.items()):
                print(f"  {student}: {was:g} at the first --jobs, {now:g} here", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
