"""What every core shares: cutting the file into packets, the send window, the
give-up rule, and putting received packets back in order.
"""

from __future__ import annotations

from reference.core.api import Data, ReceiverStats, SenderStats
from reference.core.config import CoreConfig
from reference.core.rto import RtoEstimator


def split(data: bytes, size: int) -> list[bytes]:
    """The payloads of the packets; an empty file is one empty packet (it carries eof)."""
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


class SenderBase:
    """Packets 0..n-1 of ``data``; packets ``base``..``next_seq``-1 are in flight.

    A subclass moves ``base`` as ACKs arrive, calls ``_sent_new`` / ``_acked`` so the
    byte count stays right, and sets ``failed`` when a packet runs out of retries.
    """

    def __init__(self, data: bytes, config: CoreConfig):
        self.config = config
        self.payloads = split(data, config.payload_size)
        self.packet_count = len(self.payloads)  # read on every send and ACK: an attribute, not a property
        self.stats = SenderStats()
        self.window = config.window_packets()
        self.base = 0  # oldest packet not yet acked
        self.next_seq = 0  # next packet never sent
        self.bytes_in_flight = 0
        self.failed = False  # gave up: a packet was resent max_retries times unanswered

    @property
    def done(self) -> bool:
        return self.failed or self.base >= self.packet_count

    def _message(self, seq: int, path: int = 0) -> Data:
        return Data(seq, self.payloads[seq], seq == self.packet_count - 1, path)

    def _can_send_new(self) -> bool:
        """Is there a new packet, and room for it in the window (packets and bytes)?"""
        seq = self.next_seq
        if self.failed or seq >= self.packet_count or seq >= self.base + self.window:
            return False
        limit = self.config.window_bytes
        return limit is None or self.bytes_in_flight == 0 or self.bytes_in_flight + len(self.payloads[seq]) <= limit

    def _sent_new(self, seq: int) -> None:
        self.bytes_in_flight += len(self.payloads[seq])
        self.next_seq = seq + 1

    def _acked(self, seq: int) -> None:
        self.bytes_in_flight -= len(self.payloads[seq])

    def _out_of_retries(self, resends: int) -> bool:
        limit = self.config.max_retries
        return limit is not None and resends >= limit

    def _count_send(self, resend: bool) -> None:
        self.stats.packets_sent += 1
        if resend:
            self.stats.retransmissions += 1


class OneTimerSender(SenderBase):
    """A sender with one retransmission timer, for the oldest unacked packet (``base``),
    and Karn's rule for RTT samples: Go-Back-N and the TCP-like protocol."""

    def __init__(self, data: bytes, config: CoreConfig):
        super().__init__(data, config)
        self.rto = RtoEstimator(config)
        self.sent_at: dict[int, float] = {}  # in-flight packet -> time of its latest send
        self.resent: set[int] = set()  # in-flight packets sent more than once (Karn)
        self.deadline: float | None = None  # the one timer, for packet ``base``
        self.base_resends = 0  # how often packet ``base`` was resent

    def next_timer(self) -> float | None:
        return None if self.done else self.deadline

    def _send(self, seq: int, now: float, resend: bool) -> Data:
        """Hand out packet ``seq``; (re)start the timer when it is ``base``."""
        self._count_send(resend)
        if resend:
            self.resent.add(seq)
            if seq == self.base:
                self.base_resends += 1
        self.sent_at[seq] = now
        if seq == self.base:
            self.deadline = now + self.rto.rto
        return self._message(seq)

    def _send_new(self, now: float) -> list[Data]:
        """Every new packet the window has room for."""
        out = []
        while self._can_send_new():
            seq = self.next_seq
            self._sent_new(seq)
            out.append(self._send(seq, now, resend=False))
        return out

    def _timer_expired(self, now: float) -> bool:
        """Has the timer gone off? Then count the timeout, back off and stop the timer
        (it restarts when ``base`` is resent); give up instead when out of retries."""
        if self.deadline is None or now < self.deadline or self.done:
            return False
        if self._out_of_retries(self.base_resends):
            self.failed = True
            return False
        self.stats.timeouts += 1
        self.rto.timed_out(now)
        self.deadline = None
        return True


class ReceiverBase:
    """Holds out-of-order packets and hands the file out in order.

    ``base`` is the next packet expected in order; everything below it is delivered.
    """

    def __init__(self, config: CoreConfig):
        self.config = config
        self.stats = ReceiverStats()
        self.base = 0
        self.buffer: dict[int, bytes] = {}
        self.delivered: list[bytes] = []
        self.eof_seq: int | None = None

    @property
    def complete(self) -> bool:
        return self.eof_seq is not None and self.base > self.eof_seq

    def output(self) -> bytes:
        return b"".join(self.delivered)

    def _beyond_eof(self, msg: Data) -> bool:
        """A packet past the end, or a second, different end: cannot be real data."""
        return self.eof_seq is not None and (msg.seq > self.eof_seq or (msg.eof and msg.seq != self.eof_seq))

    def _store(self, msg: Data) -> None:
        """Keep a packet at or above ``base`` and deliver what is now in order."""
        if msg.seq < self.base or msg.seq in self.buffer:
            self.stats.duplicates += 1
            return
        self.buffer[msg.seq] = msg.payload
        if msg.eof:
            self.eof_seq = msg.seq
        while self.base in self.buffer:
            self.delivered.append(self.buffer.pop(self.base))
            self.base += 1
