"""Part 1 of COMN: no reliability at all. The sender sends every packet once, paced;
the receiver keeps what arrives and stops at the end-of-file message. Written as
sans-IO cores (reference/core/api.py) so the same runtime runs them.
"""

from __future__ import annotations

from reference.core.api import Ack, Data, ReceiverStats, SenderStats

# One packet per millisecond: ~8.6 Mbit/s of 1069-byte IP packets, under the course's
# 10 Mbit/s link, so neither the link's queue nor the receiver's socket buffer overflows.
PACING = 0.001


class PacedSender:
    def __init__(self, data: bytes, payload_size: int = 1024, pacing: float = PACING):
        self.payloads = [data[i : i + payload_size] for i in range(0, len(data), payload_size)] or [b""]
        self.pacing = pacing
        self.next_seq = 0
        self.next_time: float | None = None  # when the next packet may go
        self.stats = SenderStats()

    @property
    def done(self) -> bool:
        return self.next_seq >= len(self.payloads)

    @property
    def failed(self) -> bool:
        return False  # nothing is ever resent, so nothing can give up

    def datagrams_to_send(self, now: float) -> list[Data]:
        if self.done or (self.next_time is not None and now < self.next_time):
            return []
        seq = self.next_seq
        self.next_seq += 1
        self.next_time = now + self.pacing
        self.stats.packets_sent += 1
        return [Data(seq, self.payloads[seq], seq == len(self.payloads) - 1)]

    def receive(self, ack: Ack, now: float) -> None:
        pass  # nobody sends ACKs in part 1

    def next_timer(self) -> float | None:
        return None if self.done else self.next_time

    def handle_timer(self, now: float) -> None:
        pass  # the timer only wakes the runtime to send the next packet


class KeepWhatArrives:
    def __init__(self):
        self.payloads: dict[int, bytes] = {}
        self.eof_seen = False
        self.stats = ReceiverStats()

    @property
    def complete(self) -> bool:
        return self.eof_seen

    def receive(self, msg: Data, now: float) -> list[Ack]:
        self.stats.packets_received += 1
        if msg.seq in self.payloads:
            self.stats.duplicates += 1
        self.payloads.setdefault(msg.seq, msg.payload)
        self.eof_seen |= msg.eof
        return []

    def output(self) -> bytes:
        return b"".join(self.payloads[seq] for seq in sorted(self.payloads))
