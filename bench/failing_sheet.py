"""How long the quick COMN sheet takes for implementations that fail every cell.

    python -m bench failing_sheet [silent] [unreachable] [loopback] [backend=B ...]
                                                       (default: all kinds, backend auto)

Each kind is a folder of COMN programs (Sender2-4 / Receiver2-4) written to fail the way
students' programs do; the sheet must end in minutes with each cell's cause, not run
every transfer to its time limit.
- silent: the senders never send (no progress: stopped after the no-progress window).
- unreachable: the receivers bind the IPv6 loopback (stopped at once: no link reaches it).
- loopback: receivers bound to 127.0.0.1 / "localhost" that work (the sheet must pass
  on netns as on local).
Figures go in BENCHMARKS.md, section "The sheets".
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import sys
import tempfile

from harness.engine import REPO

from bench.sheet import run_sheet

STUDENTS = REPO / "tests" / "fixtures" / "students"
SILENT = "import time\nwhile True:\n    time.sleep(1)\n"
KINDS = ("silent", "unreachable", "loopback")


def make_impl(kind: str, where: str) -> str:
    impl = os.path.join(where, kind)
    os.makedirs(impl)
    for n in (2, 3, 4):
        sender = {2: "Sender2.py", 3: "Sender3.py", 4: "Sender4.py"}[n]
        receiver = {2: "Receiver2.py", 3: "Receiver3.py", 4: "Receiver4.py"}[n]
        if kind == "silent":
            with open(os.path.join(impl, f"Sender{n}.py"), "w") as f:
                f.write(SILENT)
            shutil.copy(STUDENTS / receiver, os.path.join(impl, f"Receiver{n}.py"))
        elif kind == "unreachable":
            shutil.copy(STUDENTS / sender, os.path.join(impl, f"Sender{n}.py"))
            shutil.copy(STUDENTS / "Receiver2Ipv6.py", os.path.join(impl, f"Receiver{n}.py"))
        else:
            shutil.copy(STUDENTS / sender, os.path.join(impl, f"Sender{n}.py"))
            shutil.copy(STUDENTS / receiver, os.path.join(impl, f"Receiver{n}.py"))
    return impl


def _kind_or_backend(text: str) -> str:
    if text not in KINDS and not (text.startswith("backend=") and text[len("backend=") :]):
        raise argparse.ArgumentTypeError(f"{text!r}: expected some of {', '.join(KINDS)} and backend=NAME")
    return text


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench failing_sheet")
    p.add_argument(
        "what",
        nargs="*",
        type=_kind_or_backend,
        metavar="KIND|backend=NAME",
        help=f"some of {', '.join(KINDS)} (default all) and backends (default auto)",
    )
    return p


def run(argv: list[str]) -> int:
    try:
        what = parser().parse_args(argv).what
    except SystemExit as e:
        return int(e.code or 0)
    backends = [a.split("=", 1)[1] for a in what if a.startswith("backend=")] or ["auto"]
    kinds = [a for a in what if a in KINDS] or list(KINDS)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="rdt-bench-failing-") as tmp:
        for kind, backend in [(k, b) for k in kinds for b in backends]:
            impl = make_impl(kind, tmp) if not os.path.isdir(os.path.join(tmp, kind)) else os.path.join(tmp, kind)
            out = os.path.join("out", f"bench-failing-{kind}-{backend}")  # kept to look at
            shutil.rmtree(out, ignore_errors=True)
            argv = [
                sys.executable,
                "-m",
                "rdtlab",
                "sheet",
                "comn",
                "--quick",
                "--impl",
                impl,
                "--questions",
                "q1,q3,q5",
                "--no-progress",
                "--out",
                out,
                "--backend",
                backend,
            ]
            proc, wall, rows = run_sheet(argv, out)
            causes = collections.Counter((r.get("error") or "ok").split(";")[0].split(" (")[0][:60] for r in rows)
            print(
                f"failing sheet {kind} (backend {backend}): wall {wall:.0f} s, {len(rows)} runs ({sum(r['ok'] for r in rows)} ok), "
                f"exit {proc.returncode}, load at start {load:.1f}; causes: "
                + "; ".join(f"{n}x {c}" for c, n in causes.most_common(3)),
                flush=True,
            )
            if kind == "loopback":
                for r in rows:
                    if not r["ok"]:
                        print(f"  failed: {r['sweep']} {r['cell']}: {r['error']}")
                for sweep in sorted({r["sweep"] for r in rows}):
                    good = [r["goodput_kBps"] for r in rows if r["sweep"] == sweep and r["ok"]]
                    if good:
                        print(
                            f"  {sweep}: mean goodput over the ok runs {sum(good) / len(good):.1f} KB/s ({len(good)} runs)"
                        )
    return 0
