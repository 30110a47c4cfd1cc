"""How long a transfer may take: a time limit from the expected duration, and the
no-progress window after which a stuck run is stopped early.

- `time_limit(expected_s)`: FACTOR x the expected duration plus start-up slack, within
  [FLOOR_S, CAP_S]. The expected duration comes from `harness/models`: the sheets give
  the model of their cell (GBN, SR, stop-and-wait); `rdtlab run`, which does not know
  the protocol, uses stop-and-wait over the link (`expected_seconds`), the slowest
  protocol a course runs, so a pipelined program is never cut short.
- `no_progress_window(...)`: a run in which nothing new has entered the link in either
  direction (no new payload; the engine counts repeats separately) and the receiver's
  output has not grown for this long is stopped with the reason; time in which the
  link withheld every answer the sender waits for does not count (harness/transfer.py,
  `link_withheld` in harness/monitor.py). Long enough for a sender's timer to
  fire a few times: PATIENCE round trips plus PATIENCE of the program's own timeout
  (the `timeout` parameter, in ms as COMN's RetryTimeout), never below
  NO_PROGRESS_FLOOR_S (start-up of a program on a busy machine, Python's import time).
"""
from __future__ import annotations

import re

from harness.models import Link, stop_and_wait

FLOOR_S = 30.0               # no transfer gets less (start-up on a loaded machine)
CAP_S = 900.0                # nor more (a full sheet cell at 100 ms delay is ~60 s)
FACTOR = 3.0                 # x the expected duration
STARTUP_S = 10.0             # plus this, for the programs' start-up and end
NO_PROGRESS_FLOOR_S = 10.0
PATIENCE = 4                 # round trips plus program timeouts before "no progress"

_TIME = re.compile(r"^(\d+(?:\.\d+)?)(us|usec|ms|msec|s|sec|secs)?$")
_RATE = re.compile(r"^(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps)?$", re.I)
_SECONDS = {None: 1e-6, "us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0}
_BPS = {None: 1, "bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
        "bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9}


def time_limit(expected_s: float) -> float:
    """The limit for a run expected to take `expected_s` seconds."""
    return min(CAP_S, max(FLOOR_S, FACTOR * expected_s + STARTUP_S))


def link_of(spec: str, shared_queue: bool = True) -> Link:
    """The models' Link for a netem spec (delay, loss and rate; the rest is ignored:
    the spec was checked by the engine before, so only what matters here is read)."""
    words = spec.split()
    delay, loss, rate = 0.0, 0.0, 1e9
    for i, word in enumerate(words[:-1]):
        nxt = words[i + 1]
        if word == "delay" and (m := _TIME.match(nxt)):
            delay = float(m.group(1)) * _SECONDS[m.group(2)]
        elif word == "loss":
            value = words[i + 2] if nxt == "random" and i + 2 < len(words) else nxt
            if value.endswith("%"):
                loss = min(0.95, float(value[:-1]) / 100)
        elif word == "rate" and (m := _RATE.match(nxt)):
            rate = float(m.group(1)) * _BPS[(m.group(2) or "bit").lower()]
    return Link(delay, loss, rate, shared_queue=shared_queue)


def jitter_of(spec: str) -> float:
    """netem's `delay D J`: the jitter J in seconds (0 without one)."""
    words = spec.split()
    for i, word in enumerate(words[:-2]):
        if word == "delay" and (m := _TIME.match(words[i + 2])):
            return float(m.group(1)) * _SECONDS[m.group(2)]
    return 0.0


def worse_link(forward: str, reverse: str, shared_queue: bool = True) -> Link:
    """The worse direction of the two as the models' Link."""
    fwd, rev = link_of(forward, shared_queue), link_of(reverse, shared_queue)
    return Link(max(fwd.delay_s, rev.delay_s), max(fwd.loss, rev.loss), min(fwd.rate_bps, rev.rate_bps),
                shared_queue=shared_queue)


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


def expected_seconds(forward: str, reverse: str, size: int, params: dict, shared_queue: bool = True) -> float:
    """Stop-and-wait over the worse direction, at the programs' timeout (else 2 RTTs)."""
    return stop_and_wait_seconds(worse_link(forward, reverse, shared_queue), size, params)


def no_progress_window(forward: str, reverse: str, params: dict) -> float:
    """Seconds without progress after which a run is stopped (see the module's doc)."""
    rtt = max(link_of(forward).rtt, link_of(reverse).rtt)
    return max(NO_PROGRESS_FLOOR_S, PATIENCE * (rtt + (program_timeout_s(params) or 0.0)))
