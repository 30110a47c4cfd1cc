"""Benchmark: the reference COMN programs on the COMN sheet's own cells, against the
models and against seed 004's student (the reference must be at least as
fast as its model and as the best student on the same contract).

    python -m bench reference_comn [--quick] [--runs 5] [--size BYTES]

The course's link: netem on `lo`, so both directions share one rate queue
(`Link(..., shared_queue=True)`), `delay D loss 5% rate 10mbit`, local backend, 1 MiB
of seeded random bytes, seeds 1..runs, mean ± sd of the harness's goodput (file KiB
/ wire time) and of what the sender printed (the COMN throughput). Cells (seed 004's
settings): Q5 Sender4 at 25 ms, RetryTimeout 66 ms, windows 8-64 (--quick: 64);
Q3 Sender3 at 25 ms / 66 ms, windows 16 and 64, and at 5 ms / 20 ms, window 16; Q1
Sender2 at 5 ms, RetryTimeouts 20 and 50 ms. Models: harness.models (sr_timeout,
gbn_timeout, stop_and_wait) for the same link. The load average is printed with
the figures: the programs are Python processes on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

# seed 004's averages of 5 runs (KB/s): Q5 SR at 25 ms, Q3 GBN, Q1 stop-and-wait at 5 ms
SEED004 = {
    ("sr", 25, 66, 8): 100.74,
    ("sr", 25, 66, 16): 170.38,
    ("sr", 25, 66, 32): 283.42,
    ("sr", 25, 66, 64): 440.30,
    ("gbn", 25, 66, 16): 89,
    ("gbn", 25, 66, 64): 137,
    ("gbn", 5, 20, 16): 336,
    ("sw", 5, 20, 1): 70,
    ("sw", 5, 50, 1): 53,
}


def cells(quick: bool) -> list[tuple[str, int, int, int]]:
    """(protocol, delay ms, RetryTimeout ms, window)."""
    q5 = [("sr", 25, 66, w) for w in ([64] if quick else [8, 16, 32, 64])]
    if quick:
        return q5
    return q5 + [("gbn", 25, 66, 16), ("gbn", 25, 66, 64), ("gbn", 5, 20, 16), ("sw", 5, 20, 1), ("sw", 5, 50, 1)]


def programs(protocol: str):
    from harness import Program

    n = {"sw": 2, "gbn": 3, "sr": 4}[protocol]
    window = " {window}" if n > 2 else ""
    sender = Program(
        f"python3 {{impl}}/Sender{n}.py {{receiver_host}} {{receiver_port}} {{file}} {{timeout}}{window}",
        output_format="comn-sw" if n == 2 else "comn",
    )
    receiver = Program(f"python3 {{impl}}/Receiver{n}.py {{listen_port}} {{output}}" + (" {window}" if n == 4 else ""))
    return sender, receiver


def model_kBps(protocol: str, delay_ms: int, timeout_ms: int, window: int, size: int) -> float:
    from harness import models

    link = models.Link(delay_s=delay_ms / 1000, loss=0.05, shared_queue=True)
    if protocol == "sw":
        return models.stop_and_wait(link, timeout_ms / 1000, size).throughput_kBps
    if protocol == "gbn":
        return models.gbn_timeout(link, window, timeout_ms / 1000)
    return models.sr_timeout(link, window, timeout_ms / 1000)


def measure(
    protocol: str, delay_ms: int, timeout_ms: int, window: int, runs: int, size: int, impl: str = "reference/comn"
) -> dict:
    from harness import Link, run_transfer

    sender, receiver = programs(protocol)
    goodput, printed, retx, failures = [], [], [], []
    for seed in range(1, runs + 1):
        r = run_transfer(
            sender=sender,
            receiver=receiver,
            link=Link(forward=f"delay {delay_ms}ms loss 5% rate 10mbit", shared_queue=True),
            params={"impl": impl, "timeout": timeout_ms, "window": window},
            size=size,
            seed=seed,
            backend="local",
            time_limit=600,
        )
        if not r.ok:
            failures.append(f"seed {seed}: {r.error}")
            continue
        goodput.append(r.goodput_kBps)
        printed.append((r.printed or {}).get("throughput_kBps") or 0.0)
        retx.append(r.retransmissions)
    return {
        "goodput": goodput,
        "printed": printed,
        "retx": retx,
        "failures": failures,
        "model": model_kBps(protocol, delay_ms, timeout_ms, window, size),
        "seed004": SEED004.get((protocol, delay_ms, timeout_ms, window)),
    }


def _mean_sd(xs: list[float]) -> str:
    if not xs:
        return "—"
    return f"{statistics.mean(xs):.1f} ± {statistics.stdev(xs):.1f}" if len(xs) > 1 else f"{xs[0]:.1f}"


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench reference_comn")
    p.add_argument("--quick", action="store_true", help="Q5 at window 64 only")
    p.add_argument("--runs", type=int, default=5, help="runs per cell (default 5, as the sheet)")
    p.add_argument("--size", type=int, default=1 << 20, help="file bytes (default 1 MiB)")
    p.add_argument("--impl", default="reference/comn", help="folder of the COMN programs")
    return p


def run(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if args.runs < 1 or args.size < 1:
        print("reference_comn: --runs and --size must be >= 1", file=sys.stderr)
        return 2
    from harness.engine import find_linkemu

    try:
        find_linkemu()
    except Exception as e:
        print(f"bench reference_comn: needs the link engine ({e}); run `make build`", file=sys.stderr)
        return 1
    print(f"load average at start: {os.getloadavg()[0]:.2f} (1 min)")
    print(
        "| program | delay ms | timeout ms | window | goodput KiB/s | printed KB/s | model | seed 004 | "
        "retransmissions | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
    began, failed = time.monotonic(), 0
    for protocol, delay, timeout, window in cells(args.quick):
        row = measure(protocol, delay, timeout, window, args.runs, args.size, args.impl)
        failed += len(row["failures"])
        name = {"sw": "Sender2", "gbn": "Sender3", "sr": "Sender4"}[protocol]
        seed = "—" if row["seed004"] is None else f"{row['seed004']:g}"
        print(
            f"| {name} | {delay} | {timeout} | {window} | {_mean_sd(row['goodput'])} | {_mean_sd(row['printed'])} | "
            f"{row['model']:.1f} | {seed} | {statistics.mean(row['retx']) if row['retx'] else 0:.0f} | "
            f"{os.getloadavg()[0]:.1f} |",
            flush=True,
        )
        for line in row["failures"]:
            print(f"  FAILED {name} W={window}: {line}", flush=True)
    print(f"({time.monotonic() - began:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
