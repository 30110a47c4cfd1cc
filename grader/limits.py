"""How long a scenario may run: a time limit from the expected duration of the part's
protocol on the scenario's link, and the no-progress window after which a stuck run
is stopped.

A grader waits on every program that hangs, gives up late or storms the link, so a
generous fixed limit (30 s) is paid by exactly the submissions that fail. Here:
- time limit: FACTOR x the model's expected duration (harness/models: the part's
  `model` in the battery, GBN, SR, stop-and-wait or a blast) plus STARTUP_S, at
  least FLOOR_S. The reference takes 0.3-4 s per scenario on the quiet machine and
  up to 1.5x that under load (BENCHMARKS.md), and a goodput check already fails a
  program at half the reference's goodput, so 3x the model is a limit only a broken
  program meets. A scenario's own `time_limit` in the battery wins.
- no progress: nothing new into the link and no output growth for this long stops
  the run (harness `no_progress`). NO_PROGRESS_ROUNDS round trips plus retry
  timeouts (a correct program with a fixed timeout retransmits once per round; 8
  failed rounds in a row at 30% loss both ways happen with p = 0.51^8 = 0.5% per
  packet, so the floor is what protects the heaviest-loss scenarios: 5 s is 100
  rounds there), at least NO_PROGRESS_FLOOR_S, which also covers a program's start-up
  before its first packet (Python in the jail: 0.05-0.5 s, a JVM ~1 s). The
  harness's own floor for `rdtlab run` is 10 s; a student's sender that waits 10 s
  for ACKs before giving up is what made graders wait that long.
"""
from __future__ import annotations

import math
import re
from dataclasses import replace

from harness import models, time_limits

FACTOR = 3.0
STARTUP_S = 5.0
FLOOR_S = 10.0
NO_PROGRESS_ROUNDS = 8
NO_PROGRESS_FLOOR_S = 5.0
MODELS = ("blast", "stop-and-wait", "go-back-n", "selective-repeat")

_GEMODEL = re.compile(r"\bloss\s+gemodel\s+([\d.]+)%?(?:\s+([\d.]+)%?)?(?:\s+([\d.]+)%?)?(?:\s+([\d.]+)%?)?")


def mean_loss(spec: str) -> float:
    """The long-run loss of a netem spec: `loss P%`, or a Gilbert-Elliott `loss gemodel
    p [r [1-h [1-k]]]` (netem's defaults: r = 1-p, 1-h = 100%, 1-k = 0) by its
    stationary mix of the bad and good states."""
    m = _GEMODEL.search(spec)
    if not m:
        return time_limits.link_of(spec).loss
    p, r, bad, good = (float(g) / 100 if g is not None else None for g in m.groups())
    r = 1 - p if r is None else r
    bad = 1.0 if bad is None else bad
    good = 0.0 if good is None else good
    share_bad = p / (p + r) if p + r > 0 else 0.0
    return min(0.95, share_bad * bad + (1 - share_bad) * good)


def model_link(forward: str, reverse: str, shared_queue: bool) -> models.Link:
    """The worse direction of the two as the models' Link, burst loss at its mean."""
    return replace(time_limits.worse_link(forward, reverse, shared_queue),
                   loss=max(mean_loss(forward), mean_loss(reverse)))


PIPELINED = {"go-back-n": models.gbn_timeout, "selective-repeat": models.sr_timeout}   # -> throughput in KB/s


def expected_seconds(model: str, forward: str, reverse: str, size: int, params: dict,
                     shared_queue: bool = True) -> float:
    """The expected duration of a transfer of `size` bytes under `model`."""
    link = model_link(forward, reverse, shared_queue)
    if model == "blast":
        return max(1, link.packets(size)) * link.t_data + link.rtt
    if model in PIPELINED:
        if not size:
            return link.rtt
        window = params.get("window") if isinstance(params.get("window"), int) and params["window"] > 0 else 1
        throughput = PIPELINED[model](link, window, time_limits.retry_timeout_s(params, link))
        return size / 1024 / throughput + link.rtt
    return time_limits.stop_and_wait_seconds(link, size, params)


def time_limit(expected_s: float) -> float:
    return max(FLOOR_S, math.ceil(FACTOR * expected_s + STARTUP_S))


def no_progress_window(forward: str, reverse: str, params: dict) -> float:
    rtt = max(time_limits.link_of(forward).rtt, time_limits.link_of(reverse).rtt)
    jitter = max(time_limits.jitter_of(forward), time_limits.jitter_of(reverse))
    per_round = rtt + 2 * 3 * jitter + (time_limits.program_timeout_s(params) or 0.0)
    return max(NO_PROGRESS_FLOOR_S, math.ceil(NO_PROGRESS_ROUNDS * per_round))

