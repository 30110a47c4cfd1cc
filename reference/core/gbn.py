"""Go-Back-N: a window of packets in flight, cumulative ACKs, one timer.

Sender. Up to ``window`` packets past the oldest unacked one (``base``) may be in
flight. An ACK carrying n means "every packet up to n arrived" (cumulative), so it
acks n and everything before it, and ``base`` moves to n+1. There is one timer, for
the oldest unacked packet: it starts when ``base`` is sent and restarts on every ACK
while packets are in flight, duplicates included (the textbook sender of Kurose and
Ross, which the COMN sheet and harness.models.sliding_window.gbn_timeout assume): an
ACK shows the receiver is still answering, and a window's worth of duplicate ACKs
drains before the sender gives up on the gap. When the timer expires, the sender
"goes back N": it resends every packet from ``base`` to the newest sent, because the
receiver threw away everything after the lost packet.

Receiver. It accepts only the next packet in order; anything else is discarded, and
it re-acks the last packet it has in order (-1 before the first), which tells the
sender where the gap is. So the receiver needs no buffer, at the price of resending
whole windows when one packet is lost: at loss rate p a window of N packets costs
about N*p extra packets per round trip, which is why GBN slows down sharply as the
window grows on a lossy link (seed 004, question 3).
"""

from __future__ import annotations

from reference.core.api import Ack, Data
from reference.core.base import OneTimerSender, ReceiverBase
from reference.core.config import CoreConfig


class GoBackNSender(OneTimerSender):
    def __init__(self, data: bytes, config: CoreConfig):
        super().__init__(data, config)
        self._go_back = False  # resend the whole window on the next call

    def datagrams_to_send(self, now: float) -> list[Data]:
        out = []
        if self._go_back and not self.failed:
            self._go_back = False
            for seq in range(self.base, self.next_seq):
                out.append(self._send(seq, now, resend=True))
        out += self._send_new(now)
        return out

    def receive(self, ack: Ack, now: float) -> None:
        self.stats.acks_received += 1
        cumulative = ack.seq
        if self.done or not self.base - 1 <= cumulative < self.next_seq:
            return  # an old ACK, overtaken by a later one, or nonsense
        if cumulative == self.base - 1:  # a duplicate: nothing new, but restart the timer
            if self.base < self.next_seq and self.deadline is not None:
                self.deadline = now + self.rto.rto
            return
        if cumulative not in self.resent:  # Karn's rule
            rtt = now - self.sent_at[cumulative]
            self.stats.rtt_samples.append(rtt)
            self.rto.sample(rtt)
        for seq in range(self.base, cumulative + 1):
            self._acked(seq)
            del self.sent_at[seq]
            self.resent.discard(seq)
        self.base = cumulative + 1
        self.base_resends = 0
        self.rto.progress()
        self.deadline = now + self.rto.rto if self.base < self.next_seq else None

    def handle_timer(self, now: float) -> None:
        if self._timer_expired(now):
            self._go_back = True


class GoBackNReceiver(ReceiverBase):
    def receive(self, msg: Data, now: float) -> list[Ack]:
        self.stats.packets_received += 1
        if self._beyond_eof(msg):
            self.stats.out_of_window += 1
            return []
        if msg.seq == self.base:
            self._store(msg)
        elif msg.seq < self.base:
            self.stats.duplicates += 1
        else:
            self.stats.out_of_window += 1  # out of order: discard, re-ack
        self.stats.acks_sent += 1
        return [Ack(self.base - 1, (), msg.path)]
