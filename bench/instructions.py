"""What a kit figure's showing and nbgrader's metadata check cost, in instructions
(valgrind's callgrind: the same count whatever else the machine runs).

    python -m bench.instructions [--trace FILE]

Each case runs in a Python of its own under callgrind; the figure is printed after
subtracting the same process without the step measured:
  - a time-sequence graph (harness.plots.draw) of a recorded trace, printed as the
    inline backend prints a Figure (tight bounding box) and at its own size (what the
    kit's figures get: harness/plots/inline.py); without --trace a stop-and-wait
    transfer of 100 KB over the COMN link is run first to record one;
  - nbgrader's CheckCellMetadata over the comn notebook's cells, twice (before and after
    the kernel, as autograde runs it), with nbgrader's own jsonschema.validate and with
    grader/notebook/schema_once.py.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness.engine import REPO

NOTEBOOK = os.path.join(REPO, "assignments", "source", "comn", "results_sheet.ipynb")


def _case(step: str, arg: str) -> None:
    """One measured process's work (run under callgrind by `main`)."""
    if step.startswith("figure"):
        from IPython.core.pylabtools import print_figure
        from harness.plots import draw

        fig = draw(arg, figsize=(11, 5.5), title="t")
        if step != "figure-drawn":
            print_figure(fig, "png", bbox_inches="tight" if step == "figure-tight" else None, base64=True)
    else:
        import nbformat
        from nbgrader.preprocessors import CheckCellMetadata

        if step == "schema-once":
            from grader.notebook import schema_once

            schema_once.install()
        nb = nbformat.read(arg, as_version=4)
        if step != "schema-read":
            for _ in range(2):
                CheckCellMetadata().preprocess(nb, {})


def _instructions(step: str, arg: str) -> int:
    with tempfile.TemporaryDirectory(prefix="rdt-callgrind-") as tmp:
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/out",
                sys.executable,
                "-m",
                "bench.instructions",
                "--case",
                step,
                arg,
            ],
            cwd=REPO,
            env={**os.environ, "PYTHONMALLOC": "malloc"},
            capture_output=True,
            text=True,
        )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or not found:
        sys.exit(f"bench.instructions: {step} failed under callgrind: {(out.stderr.strip().splitlines() or ['?'])[-1]}")
    return int(found.group(1))


def _record_trace(path: str) -> None:
    from harness import Link, Program, run_transfer

    ref = os.path.join(REPO, "reference", "comn")
    res = run_transfer(
        Program(f"python3 {ref}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} 20"),
        Program(f"python3 {ref}/Receiver2.py {{listen_port}} {{output}}"),
        Link("loss 5% delay 5ms rate 10mbit", shared_queue=True),
        size=100 << 10,
        seed=3,
        backend="local",
        trace=path,
    )
    if not res.ok:
        sys.exit(f"bench.instructions: the transfer to draw failed: {res.error}")


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench.instructions")
    p.add_argument("--trace", help="a recorded trace to draw (default: record one)")
    p.add_argument("--case", nargs=2, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.case:
        _case(*args.case)
        return 0
    if shutil.which("valgrind") is None:
        sys.exit("bench.instructions: needs valgrind (Debian's package valgrind)")
    with tempfile.TemporaryDirectory(prefix="rdt-instructions-") as tmp:
        trace = args.trace or os.path.join(tmp, "sw.trace")
        if not args.trace:
            _record_trace(trace)
        drawn = _instructions("figure-drawn", trace)
        tight, own = (_instructions(s, trace) - drawn for s in ("figure-tight", "figure-own"))
        read = _instructions("schema-read", NOTEBOOK)
        nbgrader, once = (_instructions(s, NOTEBOOK) - read for s in ("schema-nbgrader", "schema-once"))
    print(
        f"a time-sequence graph shown: {tight / 1e6:.0f} M instructions with the tight box, {own / 1e6:.0f} M at "
        f"its own size ({own / tight - 1:+.0%})"
    )
    print(
        f"nbgrader's metadata check of the comn notebook, twice: {nbgrader / 1e6:.0f} M instructions, "
        f"{once / 1e6:.0f} M with the schema checked once ({once / nbgrader - 1:+.0%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
