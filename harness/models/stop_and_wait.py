"""Stop-and-wait (COMN Sender2/Receiver2) with loss and a fixed retransmission timeout."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .link import Link


@dataclass(frozen=True)
class StopAndWait:
    retransmissions: float  # expected number for the whole file
    throughput_kBps: float  # expected goodput, KiB/s
    time_s: float  # expected transfer time, seconds


def stop_and_wait_utilisation(link: Link) -> float:
    """Textbook utilisation without loss: t_data / (t_data + 2·delay + t_ack)."""
    return link.t_data / link.rtt


def stop_and_wait(link: Link, timeout_s: float, size_bytes: int) -> StopAndWait:
    """Expected retransmissions and goodput of stop-and-wait.

    Assumptions: an attempt succeeds when neither the data packet nor its ACK is lost
    (probability q = (1-loss)^2); the timer starts when a copy is sent and a timeout
    resends the packet and restarts the timer; a successful copy's ACK is back one idle
    RTT after that copy left; processing time is zero.
    - timeout >= RTT: a failed attempt costs the timeout, so per packet
      E[retransmissions] = (1-q)/q and E[time] = RTT + timeout·(1-q)/q.
    - timeout < RTT (premature timeouts): copies go out every `timeout` until the first
      successful copy's ACK is back; with J failed copies before it (geometric, mean
      (1-q)/q) the ACK arrives at J·timeout + RTT, by which time J + ceil(RTT/timeout)
      copies were sent. Extra copies' link time is neglected.
    """
    if timeout_s <= 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout_s}")
    q = (1 - link.loss) ** 2
    failed = (1 - q) / q
    copies_before_ack = math.ceil(link.rtt / timeout_s - 1e-12)
    per_packet_retx = failed + copies_before_ack - 1
    per_packet_time = link.rtt + failed * timeout_s
    n = link.packets(size_bytes)
    time_s = n * per_packet_time
    return StopAndWait(n * per_packet_retx, size_bytes / 1024 / time_s, time_s)
