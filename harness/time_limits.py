"""How long a transfer may take, for everything that runs one: `rdtlab run`, the sheets
and the grader. One policy: a time limit is `factor` x an estimate of the run's
duration plus slack, within a floor and a cap; a no-progress window is a number of
rounds (round trip, jitter, the program's own timeout), above a floor. Callers differ
only in what their estimate is and what a failing run costs them, so each picks one of
the named policies below; every number lives here.

- The estimate comes from `harness/models`: `expected_seconds` for a protocol's model
  over the worse direction of the link (`rdtlab run`, which does not know the protocol,
  uses stop-and-wait, the slowest protocol a course runs, so a pipelined program is
  never cut short); the sheets pass their own cell's estimate.
- The no-progress window: a run in which nothing new has entered the link in either
  direction (no new payload; the engine counts repeats separately) and the receiver's
  output has not grown for this long is stopped with the reason; time in which the link
  withheld every answer the sender waits for does not count (`link_withheld` in
  harness/monitor.py). Long enough for a sender's timer to fire a few times: `rounds`
  round trips plus the program's own timeout (the `timeout` parameter, in ms as COMN's
  RetryTimeout) plus 3 sigma of jitter each way, never below the floor (start-up of a
  program on a busy machine, Python's import time).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from harness import models
from harness.engine import spec_summary
from harness.models import Link, stop_and_wait


@dataclass(frozen=True)
class LimitPolicy:
    """A time limit: factor x the estimate + slack_s, within [floor_s, cap_s], rounded
    up to whole seconds if asked. Call it with the estimate in seconds."""

    factor: float
    slack_s: float
    floor_s: float = 0.0
    cap_s: float | None = None
    whole_seconds: bool = False

    def __call__(self, estimate_s: float) -> float:
        limit = self.factor * estimate_s + self.slack_s
        if self.whole_seconds:
            limit = math.ceil(limit)
        limit = max(self.floor_s, limit)
        return limit if self.cap_s is None else min(self.cap_s, limit)


# The estimate is a model's expected duration: 3x it is a limit only a broken program
# meets. `rdtlab run` and the COMN sheet: 10 s for the programs' start-up and end, at
# least 30 s (start-up on a loaded machine), at most 900 s (a full sheet cell at 100 ms
# delay is ~60 s).
RUN = LimitPolicy(factor=3.0, slack_s=10.0, floor_s=30.0, cap_s=900.0)
# The grader waits on every program that hangs, gives up late or storms the link, so a
# generous limit is paid by exactly the submissions that fail: the reference takes
# seconds per scenario, more under load (BENCHMARKS.md, "Grading"), and a goodput
# check already fails a program at half the reference's
# goodput. Whole seconds, as the replay command shows them.
GRADER = LimitPolicy(factor=3.0, slack_s=5.0, floor_s=10.0, whole_seconds=True)
# Sheets whose estimate is a lower bound or a rough guess, not a model of the protocol
# at hand (the capacity bound of multihoming, stop-and-wait-crc's throughput model with
# resends): a wide margin, since a cut-short cell costs a whole sheet's run.
BOUND = LimitPolicy(factor=20.0, slack_s=60.0)
# tcp_like: the lossless transfer time x (1 + 10 loss)^2, at losses up to 50% where a
# TCP-like sender spends most of its time in back-off.
LOSSY_BOUND = LimitPolicy(factor=40.0, slack_s=120.0)
# gbn_vs_tcp: the estimate is already a worst case (1.5 s a packet under jitter).
WORST_CASE = LimitPolicy(factor=1.0, slack_s=60.0)

# The names the callers used before (docs/reference/interfaces.md).
FLOOR_S, CAP_S, FACTOR, STARTUP_S = RUN.floor_s, RUN.cap_s, RUN.factor, RUN.slack_s


def time_limit(expected_s: float) -> float:
    """The limit for a run expected to take `expected_s` seconds (RUN)."""
    return RUN(expected_s)


@dataclass(frozen=True)
class WindowPolicy:
    """A no-progress window: `rounds` x (round trip + 6 jitter + the program's timeout),
    at least floor_s, rounded up to whole seconds if asked."""

    rounds: int
    floor_s: float
    whole_seconds: bool = False


# `rdtlab run` and the sheets that do not set their own: 4 rounds, at least 10 s.
RUN_WINDOW = WindowPolicy(rounds=4, floor_s=10.0)
# The grader: a correct program with a fixed timeout retransmits once per round; 8
# failed rounds in a row at 30% loss both ways happen with p = 0.51^8 = 0.5% per packet,
# so the floor is what protects the heaviest-loss scenarios (5 s is 100 rounds there).
# It also covers a program's start-up before its first packet (Python in the jail:
# 0.05-0.5 s, a JVM ~1 s). RUN_WINDOW's 10 s floor would make the grader wait that long
# on a student's sender that waits 10 s for ACKs before giving up.
GRADER_WINDOW = WindowPolicy(rounds=8, floor_s=5.0, whole_seconds=True)
NO_PROGRESS_FLOOR_S, PATIENCE = RUN_WINDOW.floor_s, RUN_WINDOW.rounds

MODELS = ("blast", "stop-and-wait", "go-back-n", "selective-repeat", "tcp-like", "multipath")
TCP_SEGMENT = 1000  # tcp-like's segment (the report's): its window in bytes / this = packets
MULTIPATH_WINDOW = 32  # multipath: packets in flight per path, no window on its command line
PIPELINED = {"go-back-n": models.gbn_timeout, "selective-repeat": models.sr_timeout}  # -> throughput in KB/s


def link_of(spec: str, shared_queue: bool = True) -> Link:
    """The models' Link for a netem spec: its delay, its long-run loss (any loss model,
    at most 95%) and its rate, as the engine parses them (harness.engine.spec_summary)."""
    parsed = spec_summary(spec)
    return Link(parsed["delay_s"], min(0.95, parsed["loss"]), parsed["rate_bps"] or 1e9, shared_queue=shared_queue)


def jitter_of(spec: str) -> float:
    """netem's `delay D J`: the jitter J in seconds (0 without one)."""
    return spec_summary(spec)["jitter_s"]


