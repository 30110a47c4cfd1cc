"""Pacing: a window's packets spread over a round trip instead of sent at once (sans-IO).

Why (the COMN sheet's Q5: W=64, a fixed 66 ms timeout, 25 ms each way,
10 Mbit/s on one shared queue): a window sent at once queues at the bottleneck, and
the last packet of it waits there 64 x 0.86 ms = 55 ms before its round trip of
51 ms even starts. Its ACK comes back after 105 ms, long after its fixed timeout, so
it is sent a second time, and the resends keep the queue that long: every packet
went twice. The same burst follows every stall of the window (when the repaired
packet at its base is acked, the window jumps by up to W). Spread over a round trip,
the packets wait in the sender instead of in the queue, and each one's round trip
(what its timer measures) stays the path's own.

The rate: the window per shortest round trip seen (TCP pacing's cwnd/RTT; Aggarwal,
Savage, Anderson, "Understanding the performance of TCP pacing", INFOCOM 2000), the
rate a window-bound sender averages anyway; before the first round trip is known,
the window per retry timeout (the sender's own guess of a round trip). Up to BURST
packets may still go at once: that queues for at most BURST packet times at the
bottleneck, and spreading small windows out costs them goodput.
Nothing is measured from the spacing of ACKs, which a loaded machine bunches (a
sender starved of CPU reads them in clumps).
"""

from __future__ import annotations

BURST = 8


class Pacer:
    def __init__(self, window: int, first_rtt: float):
        self.window = window
        self.interval = first_rtt / window  # seconds from one packet to the next
        self._next_at = float("-inf")  # when the next packet may go, once a burst is spent

    def may_send(self, now: float) -> bool:
        return now >= self._next_at - 1e-9 * self.interval  # (sums of intervals round)

    def next_send_at(self) -> float:
        return self._next_at

    def sent(self, now: float) -> None:
        """A packet (new or resent) went out: the next new one waits its turn, but a
        sender that was idle may send BURST at once."""
        self._next_at = max(self._next_at, now - (BURST - 1) * self.interval) + self.interval

    def round_trip(self, min_rtt: float) -> None:
        """The shortest round trip seen so far."""
        self.interval = min_rtt / self.window
