"""The retransmission timeout: fixed, or estimated from RTT samples as RFC 6298 says.

RFC 6298 (what TCP does, and seed 000's EstimatedRTT/DevRTT):

    first sample R:   SRTT = R,  RTTVAR = R/2
    later samples R:  RTTVAR = (1 - beta) * RTTVAR + beta * |SRTT - R|   (old SRTT)
                      SRTT   = (1 - alpha) * SRTT + alpha * R
    RTO = SRTT + max(G, 4 * RTTVAR), kept within [min_rto, max_rto]

with alpha = 1/8, beta = 1/4 and G the clock granularity, here ``rto_margin`` (10 ms
by default: our clocks are finer, but a margin that small times out spuriously). Karn's rule (the caller's
job): never take a sample from a packet that was sent more than once, because its ACK
may answer either copy.

Exponential back-off (RFC 6298 5.5): a timeout doubles the RTO, up to max_rto. It
returns to the estimate (or the fixed timeout, seed 002) once a new packet is acked
(or, with `backoff_until_sample`, not before the first sample: RFC 6298 5.7).
RFC 6298 waits for the next RTT sample instead, but on a very lossy link Karn's rule
can leave no sample for a long time and the RTO would stick at max_rto; an ACK of new
data is proof enough that the path works (TCP with timestamps gets the same). When
many packets have their own timers (Selective Repeat) a burst of timeouts is one sign
of trouble, not many, so the RTO doubles at most once per RTO.

The back-off stops at BACKOFF_CEILING (0.5 s, or the estimate if that is higher), far
below RFC 6298's 60 s: the sender's give-up and the receiver's linger (reference/
ending.py) count on a sender that keeps asking. At 50% loss each way a round trip gets
through 1 time in 4; backing off to 60 s would leave about 7 tries in the sender's
30 s without an ACK (13% of giving up on a receiver that is there); 0.5 s leaves 55+.
"""

from __future__ import annotations

from reference.core.config import CoreConfig

ALPHA = 1 / 8
BETA = 1 / 4
K = 4
BACKOFF_CEILING = 0.5  # seconds: back-off doubles the RTO up to this, or to the estimate


class RtoEstimator:
    def __init__(self, config: CoreConfig):
        self.adaptive = config.adaptive
        self.backoff = config.use_backoff
        self.until_sample = config.backoff_until_sample
        self.min_rto, self.max_rto = config.min_rto, config.max_rto
        self.margin = config.rto_margin
        self.srtt: float | None = None
        self.rttvar: float | None = None
        # A fixed timeout is used as given (COMN sweeps go down to 5 ms).
        self.base_rto = self._clamp(config.initial_rto) if self.adaptive else config.timeout
        self.rto = self.base_rto  # base_rto, times 2 per back-off
        self._backed_off_at: float | None = None

    def sample(self, rtt: float) -> None:
        """Feed one RTT measurement (seconds) from a packet sent exactly once."""
        if not self.adaptive:
            return
        if self.srtt is None or self.rttvar is None:  # the first sample (both unset)
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = (1 - BETA) * self.rttvar + BETA * abs(self.srtt - rtt)
            self.srtt = (1 - ALPHA) * self.srtt + ALPHA * rtt
        self.base_rto = self.rto = self._clamp(self.srtt + max(self.margin, K * self.rttvar))
        self._backed_off_at = None

    def timed_out(self, now: float) -> None:
        """A timer expired: back off, at most once per RTO."""
        if not self.backoff:
            return
        if self._backed_off_at is not None and now - self._backed_off_at < self.rto / 2:
            return  # same burst of timeouts (timers set within the last RTO)
        ceiling = max(self.base_rto, min(self.max_rto, BACKOFF_CEILING))
        self.rto = min(self.rto * 2, ceiling)
        self._backed_off_at = now

    def progress(self) -> None:
        """A new packet was acked: stop backing off; with `backoff_until_sample`, not
        before the first sample (config.py says when that matters)."""
        if self.adaptive and self.srtt is None and self.until_sample:
            return
        self.rto = self.base_rto
        self._backed_off_at = None

    def _clamp(self, rto: float) -> float:
        return min(max(rto, self.min_rto), self.max_rto)
