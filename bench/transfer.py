"""Benchmark: what the local backend's engine costs a transfer.

The same programs, the same file, run two ways: through the engine over a perfect
link (backend `local`), and talking straight to each other on loopback (`direct`, no
engine), alternating, several times. Two timings, medians compared:
- process time: sender start to sender exit (what a user waits for);
- transfer time: the sender's own clock (size / the throughput it prints), which leaves
  out Python's start-up and so shows the relay's per-packet cost undiluted.
On a perfect loopback link a round trip is ~0.1 ms, so any relay's fixed latency per
packet weighs far more than it does on the lab's links (milliseconds of delay). So a
third figure: stop-and-wait over `delay 5ms` on the local backend against what talking
directly would take on such a link (the direct time plus 10 ms per message).

    python -m bench transfer [--reps N] [--size BYTES]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path as FsPath

from harness import Link, Program, run_transfer

REF = FsPath(__file__).resolve().parents[1] / "reference" / "comn"
TARGET = 0.05  # the relay's bar: within 5% of talking directly

CASES = {
    "stop-and-wait (reference Sender2/Receiver2, timeout 20 ms)": (
        Program(f"python3 {REF}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} 20", output_format="comn-sw"),
        Program(f"python3 {REF}/Receiver2.py {{listen_port}} {{output}}"),
    ),
    "selective repeat (reference Sender4/Receiver4, window 32)": (
        Program(f"python3 {REF}/Sender4.py {{receiver_host}} {{receiver_port}} {{file}} 20 32", output_format="comn"),
        Program(f"python3 {REF}/Receiver4.py {{listen_port}} {{output}} 32"),
    ),
}


def measure(
    sender: Program, receiver: Program, backend: str, size: int, seed: int, link: Link = Link("")
) -> tuple[float, float]:
    """(process time, the sender's own transfer time) in seconds."""
    res = run_transfer(sender, receiver, link, size=size, seed=seed, backend=backend, time_limit=300)
    if not res.ok:
        raise RuntimeError(f"{backend} run failed: {res.error}")
    return res.process_time_s, size / 1024 / res.printed["throughput_kBps"]


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench transfer")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--size", type=int, default=2 << 20)
    return p


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    print(
        f"local backend overhead, {args.size} bytes, {args.reps} alternating runs each, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    for name, (sender, receiver) in CASES.items():
        got = {"direct": ([], []), "local": ([], [])}
        for rep in range(args.reps):
            for backend in ("direct", "local"):
                for series, value in zip(got[backend], measure(sender, receiver, backend, args.size, seed=rep)):
                    series.append(value)
        print(name)
        for i, what in enumerate(("process time", "transfer time (sender's clock)")):
            d, l = (statistics.median(got[b][i]) for b in ("direct", "local"))
            print(
                f"  {what:<31} direct {d:.3f} s, local {l:.3f} s: overhead {l / d - 1:+.1%} "
                f"(target within {TARGET:.0%})",
                flush=True,
            )
        if "stop-and-wait" in name:
            sw_at_5ms(sender, receiver, args, statistics.median(got["direct"][1]))
    return 0


def sw_at_5ms(sender: Program, receiver: Program, args, direct_s: float) -> None:
    """Stop-and-wait over 5 ms each way: measured vs direct time + 10 ms per message."""
    size = args.size // 8  # 256 messages at 2 MiB: ~2.6 s a run
    messages = -(-size // 1024)
    got = [measure(sender, receiver, "local", size, rep, Link("delay 5ms"))[1] for rep in range(args.reps)]
    ideal = direct_s / 8 + messages * 0.010
    local = statistics.median(got)
    print(
        f"  over 'delay 5ms', {size} bytes: local {local:.3f} s vs direct + 10 ms/message {ideal:.3f} s: "
        f"overhead {local / ideal - 1:+.1%} (target within {TARGET:.0%})",
        flush=True,
    )
