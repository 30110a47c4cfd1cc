"""Benchmark: a class of real-style submissions of an assignment, graded on its whole
battery in the jail as `rdtlab grade` grades it, at several --jobs; the rate and
whether every student got the same score at each.

    python -m bench.classes [--assignment NAME] [--jobs 1,2,6] [--seed 1] [--class DIR]

The class is the assignment's calibration corpus (bench/calibrate.py's): each correct
member and each planted bug a student, so it fails, stalls and hangs as a real class
does. `--class DIR`: instead, each folder in DIR is a student (a class handed in, such
as tests/fixtures/class_comn/: seven COMN students who fail as real ones did).

Prints, per --jobs: wall time, submissions an hour, CPU seconds a submission (the whole
tree's: the grader, the jailed programs, the link engines; bench/_own_cpu.py), how many
scenarios the pool left to be graded again alone and how long that last pass took, the
scenarios' time by how they ended (passed, stopped at a time limit or for no progress,
other failures, beyond the spec), the scenarios the class spent most time in, and the
points that differ from the first --jobs' in a scenario graded both times (none, for a
fair grader; a scenario the machine disturbed on every try is left ungraded, not
compared). Exit status 1 if any differ.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from bench._clock import Stopwatch
from bench._own_cpu import OwnCpu
from bench.calibrate import Member, corpus_of, load_corpus, seeded_copy
from bench.planted_pictures import PictureClock


def cpu_s() -> float:
    """CPU seconds of this process and its waited-for children: where no cgroup counts the
    whole tree, the jailed programs (not waited for by this process) are missed."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def AloneClock() -> Stopwatch:
    """The wall seconds of grade_all's last pass, where the scenarios a pool may have
    disturbed are graded again one submission at a time (its calls run one after another;
    a call with nothing ungraded does nothing)."""
    import grader.parallel

    return Stopwatch(grader.parallel, "grade_again_alone", lambda *args: bool(args[4].get("ungraded")))


def graded_points(result: dict) -> dict[str, float]:
    """A result's points per scenario it graded: one the machine disturbed on every try is
    not a grade (it is left for a quieter machine), so no comparison counts it."""
    return {sc["name"]: sc["score"] for sc in result["scenarios"] if not sc.get("ungraded")}


def differing(was: dict[str, float], now: dict[str, float]) -> str:
    """The scenarios graded both times whose points differ, in words ('' if none)."""
    return ", ".join(
        f"{n} {was[n]:g} at the first --jobs, {now[n]:g} here" for n in was if n in now and was[n] != now[n]
    )


def how_it_ended(scenario: dict) -> str:
    """What a graded scenario's time was spent on: beyond the spec, left ungraded (disturbed
    on every try), a pass, a run stopped at its time limit or for no progress, a failure of
    another kind, or not run."""
    if scenario.get("beyond_spec"):
        return "beyond the spec"
    if scenario.get("ungraded"):
        return "left ungraded"
    if scenario.get("passed"):
        return "passed"
    kinds = {run.get("error_kind") for run in scenario.get("runs", [])}
    if not scenario.get("runs"):
        return "not run"
    return "time limits" if "time limit" in kinds else "no progress" if "no progress" in kinds else "other failures"


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench.classes", description=__doc__.split("\n\n")[0])
    p.add_argument("--assignment", default="comn")
    p.add_argument("--jobs", default="1,2,6", help="comma-separated pool sizes (default 1,2,6)")
    p.add_argument("--seed", type=int, default=1, help="the class's seed (its submissions' digests)")
    p.add_argument("--class", dest="klass", metavar="DIR", help="grade each folder in DIR (default: the corpus)")
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
    if args.klass:
        root = Path(args.klass)
        folders = (
            sorted(d for d in root.iterdir() if d.is_dir() and not d.name.startswith((".", "_")))
            if root.is_dir()
            else []
        )
        if not folders:
            print(f"bench.classes: no student folders in {args.klass}", file=sys.stderr)
            return 2
        members = [Member(d.name, d.resolve(), "student") for d in folders]
    else:
        members = load_corpus(corpus_of(args.assignment))
    first, differ = None, 0
    with tempfile.TemporaryDirectory(prefix="rdt-class-") as tmp:
        subs = [Submission(m.name, seeded_copy(m, args.seed, tmp)) for m in members]
        for jobs in [int(j) for j in args.jobs.split(",")]:
            reference_runs.clear()  # each pass runs its own reference runs, as a class's first grading does
            out = tempfile.mkdtemp(prefix=f"out-{jobs}-", dir=tmp) if args.pictures else None
            with OwnCpu() as own, PictureClock() as drawing, AloneClock() as alone:
                began, cpu = time.monotonic(), cpu_s()
                results = grade_all(subs, battery, out, Options(backend=args.backend, pcaps=bool(out)), jobs=jobs)
                wall, used = time.monotonic() - began, cpu_s() - cpu
            tree = "the whole tree's" if own.seconds is not None else "the grader's own, its jailed programs missed"
            used = own.seconds if own.seconds is not None else used
            scores = {r["student"]: graded_points(r) for r in results}
            left = sum(len(r["ungraded"]) for r in results)
            again = sum(len(r.get("graded_again", [])) for r in results)
            print(
                f"{args.assignment}: {len(subs)} submissions at --jobs {jobs}: {wall:.0f} s, "
                f"{3600 * len(subs) / wall:.0f} an hour, {used / len(subs):.1f} CPU-s a submission ({tree}), "
                f"{again} scenario(s) graded again alone ({alone.seconds:.0f} s at the end), "
                f"{left} left ungraded (disturbed on every try: for a quieter machine)",
                flush=True,
            )
            if again:
                print(
                    "  graded again alone: "
                    + ", ".join(f"{r['student']} {n}" for r in results for n in r.get("graded_again", [])),
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
            ended: dict = {}
            for r in results:
                for sc in r["scenarios"]:
                    spent[sc["name"]] = spent.get(sc["name"], 0.0) + sc.get("seconds", 0.0)
                    how = how_it_ended(sc)
                    ended[how] = ended.get(how, 0.0) + sc.get("seconds", 0.0)
            whole = sum(ended.values()) or 1.0
            print(
                "  the scenarios' time by how they ended: "
                + ", ".join(
                    f"{k} {t:.0f} s ({100 * t / whole:.0f}%)" for k, t in sorted(ended.items(), key=lambda kv: -kv[1])
                ),
                flush=True,
            )
            top = sorted(spent.items(), key=lambda kv: -kv[1])[:6]
            print(
                "  where the time went (scenario: seconds over the class): "
                + ", ".join(f"{n} {t:.0f}" for n, t in top),
                flush=True,
            )
            if first is None:
                first = scores
                if args.klass:  # a class handed in: what each student got, and where it lost points
                    for r in results:
                        lost = [
                            f"    {sc['name']}: {sc.get('reason') or ''}"[:200]
                            for sc in r["scenarios"]
                            if sc["score"] < sc["max_score"] and sc.get("scored", True)
                        ]
                        print(
                            "\n".join(
                                [
                                    f"  {r['student']}: {r['score']:g} of {r['max_score']:g} in {r['execution_time']:.0f} s",
                                    *lost,
                                ]
                            ),
                            flush=True,
                        )
                continue
            moved = {s: differing(first[s], scores[s]) for s in scores}
            moved = {s: m for s, m in moved.items() if m}
            differ += len(moved)
            for student, m in sorted(moved.items()):
                print(f"  {student}: {m}", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
