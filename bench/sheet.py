"""Results-sheet benchmarks: how long the COMN sheet takes, and whether running
transfers in parallel changes what they measure.

    python -m bench sheet [quick] [full] [agreement]     (default: all three)

- quick / full: `rdtlab sheet comn [--quick] --fresh` timed end to end, with the serial
  estimate (the sum of every run's own duration: what one-at-a-time would take).
- agreement: a few real cells (light and link-saturating ones), 5 runs each, measured
  serially (1 job) and in parallel (the sheet's default jobs and CPU budget); their 95%
  confidence intervals must overlap. Prints the engine's lag p99 in both modes.
Figures go in BENCHMARKS.md, section "The sheets".
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time

PARTS = ("quick", "full", "agreement")


def _part(text: str) -> str:
    if text not in PARTS:
        raise argparse.ArgumentTypeError(f"unknown part {text!r}; expected some of {', '.join(PARTS)}")
    return text


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench sheet")
    p.add_argument("parts", nargs="*", type=_part, metavar="PART", help=f"some of {', '.join(PARTS)} (default all)")
    return p


def run(argv: list[str]) -> int:
    try:
        parts = parser().parse_args(argv).parts or list(PARTS)
    except SystemExit as e:
        return int(e.code or 0)
    status = 0
    for part in parts:
        status |= {"quick": lambda: time_sheet(True), "full": lambda: time_sheet(False), "agreement": agreement}[part]()
    return status


def run_sheet(argv: list[str], out: str) -> tuple[subprocess.CompletedProcess, float, list[dict]]:
    """`rdtlab sheet` as `argv` (writing to `out`): its process, wall seconds and run rows."""
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True)
    wall = time.monotonic() - started
    rows = []
    for path in glob.glob(os.path.join(out, "comn", "runs-*.jsonl")):
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return proc, wall, rows


def time_sheet(quick: bool) -> int:
    out = os.path.join("out", "bench-sheet-quick" if quick else "bench-sheet-full")  # kept to look at
    argv = [sys.executable, "-m", "rdtlab", "sheet", "comn", "--fresh", "--no-progress", "--out", out]
    argv += ["--quick"] if quick else []
    proc, wall, rows = run_sheet(argv, out)
    serial = sum(r.get("elapsed_s") or 0 for r in rows)
    ok = sum(1 for r in rows if r.get("ok"))
    lags = sorted(r["lag_p99_us"] for r in rows if r.get("lag_p99_us") is not None)
    name = "comn --quick" if quick else "comn (full)"
    print(
        f"sheet {name}: wall {wall:.0f} s, {len(rows)} runs ({ok} ok), serial estimate {serial:.0f} s "
        f"(x{serial / wall:.1f} from parallelism); engine lag p99 per run: median "
        f"{_pct(lags, 50):.0f} us, 90th pct {_pct(lags, 90):.0f} us; exit {proc.returncode}; output {out}/comn"
    )
    if proc.returncode not in (0, 1):
        print(proc.stderr[-2000:], file=sys.stderr)
    return 0 if proc.returncode == 0 else 1


def agreement() -> int:
    from harness.experiments.sweep import Sweep, run_sweeps, summarize_cells
    from assignments.comn import sheet as comn

    sheet = comn.build(comn.REFERENCE, comn.FULL, "auto", runs=5, questions=("q1", "q3"))
    q1, q3 = sheet.sections[0].sweeps[0], sheet.sections[2].sweeps[0]
    picks = [
        (q1, {"delay": 5, "loss": 5, "timeout": 20}),
        (q3, {"delay": 5, "loss": 5, "timeout": 20, "window": 16}),
        (q3, {"delay": 5, "loss": 5, "timeout": 20, "window": 256}),
        (q3, {"delay": 25, "loss": 5, "timeout": 60, "window": 64}),
        (q3, {"delay": 25, "loss": 5, "timeout": 60, "window": 8}),
    ]
    sweeps = [
        Sweep(f"{s.name}-{i}", s.run_one, [c], runs=5, seed=s.seed, cost=s.cost, load=s.load, cpu=s.cpu)
        for i, (s, c) in enumerate(picks)
    ]
    results = {}
    for mode, jobs in (("serial", 1), ("parallel", None)):  # same sweeps, so the same seeds
        started = time.monotonic()
        frames = run_sweeps(sweeps, jobs=jobs, progress=False)
        results[mode] = ([frames[s.name] for s in sweeps], time.monotonic() - started)
    status = 0
    print("cell | serial KB/s ±95% | parallel KB/s ±95% | overlap | lag p99 median serial/parallel (us)")
    for i, (s, c) in enumerate(picks):
        a = summarize_cells(results["serial"][0][i], s.param_names, "goodput_kBps").iloc[0]
        b = summarize_cells(results["parallel"][0][i], s.param_names, "goodput_kBps").iloc[0]
        overlap = abs(a["mean"] - b["mean"]) <= a["margin"] + b["margin"]
        status |= 0 if overlap else 1
        lag = [
            results[m][0][i]["lag_p99_us"].median() if "lag_p99_us" in results[m][0][i] else float("nan")
            for m in ("serial", "parallel")
        ]
        print(
            f"{s.name} {c} | {a['mean']:.1f} ±{a['margin']:.1f} | {b['mean']:.1f} ±{b['margin']:.1f} | "
            f"{'yes' if overlap else 'NO'} | {lag[0]:.0f}/{lag[1]:.0f}"
        )
    print(f"agreement: serial {results['serial'][1]:.0f} s, parallel {results['parallel'][1]:.0f} s")
    return status


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(len(values) * q / 100))]
