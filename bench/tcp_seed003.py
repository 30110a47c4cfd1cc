"""The TCP-like reference against seed 003's own sender, in the simulator.

    python -m bench tcp_seed003 [--seeds N]

The report's sender is bene's tcp.py as its trace shows it (a public copy with the
report's trace messages and end-of-run prints): a fixed window of bytes, one 1 s timer
restarted on every new ACK and every resend, and on a timeout or on the fourth ACK of
one number (``sameAcks`` is 1 on a new ACK, so that is the third duplicate) it resends
the oldest segment with bene's ``SendBuffer.resend(reset=True)``: the rest of the window
counts as unsent, so the next new ACK sends the whole window again. ``ReportSender``
below is that algorithm as a sans-IO core in packet numbers, run over the same
reference/sim.py channel as ours (COMN sizes, separate queues, netem semantics).

1. The report's fast-retransmit runs: 514,520 bytes, 1000-byte segments, windows 10,000
   and 15,000 bytes, 20% loss each way (data and ACKs), fixed 1 s timeout, k = 3.
2. The report's test.txt runs: 10,000 bytes, window 3000, no fast retransmit.
3. The sheet's loss sweep: 200,000 bytes, window 10,000, the adaptive RTO, k = 0/3/4.
4. Ours with large windows on 10 Mbit/s, 25 ms (where copies would only cost capacity).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from reference.core import CoreConfig, make_receiver, make_sender
from reference.core.api import Ack, Data, SenderStats
from reference.core.base import split
from reference.sim import COMN_SIZES, Channel, WireSizes, simulate

RATE = 10e6
FILE = 514_520


class ReportSender:
    """Seed 003's sender (bene's tcp.py), in packet numbers: see the module's docstring."""

    def __init__(self, data: bytes, window: int, same_acks: int, timeout: float = 1.0, payload: int = 1000):
        self.payloads = split(data, payload)
        self.window, self.same_acks_at, self.timeout = window, same_acks, timeout
        self.base = self.next = 0  # bene's send buffer: oldest unacked, next to send
        self.deadline: float | None = None
        self.same_acks = 0
        self.stats = SenderStats()
        self.failed = False
        self._out: list[Data] = []
        self._sent: set[int] = set()
        self._send_window()
        self._start_timer(0.0)

    @property
    def done(self) -> bool:
        return self.base >= len(self.payloads)

    def next_timer(self) -> float | None:
        return None if self.done else self.deadline

    def datagrams_to_send(self, now: float) -> list[Data]:
        out, self._out = self._out, []
        return out

    def receive(self, ack: Ack, now: float) -> None:
        self.stats.acks_received += 1
        expected = ack.seq + 1
        if expected > self.base:  # new ACK: slide, restart the timer, fill the window
            self.base, self.next = expected, max(self.next, expected)
            self.deadline = None
            self._start_timer(now)
            self._send_window()
            self.same_acks = 1
        elif self.same_acks_at and expected == self.base:
            self.same_acks += 1
            if self.same_acks == self.same_acks_at:
                self.stats.fast_retransmits += 1
                self.deadline = None
                self._resend(now)

    def handle_timer(self, now: float) -> None:
        if self.deadline is not None and now >= self.deadline and not self.done:
            self.stats.timeouts += 1
            self.deadline = None
            self._resend(now)

    def _resend(self, now: float) -> None:
        self.next = self.base + 1  # resend(reset=True): the rest counts as unsent
        self._start_timer(now)
        self._emit(self.base)

    def _send_window(self) -> None:
        while self.next - self.base < self.window and self.next < len(self.payloads):
            self._emit(self.next)
            self.next += 1

    def _start_timer(self, now: float) -> None:
        if self.deadline is None and not self.done:
            self.deadline = now + self.timeout

    def _emit(self, seq: int) -> None:
        self.stats.packets_sent += 1
        if seq in self._sent:
            self.stats.retransmissions += 1
        self._sent.add(seq)
        self._out.append(Data(seq, self.payloads[seq], seq == len(self.payloads) - 1))


def report_link(loss: float) -> Channel:
    return Channel(delay=0.010, rate=RATE, limit=100, loss=loss)


def one(sender_of, config: CoreConfig, size: int, link: Channel, seed: int, sizes=COMN_SIZES):
    data = random.Random(seed).randbytes(size)
    res = simulate(sender_of(data), make_receiver("tcp", config), link, seed=seed, sizes=sizes, time_limit=5000)
    if not res.ok:
        raise RuntimeError(f"seed {seed}: the transfer did not complete")
    return res


