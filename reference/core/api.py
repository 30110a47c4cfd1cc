"""The sans-IO contract every protocol core follows (the style of aioquic and h11).

A core is fed messages and the current time, and asked what to send and when its next
timer is due. It never touches a socket or reads a clock, so the same core runs over
real sockets (reference/runtime.py), over the simulated channel in tests
(reference/sim.py), and in the COMN programs.

Messages are decoded already: wire formats (reference/wire.py) turn bytes into these
dataclasses and back, so a core does not know the byte order or the checksum. Sequence
numbers here are unbounded integers counted in packets from 0; a format with a 16-bit
field wraps them on the wire and unwraps them on decode.

Time is a float in seconds on any monotonic clock.

    sender = make_sender(protocol, data, config)     # reference.core
    for msg in sender.datagrams_to_send(now): send(msg)   # call after every event
    deadline = sender.next_timer()          # float or None; may fire early (no-op)
    ... on datagram:  sender.receive(ack, now)
    ... on deadline:  sender.handle_timer(now)
    until sender.done                       # every packet acked, or sender.failed

    sender.failed -> True when a packet was resent config.max_retries times without
    an answer (the receiver is gone); done is then True as well.

    receiver = make_receiver(protocol, config)
    for ack in receiver.receive(data_msg, now): send(ack)
    receiver.complete -> True once every byte up to end-of-file is in order;
    receiver.output() -> the bytes
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Data:
    """A data message: payload bytes at packet number ``seq``; ``eof`` marks the last."""

    seq: int
    payload: bytes
    eof: bool = False
    path: int = 0  # which path to send it on (multi-homed cores); 0 otherwise


@dataclass(frozen=True, slots=True)
class Ack:
    """An acknowledgement.

    ``seq`` means what the protocol says: GBN and TCP-like, cumulative (the highest
    in-order packet received; -1 for none); stop-and-wait and SR, the packet acked.
    ``sack`` carries selective-ACK ranges ``(first, last)`` inclusive, in formats that
    have room for them; a core must work when it is empty. The SR receiver lists at
    most ``config.max_sack_ranges``, most useful first: ``(0, base-1)`` (everything
    below its window) when base > 0, then the runs it received most recently, then
    the highest runs. A format that has room for fewer keeps the first ones.
    """

    seq: int
    sack: tuple[tuple[int, int], ...] = ()
    path: int = 0


@dataclass
class SenderStats:
    packets_sent: int = 0       # every data message handed out, first sends and resends
    retransmissions: int = 0    # resends of a packet sent before
    timeouts: int = 0           # timer expiries that caused a resend
    fast_retransmits: int = 0
    rtt_samples: list[float] = field(default_factory=list)  # seconds, Karn's rule applied
    acks_received: int = 0


@dataclass
class ReceiverStats:
    packets_received: int = 0
    duplicates: int = 0         # data messages for packets already held or delivered
    out_of_window: int = 0      # discarded as outside the receive window
    acks_sent: int = 0


# The two interfaces, as plain classes the cores match by shape (none subclasses them).
# Not typing.Protocol: importing typing was 3 ms of every program's start.
class SenderCore:
    stats: SenderStats

    def datagrams_to_send(self, now: float) -> list[Data]: ...
    def receive(self, ack: Ack, now: float) -> None: ...
    def next_timer(self) -> float | None: ...
    def handle_timer(self, now: float) -> None: ...

    @property
    def done(self) -> bool: ...

    @property
    def failed(self) -> bool:
        """True once a packet was resent ``max_retries`` times without an ACK (then done too)."""
        ...


class ReceiverCore:
    stats: ReceiverStats

    def receive(self, msg: Data, now: float) -> list[Ack]: ...
    def output(self) -> bytes: ...

    @property
    def complete(self) -> bool: ...