def mean_loss(spec: str) -> float:
    """The long-run loss of a netem spec: `loss P%`, a Gilbert-Elliott `loss gemodel` or
    a 4-state `loss state` by the stationary mix of its states (the engine's summary)."""
    return min(0.95, spec_summary(spec)["loss"])


def worse_link(forward: str, reverse: str, shared_queue: bool = True) -> Link:
    """The worse direction of the two as the models' Link, burst loss at its mean."""
    fwd, rev = link_of(forward, shared_queue), link_of(reverse, shared_queue)
    return Link(
        max(fwd.delay_s, rev.delay_s),
        max(fwd.loss, rev.loss),
        min(fwd.rate_bps, rev.rate_bps),
        shared_queue=shared_queue,
    )


def program_timeout_s(params: dict) -> float | None:
    """The programs' retransmission timeout, from the `timeout` parameter (ms)."""
    value = params.get("timeout")
    return value / 1000 if isinstance(value, (int, float)) and value > 0 else None


def retry_timeout_s(params: dict, link: Link) -> float:
    """The programs' timeout, else 2 RTTs of the link (10 ms on a link without delay)."""
    return program_timeout_s(params) or 2 * link.rtt or 0.01


def stop_and_wait_seconds(link: Link, size: int, params: dict) -> float:
    """Stop-and-wait's expected duration over `link`, at retry_timeout_s."""
    return stop_and_wait(link, max(retry_timeout_s(params, link), 1e-3), max(size, 1)).time_s


def expected_seconds(
    forward: str, reverse: str, size: int, params: dict, shared_queue: bool = True, model: str = "stop-and-wait"
) -> float:
    """The expected duration of a transfer of `size` bytes under `model` (one of MODELS)
    over the worse direction, at the programs' timeout (else 2 RTTs) and `window`."""
    link = worse_link(forward, reverse, shared_queue)
    payload = params.get("payload")
    if isinstance(payload, int) and payload > 0:  # stop-and-wait-crc's packet size
        link = replace(link, payload=payload)
    if model == "tcp-like":  # Selective Repeat's model at the window in segments
        asked = params.get("window")
        window_bytes = asked if isinstance(asked, int) else TCP_SEGMENT
        link = replace(link, payload=TCP_SEGMENT)
        params = {**params, "window": max(1, window_bytes // TCP_SEGMENT)}
        model = "selective-repeat"
    elif model == "multipath":  # Selective Repeat over the worse path alone: a bound
        params = {**params, "window": MULTIPATH_WINDOW}
        model = "selective-repeat"
    if model == "blast":
        return max(1, link.packets(size)) * link.t_data + link.rtt
    if model in PIPELINED:
        if not size:
            return link.rtt
        asked = params.get("window")
        window = asked if isinstance(asked, int) and asked > 0 else 1
        throughput = PIPELINED[model](link, window, retry_timeout_s(params, link))
        return size / 1024 / throughput + link.rtt
    return stop_and_wait_seconds(link, size, params)


def no_progress_window(forward: str, reverse: str, params: dict, policy: WindowPolicy = RUN_WINDOW) -> float:
    """Seconds without progress after which a run is stopped (see the module's doc)."""
    rtt = max(link_of(forward).rtt, link_of(reverse).rtt)
    jitter = max(jitter_of(forward), jitter_of(reverse))
    window = policy.rounds * (rtt + 2 * 3 * jitter + (program_timeout_s(params) or 0.0))
    return max(policy.floor_s, math.ceil(window) if policy.whole_seconds else window)
