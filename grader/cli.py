"""`rdtlab grade` (instructors: a class of submissions) and `rdtlab check` (students:
the public scenarios on their own folder). rdtlab/cli.py registers both.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from types import SimpleNamespace

from harness.backends import BACKENDS
from harness.procs import UsageError

from grader.jail import cgroups
from grader.protocol.battery import load_battery
from grader.collect import find_submissions
from grader.export_class import write_class_view
from grader.export_csv import write_class_csv
from grader.protocol.feedback import markdown
from grader.protocol.grade import Options, grade_again_alone, grade_submission
from grader.parallel import DEFAULT_JOBS, NOTEBOOK_JOBS, grade_all
from grader.jail.sandbox import available


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--assignment", default="comn", help="the battery: assignments/NAME/battery.toml (default comn)")
    p.add_argument("--battery", metavar="TOML", help="a battery file instead of the assignment's")
    p.add_argument("--part", type=int, metavar="N", help="only the scenarios of part N")
    p.add_argument("--scenario", action="append", metavar="NAME", help="only this scenario (repeatable)")
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run the programs without the bubblewrap jail (inside a container that is one)",
    )
    p.add_argument(
        "--runner-isolates-network",
        action="store_true",
        help="this machine is a disposable runner with nothing on its network to reach: grade on the "
        "local backend even where a run cannot get a network namespace of its own",
    )


def _battery(args):
    battery = load_battery(args.battery or args.assignment)
    public_only = getattr(args, "public_only", False)
    battery = battery.select(part=args.part, public_only=public_only, names=args.scenario)
    if not battery.scenarios:
        raise UsageError("no scenario of the battery matches --part/--scenario")
    return battery


def _options(args, hidden: list[str]) -> Options:
    why = available()
    if why and not args.no_sandbox:
        print(f"note: programs run without the sandbox: {why}", file=sys.stderr)
    elif not args.no_sandbox and cgroups.available():
        print(
            f"note: the jails get no control group ({cgroups.available()}): each process's own limits hold, "
            "not a cap on all of a submission's processes together",
            file=sys.stderr,
        )
    return Options(
        backend=args.backend,
        sandbox=False if args.no_sandbox else None,
        hidden=[os.path.abspath(h) for h in hidden],
        runner_isolates_network=getattr(args, "runner_isolates_network", False),
    )


# ---- rdtlab grade -------------------------------------------------------------------


def grade_add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "submissions",
        nargs="?",
        metavar="SUBMISSIONS",
        help="a folder of submissions (a folder or archive per student, or nbgrader's submitted/)",
    )
    _common(p)
    p.add_argument(
        "--jobs", type=int, default=DEFAULT_JOBS, metavar="N", help=f"submissions at once (default {DEFAULT_JOBS})"
    )
    p.add_argument("--out", default="graded", metavar="DIR", help="where results go: DIR/<student>/, DIR/grades.csv")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run the jobs on a Dask cluster (tcp://host:8786)")
    p.add_argument(
        "--gradebook",
        metavar="COURSE_DIR",
        help="also autograde the students' notebooks of this nbgrader course (each kernel in "
        "the student's jail) and write the protocol scores beside them in its gradebook",
    )
    p.add_argument(
        "--notebook-jobs",
        type=int,
        default=NOTEBOOK_JOBS,
        metavar="N",
        help=f"with --gradebook: the most notebooks at once (default {NOTEBOOK_JOBS}); each starts only "
        "while the machine has room",
    )
    p.add_argument(
        "--no-notebooks",
        action="store_true",
        help="with --gradebook: write the protocol scores only, do not autograde the notebooks",
    )
    p.add_argument(
        "--compare",
        metavar="EARLIER",
        help="a regrade: run only the scenarios whose definition changed since the grading in EARLIER "
        "(an --out folder), keep the rest, and say whose verdicts moved (changes.csv, class.html)",
    )
    p.add_argument(
        "--gradescope-package",
        metavar="ZIP",
        help="write a Gradescope autograder package (setup.sh, run_autograder) and stop; with --part or "
        "--scenario, it grades only those scenarios",
    )


def grade_main(args: argparse.Namespace) -> int:
    if args.gradescope_package:
        from grader.export_gradescope_package import write_package

        chosen = None
        if args.part is not None or args.scenario:
            chosen = [s.name for s in _battery(args).scenarios]
        write_package(args.gradescope_package, args.assignment, args.battery, chosen)
        print(f"wrote {args.gradescope_package}")
        return 0
    if not args.submissions:
        raise UsageError("give the SUBMISSIONS folder (or --gradescope-package ZIP)")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    if args.notebook_jobs < 1:
        raise UsageError(f"--notebook-jobs must be at least 1, not {args.notebook_jobs}")
    battery = _battery(args)
    if args.gradebook and not args.no_notebooks:  # say it now, not after grading the programs
        why = "--no-sandbox was given" if args.no_sandbox else available()
        if why:
            raise UsageError(
                f"--gradebook autogrades the students' notebooks in the sandbox, and {why}: "
                f"add --no-notebooks (and run nbgrader autograde yourself)"
            )
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rdt-unpack-") as unpack:
        subs = find_submissions(args.submissions, args.assignment, unpack)
        options = _options(args, [args.submissions, out, *([args.gradebook] if args.gradebook else [])])
        print(
            f"grading {len(subs)} submission(s) on {len(battery.scenarios)} scenarios of {battery.name} "
            f"({args.jobs} at once) into {out}",
            file=sys.stderr,
            flush=True,
        )

        def done(r: dict) -> None:
            print(
                f"  {r['student']}: {r['score']:g} / {r['max_score']:g} ({r['execution_time']:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

        if args.compare:
            if args.scheduler:
                raise UsageError("--compare grades on this machine; leave out --scheduler")
            results, moved = _regrade(args, subs, battery, out, options, done)
        elif args.scheduler:
            from grader.dask_executor import grade_on_cluster

            battery_ref = os.path.abspath(args.battery) if args.battery else args.assignment
            results = grade_on_cluster(args.scheduler, subs, battery_ref, battery, out, options, done)
        else:
            results = grade_all(subs, battery, out, options, jobs=args.jobs, done=done)
    write_class_csv(results, os.path.join(out, "grades.csv"))
    notebooks = None
    if args.gradebook:
        from grader.notebook.gradebook import import_scores, notebook_scores

        if not args.no_notebooks:
            _autograde_notebooks(args, [r["student"] for r in results])
        # after autograde: nbgrader zeroes the grades of an assignment's notebooks it finds no
        # .ipynb for, and the protocol's scores are one
        import_scores(args.gradebook, args.assignment, results)
        notebooks = notebook_scores(args.gradebook, args.assignment)
    write_class_view(results, out, time.monotonic() - started, moved if args.compare else None, notebooks)
    for r in results:
        if r.get("ungraded"):
            print(
                f"warning: {r['student']}: not graded, the machine disturbed every try: {', '.join(r['ungraded'])} "
                "(grade it again on a quieter machine)",
                file=sys.stderr,
            )
    print(
        f"wrote {os.path.join(out, 'grades.csv')}, the class view (class.html, class.csv) and {len(results)} "
        "feedback folder(s)"
    )
    return 0


def _regrade(args, subs, battery, out: str, options, done) -> tuple[list[dict], dict]:
    """`--compare`: each submission graded on the scenarios whose definition changed since
    the grading in args.compare (grader/compare.py), merged with the rest of that
    grading; {student: the verdicts that moved}, also written to changes.csv."""
    import csv
    import shutil
    from grader import compare
    from grader.protocol.feedback import write_outputs

    earlier = os.path.abspath(args.compare)
    if not os.path.isdir(earlier):
        raise UsageError(f"--compare: no earlier grading folder {args.compare}")
    before = {sub.student: compare.earlier(earlier, sub.student) for sub in subs}
    chosen = {sub.student: battery.select(names=compare.to_run(battery, before[sub.student])) for sub in subs}
    todo = [sub for sub in subs if chosen[sub.student].scenarios]
    print(
        f"--compare {args.compare}: {sum(len(chosen[s.student].scenarios) for s in todo)} scenario gradings to "
        f"run again, for {len(todo)} of {len(subs)} submission(s)",
        file=sys.stderr,
        flush=True,
    )
    fresh = {
        r["student"]: r
        for r in grade_all(todo, battery, out, options, jobs=args.jobs, battery_of=lambda sub: chosen[sub.student])
    }
    results, moved = [], {}
    for sub in subs:
        was = before[sub.student]
        now = fresh.get(sub.student)
        merged = compare.merge(battery, was, now) if was and now else now or {**was, "regraded": []}
        folder = os.path.join(out, sub.student)
        os.makedirs(folder, exist_ok=True)
        if was and folder != os.path.join(earlier, sub.student):  # the kept failures' files
            for r in merged["scenarios"]:
                if r["name"] not in merged["regraded"]:
                    for name in [r.get("pcap"), *(r.get("pictures") or {}).values()]:
                        if name and os.path.exists(os.path.join(earlier, sub.student, name)):
                            shutil.copy2(os.path.join(earlier, sub.student, name), folder)
        write_outputs(merged, folder)
        results.append(merged)
        moved[sub.student] = compare.changes(was, merged)
        done(merged)
    with open(os.path.join(out, "changes.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "student",
                "scenario",
                "score_before",
                "score_after",
                "passed_before",
                "passed_after",
                "symptom_before",
                "symptom_after",
            ]
        )
        for student, rows in sorted(moved.items()):
            for c in rows:
                w.writerow(
                    [
                        student,
                        c["scenario"],
                        c["score_before"],
                        c["score_after"],
                        c["passed_before"],
                        c["passed_after"],
                        c["symptom_before"] or "",
                        c["symptom_after"] or "",
                    ]
                )
    return results, moved


def _autograde_notebooks(args: argparse.Namespace, students: list[str]) -> None:
    from grader.notebook.autograde import autograde_students, students_with_notebooks

    have = students_with_notebooks(args.gradebook, args.assignment, students)
    if not have:
        print(
            f"no notebooks of {args.assignment} in {os.path.join(args.gradebook, 'submitted')} to autograde",
            file=sys.stderr,
        )
        return
    print(
        f"autograding {len(have)} notebook submission(s) of {args.assignment}, each kernel in its jail",
        file=sys.stderr,
        flush=True,
    )

    def done(a) -> None:
        print(
            f"  {a.student}: notebook {'autograded' if a.ok else 'not autograded: ' + a.reason} "
            f"({a.seconds:.0f} s)"
            + (f"; re-measured outside the kernel: {a.remeasure_line()}" if a.remeasured else "")
            + (f"; {a.kernel_tcp}" if a.kernel_tcp else "")
            + (f" ({a.again})" if a.again else ""),
            file=sys.stderr,
            flush=True,
        )

    # re-measured on the local backend, as the jailed kernels measured (not --backend,
    # which is the protocol battery's)
    autograde_students(
        args.gradebook, args.assignment, have, jobs=args.notebook_jobs, done=done, hidden=(args.submissions, args.out)
    )


# ---- rdtlab check -------------------------------------------------------------------


def check_add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", nargs="?", default=".", metavar="DIR", help="your programs' folder (default: here)")
    _common(p)
    p.add_argument("--all", action="store_true", help="every scenario, not only the public ones (slower)")


def check_main(args: argparse.Namespace) -> int:
    args.public_only = not args.all
    battery = _battery(args)
    folder = os.path.abspath(args.folder)
    if not os.path.isdir(folder):
        raise UsageError(f"folder not found: {args.folder}")
    with tempfile.TemporaryDirectory(prefix="rdt-unpack-") as unpack:
        sub = find_submissions(folder, args.assignment, unpack)[0] if _holds_programs(folder) else None
        if sub is None:
            raise UsageError(f"{args.folder} holds no Sender/Receiver programs")
        print(
            f"checking {folder} on {len(battery.scenarios)} public scenario(s) of {battery.name}",
            file=sys.stderr,
            flush=True,
        )
        options = _options(args, [])
        result = grade_again_alone(
            sub,
            battery,
            None,
            options,
            grade_submission(sub, battery, None, options),
            lambda names: print(
                f"the machine disturbed every try of {', '.join(names)}: checking again", file=sys.stderr, flush=True
            ),
        )
    print(markdown(result), end="")
    return 0 if result["score"] == result["max_score"] else 1


def _holds_programs(folder: str) -> bool:
    from pathlib import Path
    from grader.collect import has_programs

    return has_programs(Path(folder))


GRADE = SimpleNamespace(add_arguments=grade_add_arguments, main=grade_main)
CHECK = SimpleNamespace(add_arguments=check_add_arguments, main=check_main)
