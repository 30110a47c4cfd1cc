"""How much of stop-and-wait-crc's delay variation is the machine's (why the grader
shows it but does not judge it: assignments/stop_and_wait_crc/spec.py, `shown`).

    python -m bench delay_variation [--rounds N] [--busy K ...]   (the local backend)

The notebook's tiny `sw` cells (IPv4 and IPv6, 1 and 64 KB messages) with the reference
programs, on a quiet machine and beside K busy loops (a kernel sharing its cores with
other work): each run's delay variation, its round-trip samples, the engine's p99 lag
and the host's steal share. The link adds no jitter, so what varies is scheduling.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench delay_variation")
    p.add_argument("--rounds", type=int, default=3, help="runs of each cell per setting (default 3)")
    p.add_argument("--busy", type=int, nargs="+", default=[0, 2], help="busy loops beside the runs (default 0 2)")
    return p


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    from grader.protocol.planted import reference_submission
    from harness import notebook as nb

    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    print(f"{datetime.now():%Y-%m-%d %H:%M} UTC, load {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="rdtlab-bench-dv-") as folder:
        reference_submission(folder, names=("Sender", "Receiver"), package="stop_and_wait_crc")
        lab = nb.Lab("tiny", "stop-and-wait-crc", folder=folder, progress=False)
        cells = lab.sweeps["sw"].cells
        for busy in args.busy:
            loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
            try:
                frame = lab.rerun("sw", cells, reruns=args.rounds)
            finally:
                for p in loops:
                    p.kill()
                    p.wait()
            for (family, kb), runs in frame.groupby(["family", "kb"]):
                dv = [float(v) for v in runs["delay_var_ms"]]
                print(
                    f"busy loops {busy}  {family} {int(kb):>2} KB: delay_var_ms "
                    f"{', '.join(f'{v:.2f}' for v in dv)} (median {statistics.median(dv):.2f}; "
                    f"{int(runs['rtt_samples'].min())} round trips a run); engine p99 lag up to "
                    f"{runs['lag_p99_us'].max() / 1000:.1f} ms; steal up to {runs['steal'].max():.1%}"
                )
    return 0
