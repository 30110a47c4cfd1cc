"""Stop-and-wait (rdt3.0): send one packet, wait for its ACK, then send the next.

Sender. Packet n goes out and a timer starts. The ACK naming packet n moves the sender
on to packet n+1. If the timer expires first, the packet or its ACK was lost (or is
late), so packet n is sent again. ACKs for older packets are duplicates and are
ignored. With exponential back-off (seed 002) every resend of the same packet waits
twice as long as the one before; with ``adaptive`` the timeout follows the measured
round-trip time (RFC 6298, see rto.py).

Receiver. It acks every packet it receives, including duplicates: a duplicate means
its earlier ACK was lost, and without a new ACK the sender would resend forever.

Only one packet is ever in flight, so throughput is at most one packet per round trip:
utilisation = (L/R) / (RTT + L/R) on a clean link.

This is Selective Repeat with a window of one packet, so it is written as exactly that
(sr.py): sequence numbers grow without bound here and the wire format wraps them (the
alternating bit of rdt3.0 is sequence numbers modulo 2).
"""

from __future__ import annotations

from reference.core.config import CoreConfig
from reference.core.sr import SelectiveRepeatReceiver, SelectiveRepeatSender


def _one_at_a_time(config: CoreConfig) -> CoreConfig:
    return config._replace(window=1, window_bytes=None, dup_ack_threshold=0, sack=False, paths=1)


class StopAndWaitSender(SelectiveRepeatSender):
    def __init__(self, data: bytes, config: CoreConfig):
        super().__init__(data, _one_at_a_time(config))


class StopAndWaitReceiver(SelectiveRepeatReceiver):
    def __init__(self, config: CoreConfig):
        super().__init__(_one_at_a_time(config))
