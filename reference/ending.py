"""How a transfer ends: when a complete receiver may leave, and when a sender gives up.

Rules without a clock or a socket (sans-IO, like the cores): they are told what was
heard and when, and say when their deadline is. reference/runtime.py runs them on
real sockets and reference/sim.py in simulated time, so the simulator tests the very
rules the programs use. Why these rules: reference/PROTOCOL.md, "How a transfer ends".

The difficulty is the last ACK. Once the receiver has the whole file, the sender may
still lack ACKs for the last packets (they were lost) and keeps resending them; only an
ACK that gets through ends it. The receiver cannot tell "the sender is done" from "the
sender's resends were lost", so it stays until a silence that a sender still trying
would almost never leave: RETRY_INTERVALS of the sender's retry intervals as the
receiver has seen them (at forward loss p a sender still trying is silent that long
with chance p**RETRY_INTERVALS: 1e-6 at 50%). The sender in turn keeps trying often
enough (its back-off is bounded, reference/core/rto.py) that a receiver which stays
answers one of its resends long before it gives up.
"""

from __future__ import annotations

RETRY_INTERVALS = 20  # the receiver's quiet time, in the sender's retry intervals
# The least quiet time: RETRY_INTERVALS x the reference sender's back-off ceiling
# (reference/core/rto.py, 0.5 s), for a receiver that has not yet seen how long the
# sender waits between tries (a small file, complete before any resend).
LINGER = 10.0


class ResendIntervals:
    """The longest time between two arrivals of the same packet: about the sender's
    retry timeout. Remembers the last MEMORY packets only."""

    MEMORY = 1 << 16

    def __init__(self):
        self.last_seen: dict[int, float] = {}
        self.longest = 0.0

    def arrived(self, seq: int, now: float) -> None:
        before = self.last_seen.pop(seq, None)
        if before is not None:
            self.longest = max(self.longest, now - before)
        self.last_seen[seq] = now
        while len(self.last_seen) > self.MEMORY:
            del self.last_seen[next(iter(self.last_seen))]  # the oldest arrival


class ReceiverEnding:
    """When the receiver leaves (done) or fails (sender silent mid-transfer).

    Before the first datagram: no deadline (a server waits). Before completion:
    failure after ``idle_timeout`` s without a datagram. Once complete: leave after a
    silence of max(``linger``, RETRY_INTERVALS x the sender's retry interval), where
    the retry interval is the longest silence between the sender's datagrams or the
    longest time between two copies of one packet, whichever is longer, and at most
    ``max_linger`` s after completion.
    """

    def __init__(
        self,
        linger: float = LINGER,
        max_linger: float = 120.0,
        idle_timeout: float = 60.0,
        retry_intervals: int = RETRY_INTERVALS,
    ):
        self.linger, self.max_linger, self.idle_timeout = linger, max_linger, idle_timeout
        self.retry_intervals = retry_intervals
        self.last_heard: float | None = None
        self.complete_at: float | None = None
        self.longest_gap = 0.0
        self.resends = ResendIntervals()

    def heard(self, seq: int, now: float) -> None:
        """A valid data message for packet ``seq`` arrived."""
        if self.last_heard is not None:
            self.longest_gap = max(self.longest_gap, now - self.last_heard)
        self.resends.arrived(seq, now)
        self.last_heard = now

    def completed(self, now: float) -> None:
        if self.complete_at is None:
            self.complete_at = now

    @property
    def retry_interval(self) -> float:
        """The sender's retry interval as seen from here (an overestimate is safe)."""
        return max(self.longest_gap, self.resends.longest)

    def quiet(self) -> float:
        """The silence after which a complete receiver leaves."""
        return max(self.linger, self.retry_intervals * self.retry_interval)

    def deadline(self) -> float | None:
        """When to leave (complete) or to fail (not complete); None: wait for ever."""
        if self.last_heard is None:
            return None
        if self.complete_at is None:
            return self.last_heard + self.idle_timeout
        return min(self.last_heard + self.quiet(), self.complete_at + self.max_linger)


class SenderGiveUp:
    """The sender gives up when no valid ACK has arrived for ``after`` s (since the first
    send or the last ACK) *and* at least UNANSWERED data messages went out meanwhile.

    Seconds alone are not enough: a sender that backs off sends few messages in them,
    and at loss p each way each has only (1-p)**2 chance of an answer. 64 unanswered
    messages happen to a receiver that is there with chance (1-(1-p)**2)**64: 1e-8 at
    50% each way, 1e-18 at 30%.
    """

    UNANSWERED = 64

    def __init__(self, after: float):
        self.after = after
        self.last_heard: float | None = None
        self.unanswered = 0

    def started(self, now: float) -> None:
        if self.last_heard is None:
            self.last_heard = now

    def sent(self, count: int = 1) -> None:
        self.unanswered += count

    def heard(self, now: float) -> None:
        self.last_heard = now
        self.unanswered = 0

    def deadline(self) -> float | None:
        """When to give up, if nothing more is sent or heard; None: not yet (more
        messages must go unanswered first, or nothing was sent)."""
        if self.last_heard is None or self.unanswered < self.UNANSWERED:
            return None
        return self.last_heard + self.after
