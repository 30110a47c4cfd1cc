"""A TCP-like protocol: cumulative ACKs, a window in bytes, fast retransmit, RFC 6298.

Sender. Like Go-Back-N it has one timer (for the oldest unacked packet) and
cumulative ACKs, but it behaves like TCP when something is lost:
* The window may be given in bytes (``window_bytes``, seed 003) instead of packets.
* Fast retransmit: an ACK that repeats the last cumulative number while data is in
  flight is a duplicate ACK; it means a later packet arrived and the next one in order
  did not. After ``dup_ack_threshold`` (k) of them (k = 3 in TCP and in seed 003, whose
  "4 duplicate ACKs" are four ACKs of one number) the missing packet is resent at once,
  without waiting for the timer. Not before k: a packet merely overtaken by one or two
  others also causes duplicate ACKs.
* Only duplicate ACKs that can speak of the missing packet's latest copy count: those
  arriving at least one round trip (the shortest seen) after that copy was sent, and
  not those that copies of earlier packets are bound to cause (below). The count starts
  again at every resend, so a resend that is lost too is found the same way.
* After a loss the missing packet is resent, not the whole window, because the receiver
  keeps out-of-order packets. If the ACK of that resend still leaves a gap below the
  highest packet sent when the loss was found (a "partial ACK", NewReno, RFC 6582), the
  next missing packet is resent straight away.
* Copies when losses are frequent: the window is fixed, so during a repair no new
  packet goes out, and a resend (or its ACK) lost with nothing behind it waits for the
  timer. When the losses found so far make another loss likely among the packets in
  flight, a resend takes copies of the 3k packets after it along: their ACKs repeat the
  cumulative number if the resend's own ACK is lost, they come back as k duplicate ACKs
  if the resend is lost (at 20% loss each way about 2k of them do), and they repair any
  of those packets lost too. (Seed 003's
  sender, bene's ``resend(reset=True)``, sends the whole window again after every
  resend, one round trip later; with rare losses copies only cost capacity, so none.)
* The timeout is adaptive (RFC 6298, rto.py) with Karn's rule, doubling on each
  timeout. A timeout resends every packet in flight (as TCP, which goes back to the
  oldest unacked byte): no ACK came for a whole RTO, so none of them is known to have
  arrived.
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
        self.dup_acks = 0  # duplicate ACKs since base's latest send that can speak of it
        self.recover: int | None = None  # in recovery until this packet is acked
        self.resent_upto = -1  # in recovery, every packet up to here was resent after the loss was found
        self.losses_found = 0  # packets found missing (by duplicate ACKs, partial ACKs or the timer)
        self.min_rtt: float | None = None  # no ACK comes sooner after a packet's first send
        self.first_sent: dict[int, float] = {}
        self._resends: list[int] = []

    def datagrams_to_send(self, now: float) -> list[Data]:
        out = [
            self._send(seq, now, resend=True)
            for seq in self._resends
            if not self.failed and self.base <= seq < self.next_seq
        ]
        self._resends = []
        return out + self._send_new(now)

    def _send_new(self, now: float) -> list[Data]:
        out = super()._send_new(now)
        self.first_sent.update((msg.seq, now) for msg in out)
        return out

    def receive(self, ack: Ack, now: float) -> None:
        self.stats.acks_received += 1
        cumulative = ack.seq
        if self.done or cumulative >= self.next_seq:
            return
        if cumulative == self.base - 1:
            self._duplicate_ack(now)
        elif cumulative >= self.base:
            self._new_ack(cumulative, now)

    def handle_timer(self, now: float) -> None:
        if self._timer_expired(now):
            # No ACK for a whole RTO: no packet in flight is known to have arrived. Go back N.
            self.losses_found += 1
            self.recover = self.next_seq - 1
            self._resend(self.next_seq)

    # --- inside ---

    def _resend(self, end: int) -> None:
        """Resend packets base..end-1 (restarting the timer and the duplicate-ACK count)."""
        self._resends = list(range(self.base, end))
        self.resent_upto = max(self.resent_upto, end - 1)
        self.dup_acks = 0

    def _resend_base(self) -> None:
        """Resend the missing packet ``base`` and, when losses are frequent, copies of the
        3k packets after it."""
        after = self.next_seq - self.base - 1
        more_losses = self.losses_found / self.next_seq * after  # expected among those
        followers = min(after, 3 * self.config.dup_ack_threshold) if more_losses >= 1 else 0
        self.losses_found += 1
        self._resend(self.base + 1 + followers)

    def _duplicate_ack(self, now: float) -> None:
        if self.base >= self.next_seq:
            return  # nothing in flight: not a sign of loss
        if self.min_rtt is not None and now < self.sent_at[self.base] + self.min_rtt:
            return  # caused by a packet sent before base's latest copy: says nothing of that copy
        self.dup_acks += 1
        k = self.config.dup_ack_threshold
        if k and self.dup_acks == k:
            self.stats.fast_retransmits += 1
            if self.recover is None:
                self.recover = self.next_seq - 1
            self._resend_base()

    def _new_ack(self, cumulative: int, now: float) -> None:
        acked = range(self.base, cumulative + 1)
        if not any(seq in self.resent for seq in acked):  # Karn's rule
            rtt = now - self.sent_at[cumulative]
            self.stats.rtt_samples.append(rtt)
            self.rto.sample(rtt)
        # Whichever copy this ACK answers, it left the receiver after the first copy of
        # ``cumulative`` got there, so this is never below the path's shortest round trip
        # (Karn's rule need not apply), which is all the duplicate-ACK rule needs.
        since_first = now - self.first_sent[cumulative]
        self.min_rtt = since_first if self.min_rtt is None else min(self.min_rtt, since_first)
        old_base = self.base
        for seq in acked:
            self._acked(seq)
            del self.sent_at[seq], self.first_sent[seq]
            self.resent.discard(seq)
        self.base = cumulative + 1
        self.base_resends = 0
        self.dup_acks = 0
        self.rto.progress()
        if self.recover is not None and cumulative < self.recover:
            if self.base > self.resent_upto:
                self._resend_base()  # partial ACK: the next gap is lost too
            elif old_base <= self.resent_upto:
                # A copy of the new base is on its way, behind the copies of the packets
                # between the two bases: their ACKs will repeat this one without any loss.
                self.dup_acks = -(self.base - old_base - 1)
        else:
            self.recover, self.resent_upto = None, -1
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
            self._store(msg)  # counts a duplicate if below base or already buffered
        self.stats.acks_sent += 1
        return [Ack(self.base - 1, (), msg.path)]
