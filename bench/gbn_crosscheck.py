"""Go-Back-N three ways at the same settings: the model, the simulator and real sockets.

The reference GBN core runs over reference/sim.py (no sockets, no clock) and, as the
COMN programs Sender3/Receiver3, over the real link engine; harness.models gives the
analytic value. Real and simulated agreeing says the harness adds no distortion; the
gap to the model is the model's own error.

    python -m bench gbn_crosscheck [--seeds N] [--windows 8,16,64]
"""

from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness import Link, Program, run_transfer
from harness.models.link import Link as ModelLink
from harness.models.sliding_window import gbn_timeout
from reference.core import make_receiver, make_sender
from reference.core.config import CoreConfig
from reference.sim import COMN_SIZES, Channel, simulate

DELAY_S, LOSS, SIZE = 0.025, 0.05, 1 << 20
COMN = Path(__file__).resolve().parents[1] / "reference" / "comn"


def timeout_for(window: int) -> float:
    """Above the round trip with a full window queued: 2·delay + W·t_data + 20 ms."""
    return 2 * DELAY_S + window * 1069 * 8 / 10e6 + 0.020


def simulated(window: int, timeout: float, seed: int) -> float:
    data = bytes((i * 7919) % 251 for i in range(SIZE))
    cfg = CoreConfig(timeout=timeout, window=window, seq_modulus=2**16)
    res = simulate(
        make_sender("gbn", data, cfg),
        make_receiver("gbn", cfg),
        Channel(delay=DELAY_S, loss=LOSS, rate=10e6),
        data=data,
        seed=seed,
        sizes=COMN_SIZES,
    )
    return SIZE / 1024 / res.completion_time


def real(window: int, timeout: float, seed: int) -> float:
    res = run_transfer(
        Program(
            f"python3 {COMN}/Sender3.py {{receiver_host}} {{receiver_port}} {{file}} {round(timeout * 1000)} {window}",
            output_format="comn",
        ),
        Program(f"python3 {COMN}/Receiver3.py {{listen_port}} {{output}}"),
        Link(f"delay {DELAY_S * 1000:g}ms loss {LOSS * 100:g}% rate 10mbit"),
        size=SIZE,
        seed=seed,
        backend="local",
        time_limit=600,
    )
    if not res.ok:
        raise RuntimeError(f"real transfer failed (seed {seed}): {res.error}")
    return res.goodput_kBps


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench gbn_crosscheck")
    p.add_argument("--seeds", type=int, default=6)
    p.add_argument("--windows", default="8,16,64")
    return p


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    seeds = range(1, args.seeds + 1)
    print(f"GBN, 25 ms each way, 5% loss each way, 10 Mbit/s full duplex, COMN format, 1 MiB, {args.seeds} seeds")
    print(
        "| window | timeout ms | model KiB/s | simulated KiB/s (mean ± sd) | real KiB/s (mean ± sd) | model vs real |"
    )
    print("|---|---|---|---|---|---|")
    for w in (int(x) for x in args.windows.split(",")):
        to = timeout_for(w)
        model = gbn_timeout(ModelLink(delay_s=DELAY_S, loss=LOSS, shared_queue=False), w, to)
        sim = [simulated(w, to, s) for s in seeds]
        with ThreadPoolExecutor(3) as pool:  # light transfers; 3 at once keep the lag low on 2 cores
            rl = list(pool.map(lambda s: real(w, to, s), seeds))
        fmt = lambda xs: f"{statistics.mean(xs):.1f} ± {statistics.stdev(xs):.1f}"
        print(
            f"| {w} | {to * 1000:.0f} | {model:.1f} | {fmt(sim)} | {fmt(rl)} | "
            f"{(model - statistics.mean(rl)) / statistics.mean(rl):+.0%} |",
            flush=True,
        )
    return 0