def summary(sender_of, config, size, link, seeds, sizes=COMN_SIZES) -> dict:
    runs = [one(sender_of, config, size, link, s, sizes) for s in seeds]
    t = [r.completion_time for r in runs]
    return {
        "mean": statistics.mean(t),
        "min": min(t),
        "max": max(t),
        "timeouts": statistics.mean(r.sender_stats.timeouts for r in runs),
        "per_unique": statistics.mean(r.sender_stats.packets_sent for r in runs) / -(-size // config.payload_size),
    }


def row(label: str, s: dict) -> str:
    return (
        f"| {label} | {s['mean']:.2f} | {s['min']:.2f}-{s['max']:.2f} | {s['timeouts']:.1f} | {s['per_unique']:.2f} |"
    )


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench tcp_seed003")
    p.add_argument("--seeds", type=int, default=20, help="runs per setting (default 20)")
    return p


def run(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if args.seeds < 1:
        print("tcp_seed003: --seeds must be 1 or more", file=sys.stderr)
        return 2
    seeds = range(1, args.seeds + 1)
    started = time.monotonic()
    head = "| sender | mean s | min-max s | timeouts | packets per segment |\n|---|---|---|---|---|"

    def fixed(window: int, k: int) -> CoreConfig:
        return CoreConfig(payload_size=1000, window_bytes=window, dup_ack_threshold=k, timeout=1.0)

    print(
        f"1. 514,520 bytes, 20% loss each way, fixed 1 s timeout, {args.seeds} seeds "
        "(report: 78.1 s off / 20.3 s on at window 10,000; 50 / 7 s at 15,000)\n"
    )
    for window in (10_000, 15_000):
        print(f"window {window:,}\n{head}")
        for k in (0, 3):
            same_acks = k + 1 if k else 0  # its count includes the first ACK of the number
            print(
                row(
                    f"report's, {'off' if not k else 'on (4 ACKs of one number)'}",
                    summary(
                        lambda d: ReportSender(d, window // 1000, same_acks),
                        fixed(window, k),
                        FILE,
                        report_link(0.2),
                        seeds,
                    ),
                )
            )
            for kk in (0,) if not k else (3, 4):
                print(
                    row(
                        f"ours, k = {kk}",
                        summary(
                            lambda d, kk=kk: make_sender("tcp", d, fixed(window, kk)),
                            fixed(window, kk),
                            FILE,
                            report_link(0.2),
                            seeds,
                        ),
                    )
                )
        print()

    print(
        f"2. test.txt: 10,000 bytes, window 3000, no fast retransmit, fixed 1 s "
        f"(report: 1.08 s at 10% and 20%, 16.1 s at 50%), {2 * args.seeds} seeds\n\n| loss | report's s | ours s |\n|---|---|---|"
    )
    for loss in (0.1, 0.2, 0.5):
        seeds2 = range(1, 2 * args.seeds + 1)
        theirs = summary(lambda d: ReportSender(d, 3, 0), fixed(3000, 0), 10_000, report_link(loss), seeds2)
        ours = summary(
            lambda d: make_sender("tcp", d, fixed(3000, 0)), fixed(3000, 0), 10_000, report_link(loss), seeds2
        )
        print(f"| {loss:.0%} | {theirs['mean']:.2f} | {ours['mean']:.2f} |")

    print(
        f"\n3. The sheet's loss sweep: 200,000 bytes, window 10,000, adaptive RTO (initial 100 ms), "
        f"{max(1, args.seeds // 2)} seeds\n\n| loss | k = 0 s | k = 3 s | k = 4 s |\n|---|---|---|---|"
    )
    for loss in (0.1, 0.2, 0.3, 0.4, 0.5):
        cells = []
        for k in (0, 3, 4):
            cfg = CoreConfig(
                payload_size=1000, window_bytes=10_000, dup_ack_threshold=k, adaptive=True, initial_rto=0.1, timeout=0.1
            )
            cells.append(
                summary(
                    lambda d, cfg=cfg: make_sender("tcp", d, cfg),
                    cfg,
                    200_000,
                    report_link(loss),
                    range(1, max(1, args.seeds // 2) + 1),
                )["mean"]
            )
        print(f"| {loss:.0%} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")

    print(
        "\n4. Ours, 1 MiB, windows in packets of 1024 bytes, 10 Mbit/s, 25 ms each way, adaptive RTO, k = 3, "
        "extended-format sizes, 5 seeds\n\n| window | loss | s | packets per segment |\n|---|---|---|---|"
    )
    for window in (16, 64, 256):
        for loss in (0.01, 0.05, 0.15):
            cfg = CoreConfig(window=window, adaptive=True, dup_ack_threshold=3)
            s = summary(
                lambda d, cfg=cfg: make_sender("tcp", d, cfg),
                cfg,
                1 << 20,
                Channel(delay=0.025, rate=RATE, loss=loss),
                range(1, 6),
                sizes=WireSizes(),
            )
            print(f"| {window} | {loss:.0%} | {s['mean']:.2f} | {s['per_unique']:.2f} |")
    print(f"\n(simulated; {time.monotonic() - started:.0f} s on this machine)")
    return 0
