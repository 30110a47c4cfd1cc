"""Benchmark: what the local backend's engine costs a transfer.

The same programs, the same file, run two ways: through the engine over a perfect
link (backend `local`), and talking straight to each other on loopback (`direct`, no
engine), alternating, several times. Two timings, medians compared:
- process time: sender start to sender exit (what a user waits for);
- transfer time: the sender's own clock (size / the throughput it prints), which leaves
  out Python's start-up and so shows the relay's per-packet cost undiluted.
On a perfect loopback link a round trip is ~0.1 ms, so any relay's fixed latency per
packet weighs far more than it does on the lab's links (milliseconds of delay).

    python -m harness.bench transfer [--reps N] [--size BYTES]
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path as FsPath

from harness import Link, Program, run_transfer

REF = FsPath(__file__).resolve().parents[2] / "reference" / "comn"
TARGET = 0.05   # the bar: within 5% of talking directly

CASES = {
    "stop-and-wait (reference Sender2/Receiver2, timeout 20 ms)": (
        Program(f"python3 {REF}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} 20", output_format="comn-sw"),
        Program(f"python3 {REF}/Receiver2.py {{listen_port}} {{output}}")),
    "selective repeat (reference Sender4/Receiver4, window 32)": (
        Program(f"python3 {REF}/Sender4.py {{receiver_host}} {{receiver_port}} {{file}} 20 32", output_format="comn"),
        Program(f"python3 {REF}/Receiver4.py {{listen_port}} {{output}} 32")),
}


def measure(sender: Program, receiver: Program, backend: str, size: int, seed: int) -> tuple[float, float]:
    """(process time, the sender's own transfer time) in seconds."""
    res = run_transfer(sender, receiver, Link(""), size=size, seed=seed, backend=backend, time_limit=300)
    if not res.ok:
        raise RuntimeError(f"{backend} run failed: {res.error}")
    return res.process_time_s, size / 1024 / res.printed["throughput_kBps"]


def run(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.bench transfer")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--size", type=int, default=2 << 20)
    args = ap.parse_args(argv)
    print(f"local backend overhead, {args.size} bytes, {args.reps} alternating runs each, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for name, (sender, receiver) in CASES.items():
        got = {"direct": ([], []), "local": ([], [])}
        for rep in range(args.reps):
            for backend in ("direct", "local"):
                for series, value in zip(got[backend], measure(sender, receiver, backend, args.size, seed=rep)):
                    series.append(value)
        print(name)
        for i, what in enumerate(("process time", "transfer time (sender's clock)")):
            d, l = (statistics.median(got[b][i]) for b in ("direct", "local"))
            print(f"  {what:<31} direct {d:.3f} s, local {l:.3f} s: overhead {l / d - 1:+.1%} "
                  f"(target within {TARGET:.0%})", flush=True)
    return 0
