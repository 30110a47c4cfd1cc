"""Round trips of single packets, read from the engine's trace (seed 002's RTT and
"delay variance"), so they come from the wire, not from what a program prints.

A packet's round trip is from its data message entering the link (for a datagram
larger than the MTU: its first IP fragment, which carries the sequence number) to the
first ACK naming it leaving the link towards the sender: what the sender's socket sees,
less the few microseconds between its kernel and the link. Karn's rule: a packet sent
more than once gives no sample (an ACK may answer either copy), nor does the last packet
(it carries the file's remainder, shorter than the others). The ACKs must name the
packet they acknowledge (stop-and-wait, Selective Repeat); the message format is the
one harness.plots.trace detects (COMN in either byte order, or the extended format).

Seed 002's delay variance is the mean absolute difference between each packet's round
trip and their mean ("subtracting the actual RTT of each packet to the overall RTT ...
add up all these differences, and divide by the number of packets"), in ms.
"""

from __future__ import annotations

import math
import os
import statistics
from collections import defaultdict


def load_trace(trace_path: str | None):
    """The trace, decoded once for round_trips, resend_gaps and rtt_fields (None if absent)."""
    if not trace_path or not os.path.exists(trace_path):
        return None
    from harness.plots.trace import load

    return load(trace_path, ack="selective")


def _sends(tr, skip_eof: bool = False) -> dict[int, list[float]]:
    """When each data message entered the link, by sequence number."""
    sends: dict[int, list[float]] = defaultdict(list)
    for p in tr.sent():
        if not (skip_eof and p.eof):
            sends[p.seq].append(p.t_in)
    return sends


def round_trips(tr) -> list[float]:
    """Seconds from each once-sent data message into the link to its first ACK out."""
    # the last packet is shorter than the others: its round trip is not theirs
    sends = _sends(tr, skip_eof=True)
    acked: dict[int, list[float]] = defaultdict(list)
    for p in tr.acks:
        if p.t_out is not None:
            acked[p.seq].append(p.t_out)
    out = []
    for seq, times in sends.items():
        if len(times) != 1:
            continue
        back = [t for t in acked.get(seq, ()) if t > times[0]]
        if back:
            out.append(min(back) - times[0])
    return out


def resend_gaps(tr) -> list[list[float]]:
    """For each packet sent more than once, the seconds between one send and the next,
    as seen on the wire (a timer that doubles at every timeout makes them double)."""
    if tr is None:
        return []
    return [[b - a for a, b in zip(times, times[1:])] for times in _sends(tr).values() if len(times) > 1]


def rtt_fields(tr) -> dict:
    """A sweep row's fields: rtt_ms (mean), rtt_p50_ms, delay_var_ms, rtt_samples."""
    if tr is None:
        return {}
    samples = round_trips(tr)
    if not samples:
        return {"rtt_samples": 0}
    mean = statistics.fmean(samples)
    return {
        "rtt_ms": mean * 1000,
        "rtt_p50_ms": statistics.median(samples) * 1000,
        "delay_var_ms": statistics.fmean(abs(s - mean) for s in samples) * 1000,
        "rtt_samples": len(samples),
    }


def mbps(kBps: float | None) -> float:
    """KiB/s (TransferResult.goodput_kBps) in Mbit/s (10^6 bit/s, the report's unit)."""
    return kBps * 1024 * 8 / 1e6 if kBps is not None and math.isfinite(kBps) else float("nan")
