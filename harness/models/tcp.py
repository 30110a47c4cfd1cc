"""TCP throughput models and the RFC 6298 retransmission timer."""

from __future__ import annotations

import math
from typing import Iterable


def mathis(mss_bytes: float, rtt_s: float, loss: float, c: float = math.sqrt(1.5)) -> float:
    """Mathis et al. 1997: throughput <= C·MSS/(RTT·sqrt(p)), C = sqrt(3/2) ~ 1.22.

    Units: bytes, seconds -> bytes per second. Assumes periodic loss, congestion
    avoidance only (no timeouts, no slow start), a window never limited by the receiver.
    On the COMN link p is the segment loss each direction (ACK loss is ignored: ACKs
    are cumulative) and RTT = 2·delay plus serialisation."""
    _check(rtt_s > 0 and 0 < loss < 1, f"need rtt > 0 and 0 < loss < 1, got {rtt_s}, {loss}")
    return c * mss_bytes / (rtt_s * math.sqrt(loss))


def pftk(
    mss_bytes: float, rtt_s: float, loss: float, rto_s: float, wmax_packets: float = math.inf, b: int = 2
) -> float:
    """Padhye, Firoiu, Towsley, Kurose 1998 ("Modeling TCP throughput"), full model,
    eq. (32), in bytes per second:

        B = MSS · min( Wmax/RTT,
                       1 / (RTT·sqrt(2bp/3) + T0·min(1, 3·sqrt(3bp/8))·p·(1+32p²)) )

    p: loss indication probability per segment; b: segments acknowledged per ACK
    (2 with delayed ACKs); T0: the retransmission timeout; Wmax: the receiver's window
    in segments (iperf3 -w / MSS)."""
    _check(
        rtt_s > 0 and rto_s > 0 and 0 < loss < 1 and b >= 1,
        f"need rtt, rto > 0, 0 < loss < 1, b >= 1; got {rtt_s}, {rto_s}, {loss}, {b}",
    )
    p = loss
    denom = rtt_s * math.sqrt(2 * b * p / 3) + rto_s * min(1.0, 3 * math.sqrt(3 * b * p / 8)) * p * (1 + 32 * p * p)
    return mss_bytes * min(wmax_packets / rtt_s, 1 / denom)


def rfc6298_rto(
    samples: Iterable[float],
    alpha: float = 1 / 8,
    beta: float = 1 / 4,
    k: float = 4,
    granularity_s: float = 0.0,
    min_rto_s: float = 1.0,
    max_rto_s: float = 60.0,
) -> list[float]:
    """RTO after each RTT sample (RFC 6298 section 2), seconds.

    First sample R: SRTT = R, RTTVAR = R/2. Later samples R': RTTVAR = (1-beta)·RTTVAR +
    beta·|SRTT - R'| (with the old SRTT), then SRTT = (1-alpha)·SRTT + alpha·R'.
    RTO = SRTT + max(G, K·RTTVAR), clamped to [min_rto, max_rto] (RFC: min 1 s; seed
    000 uses alpha 0.125, beta 0.25 with a smaller minimum: pass min_rto_s)."""
    rtos: list[float] = []
    srtt: float | None = None
    rttvar = 0.0
    for r in samples:
        _check(r >= 0, f"RTT samples must be >= 0, got {r}")
        if srtt is None:
            srtt, rttvar = r, r / 2
        else:
            rttvar = (1 - beta) * rttvar + beta * abs(srtt - r)
            srtt = (1 - alpha) * srtt + alpha * r
        rtos.append(min(max(srtt + max(granularity_s, k * rttvar), min_rto_s), max_rto_s))
    return rtos


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)
