"""A TCP-like protocol: cumulative ACKs, a window in bytes, fast retransmit, RFC 6298.

Sender. Like Go-Back-N it has one timer (for the oldest unacked packet) and
cumulative ACKs, but it behaves like TCP when something is lost:
* The window may be given in bytes (``window_bytes``, seed 003) instead of packets.
* Fast retransmit: an ACK that repeats the last cumulative number while data is in
  flight is a duplicate ACK; it means a later packet arrived and the next one in order
  did not. After ``dup_ack_threshold`` (k) of them (k = 3 in TCP, 4 in seed 003) the
  missing packet is resent at once, without waiting for the timer. Not before k: a
  packet merely overtaken by one or two others also causes duplicate ACKs.
* After a loss only the missing packet is resent, not the whole window, because the
  receiver keeps out-of-order packets. If the ACK of that resend still leaves a gap
  below the highest packet sent when the loss was found (a "partial ACK", NewReno,
  RFC 6582), the next missing packet is resent straight away.
* The timeout is adaptive (RFC 6298, rto.py) with Karn's rule, doubling on each
  timeout; on a timeout the oldest packet is resent.
There is no congestion control: the window is fixed, as in seed 003.

Receiver. It keeps out-of-order packets that fit in its window and always acks the
highest packet it has in order (-1 before the first).
"""
from __future__ import annotations

from reference.core.api import Ack, Data
from reference.core.base import OneTimerSender, ReceiverBase
from reference.core.config import CoreConfig


class TcpLikeSender(OneTimerSender):
    def __init__(self, data: bytes, config: CoreConfig):
        super().__init__(data, config)
        self.dup_acks = 0
        self.recover: int | None = None       # in recovery until this packet is acked
        self._resend_base = False

    def datagrams_to_send(self, now: float) -> list[Data]:
        out = []
        if self._resend_base and not self.failed and self.base < self.next_seq:
            out.append(self._send(self.base, now, resend=True))
        self._resend_base = False
        out += self._send_new(now)
        return out

    def receive(self, ack: Ack, now: float) -> None:
        self.stats.acks_received += 1
        cumulative = ack.seq
        if self.done or cumulative >= self.next_seq:
            return
        if cumulative == self.base - 1:
            self._duplicate_ack()
        elif cumulative >= self.base:
            self._new_ack(cumulative, now)

    def handle_timer(self, now: float) -> None:
        if self._timer_expired(now):
            self.recover = self.next_seq - 1  # every packet sent so far may be lost
            self.dup_acks = 0
            self._resend_base = True

    # --- inside ---

    def _duplicate_ack(self) -> None:
        if self.base >= self.next_seq:
            return    # nothing in flight: not a sign of loss
        self.dup_acks += 1
        k = self.config.dup_ack_threshold
        if k and self.dup_acks == k and self.recover is None:
            self.stats.fast_retransmits += 1
            self.recover = self.next_seq - 1
            self._resend_base = True

    def _new_ack(self, cumulative: int, now: float) -> None:
        acked = range(self.base, cumulative + 1)
        if not any(seq in self.resent for seq in acked):   # Karn's rule
            rtt = now - self.sent_at[cumulative]
            self.stats.rtt_samples.append(rtt)
            self.rto.sample(rtt)
        for seq in acked:
            self._acked(seq)
            del self.sent_at[seq]
            self.resent.discard(seq)
        self.base = cumulative + 1
        self.base_resends = 0
        self.dup_acks = 0
        self.rto.progress()
        if self.recover is not None:
            if cumulative >= self.recover:
                self.recover = None           # every loss found is repaired
            else:
                self._resend_base = True      # partial ACK: the next gap is lost too
        self.deadline = now + self.rto.rto if self.base < self.next_seq else None


class TcpLikeReceiver(ReceiverBase):
    def __init__(self, config: CoreConfig):
        super().__init__(config)
        self.window = config.window_packets()

    def receive(self, msg: Data, now: float) -> list[Ack]:
        self.stats.packets_received += 1
        if self._beyond_eof(msg) or msg.seq >= self.base + self.window:
            self.stats.out_of_window += 1
        else:
            self._store(msg)    # counts a duplicate if below base or already buffered
        self.stats.acks_sent += 1
        return [Ack(self.base - 1, (), msg.path)]
