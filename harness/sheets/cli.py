"""`rdtlab sheet NAME`: measure (or resume) and render a results sheet.

    rdtlab sheet NAME [--impl reference|DIR] [--quick] [--runs N] [--margin F [--cap N]]
                      [--out DIR] [--backend auto|local|netns] [--jobs N] [--fresh]
                      [--tcp-cc reno|cubic|bbr] [--questions LIST (comn)]

NAME is an assignment of the course (assignments/<name>/sheet.py, found by the registry
in assignments/__init__.py).

Results are appended to out/<sheet>/runs-<key>.jsonl as they arrive, keyed by what
changes the numbers (programs, file size, backend, plan, TCP's congestion control), so re-running the same
command after an interruption measures only what is missing; --fresh starts over.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

from harness.backends import BACKENDS, resolve
from harness.procs import UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    import assignments

    p.add_argument("name", choices=assignments.names(), help="which sheet (an assignment of the course: assignments/)")
    p.add_argument(
        "--impl",
        default="reference",
        metavar="reference|DIR",
        help="the programs: the reference ones, or a directory of the assignment's programs "
        "(comn: Sender2.py ... Receiver4.py)",
    )
    p.add_argument("--quick", action="store_true", help="fewer cells and runs, a 100 KiB file (a few minutes)")
    p.add_argument(
        "--runs", type=_positive_int, default=None, metavar="N", help="runs per cell (default 5; 2 with --quick)"
    )
    p.add_argument(
        "--margin",
        type=_fraction,
        default=None,
        metavar="F",
        help="repeat each cell until the 95%% margin of error is below F of the mean (e.g. 0.1), at least --runs times",
    )
    p.add_argument(
        "--cap",
        type=_positive_int,
        default=None,
        metavar="N",
        help="most runs per cell with --margin (default 30; the multihoming sheet: 20, 8 with --quick)",
    )
    p.add_argument(
        "--questions",
        default=None,
        metavar="LIST",
        help="which measured questions to run (e.g. q1,q3), for a sheet whose questions run one by one "
        "(comn's QUESTIONS; default all)",
    )
    p.add_argument(
        "--size", type=_size, default=None, metavar="BYTES", help="file size (default 1MiB; 100KiB with --quick)"
    )
    p.add_argument("--out", default="out", metavar="DIR", help="the sheet goes to DIR/<name>/ (default out)")
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    p.add_argument(
        "--jobs",
        type=_positive_int,
        default=None,
        metavar="N",
        help="transfers at once (default 12, or 40 where every run is booked by its measured CPU, "
        "as comn's; see BENCHMARKS.md, The sheets)",
    )
    p.add_argument(
        "--cpu-budget",
        type=float,
        default=None,
        metavar="X",
        help="most cores the transfers in flight are booked at (by their measured CPU, or by their "
        "load where a sheet gives no CPU: a saturating one counts 1; default 1.5)",
    )
    p.add_argument(
        "--tcp-cc",
        default=None,
        metavar="reno|cubic|bbr",
        help="kernel TCP's congestion control in the namespaces, pinned per route whatever the "
        "host's default (default cubic; COMN's Q7 also measures reno beside the models)",
    )
    p.add_argument("--seed", type=int, default=1, help="sweep seed: each run's seed derives from it (default 1)")
    p.add_argument("--fresh", action="store_true", help="forget earlier results of the same configuration")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def main(args: argparse.Namespace) -> int:
    """Any assignment's sheet: its folder's sheet.py gives build(), QUICK/FULL plans and
    missing_programs(); a sheet whose questions run one by one (comn) also gives QUESTIONS
    and missing_by_question(), and runs the questions whose programs are there."""
    from dataclasses import asdict, replace

    import assignments
    from harness.backends import tcp

    args.tcp_cc = tcp.check(tcp.DEFAULT if args.tcp_cc is None else args.tcp_cc)
    module = assignments.get(args.name).sheet()
    questions = _questions(args, getattr(module, "QUESTIONS", None))
    impl = None
    if args.impl != "reference":
        impl = os.path.abspath(args.impl)
        if not os.path.isdir(impl):
            raise UsageError(
                f"--impl {args.impl!r}: no such directory (expected 'reference' or a directory of programs)"
            )
        if questions is None:
            missing = module.missing_programs(impl)
            if missing:
                raise UsageError(f"{impl} lacks {', '.join(missing)}, which the {args.name} sheet runs")
        else:
            _runnable(impl, questions, module.missing_by_question(impl))
    backend = resolve(args.backend)
    plan = module.QUICK if args.quick else module.FULL
    if args.size is not None:  # every file of the plan (tcp-like has one per sweep)
        plan = replace(plan, **{f: args.size for f in ("size", "loss_size") if hasattr(plan, f)})
    runs_tcp = tcp.runs_kernel_tcp(module.build)  # a sheet with kernel-TCP rows
    sheet = module.build(
        impl,
        plan,
        backend,
        runs=args.runs,
        until_margin=args.margin,
        seed=args.seed,
        **({"cap": args.cap} if args.cap else {}),
        **({"tcp_cc": args.tcp_cc} if runs_tcp else {}),
        **({"questions": questions} if questions is not None else {}),
    )
    key = hashlib.sha256(
        json.dumps(
            [impl or "reference", asdict(plan), backend, args.seed] + ([args.tcp_cc] if runs_tcp else []),
            sort_keys=True,
            default=str,
        ).encode()
    ).hexdigest()[:10]  # any change of plan: new results
    return _measure_and_write(args, sheet, key, impl or "reference", plan, backend)


def _questions(args: argparse.Namespace, known: tuple | None) -> tuple | None:
    """--questions for a sheet with QUESTIONS (all by default); None for one without."""
    if known is None:
        if args.questions is not None:
            raise UsageError(f"--questions: the {args.name} sheet runs all its questions together")
        return None
    if args.questions is None:
        return tuple(known)
    questions = tuple(q.strip() for q in args.questions.split(",") if q.strip())
    unknown = [q for q in questions if q not in known]
    if unknown or not questions:
        raise UsageError(f"--questions: unknown {', '.join(unknown) or '(empty)'}; expected some of {', '.join(known)}")
    return questions


def _runnable(impl: str, questions: tuple, missing: dict) -> None:
    """A sheet whose questions run one by one runs those whose programs `impl` has
    (`missing`: question -> the files it lacks, for each question that runs programs):
    one line per question left out, an error when none is left."""
    needed = {q: files for q, files in missing.items() if q in questions and files}
    if needed and len(needed) == len([q for q in questions if q in missing]):
        raise UsageError(
            f"{impl} has none of the programs these questions need: "
            + "; ".join(f"{q} needs {', '.join(f)}" for q, f in needed.items())
        )
    for q, files in needed.items():
        print(f"rdtlab sheet: {q} will not run: {impl} lacks {', '.join(files)}", file=sys.stderr)


def _measure_and_write(args, sheet, key: str, impl: str, plan, backend: str) -> int:
    from harness.sheets.render import write_sheet
    from harness.sheets.sheet import measure

    out_dir = os.path.join(args.out, args.name)
    os.makedirs(out_dir, exist_ok=True)
    results_path = os.path.join(out_dir, f"runs-{key}.jsonl")
    if args.fresh and os.path.exists(results_path):
        os.remove(results_path)
    resumed = _count_lines(results_path)
    what = (
        f"{plan.objects} objects of up to {plan.size} bytes"
        if hasattr(plan, "objects")
        else f"{plan.size} bytes per transfer"
    )
    print(
        f"rdtlab sheet {args.name}: {len(sheet.sweeps) + len(sheet.deferred)} sweeps, programs {impl}, "
        f"backend {backend}, {what}" + (f"; resuming: {resumed} runs already measured" if resumed else ""),
        file=sys.stderr,
        flush=True,
    )
    started = time.monotonic()
    results = measure(
        sheet, jobs=args.jobs, results_path=results_path, progress=not args.no_progress, cpu_budget=args.cpu_budget
    )
    elapsed = time.monotonic() - started
    header = [
        f"Generated by `rdtlab sheet {args.name}"
        + (" --quick" if args.quick else "")
        + (f" --tcp-cc {args.tcp_cc}" if args.tcp_cc != "cubic" else "")
        + f"` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {elapsed:.0f} s "
        f"(backend {backend}). Raw runs: `{os.path.basename(results_path)}` and one CSV per question."
    ]
    paths = write_sheet(sheet, results, out_dir, header)
    failed = _failed_cells(sheet, results)
    print(
        f"rdtlab sheet {args.name}: wrote {paths['md']} and {paths['html']} "
        f"({len(paths['png'])} plots, {len(paths['csv'])} CSV) in {elapsed:.0f} s",
        flush=True,
    )
    for line in failed:
        print(f"rdtlab sheet: {line}", file=sys.stderr)
    if results.interrupted:
        print(
            f"rdtlab sheet: interrupted; partial results kept in {results_path}; run the same command to "
            "measure the rest",
            file=sys.stderr,
        )
        return 130
    return 1 if failed else 0


def _failed_cells(sheet, results) -> list[str]:
    """One line per cell where every run failed."""
    from harness.experiments.sweep import summarize_cells

    lines = []
    for sweep in sheet.sweeps:
        frame = results.frames.get(sweep.name)
        if frame is None or frame.empty:
            continue
        table = summarize_cells(frame, sweep.param_names, sweep.metric)
        for row in table[table["status"] == "failed"].to_dict("records"):
            cell = ", ".join(f"{p}={row[p]}" for p in sweep.param_names)
            lines.append(f"{sweep.name} cell {cell}: every run failed: {row['error']}")
    return lines


def _count_lines(path: str) -> int:
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return sum(1 for _ in f)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a fraction between 0 and 1 (e.g. 0.1), got {text!r}")
    return value


def _size(text: str) -> int:
    from harness.cli import size_arg

    return size_arg(text)
