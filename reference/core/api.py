"""The sans-IO contract every protocol core follows (the style of aioquic and h11).

A core is fed messages and the current time, and asked what to send and when its next
timer is due. It never touches a socket or reads a clock, so the same core runs over
real sockets (reference/runtime.py), over the simulated channel in tests
(reference/sim.py), and in the COMN programs.

Messages are decoded already: wire formats (reference/wire.py) turn bytes into these
records and back, so a core does not know the byte order or the checksum. Sequence
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

from collections import namedtuple

# Records are named tuples and plain classes, not dataclasses: importing dataclasses
# (inspect, re, ...) was much of every reference program's start, and a class
# notebook's grading starts programs many times (BENCHMARKS.md, "Grading").


class Data(namedtuple("Data", "seq payload eof path", defaults=(False, 0))):
    """A data message: payload bytes at packet number ``seq``; ``eof`` marks the last;
    ``path``: which path to send it on (multi-homed cores), 0 otherwise."""

    __slots__ = ()


class Ack(namedtuple("Ack", "seq sack path", defaults=((), 0))):
    """An acknowledgement.

    ``seq`` means what the protocol says: GBN and TCP-like, cumulative (the highest
    in-order packet received; -1 for none); stop-and-wait and SR, the packet acked.
    ``sack`` carries selective-ACK ranges ``(first, last)`` inclusive, in formats that
    have room for them; a core must work when it is empty. The SR receiver lists at
    most ``config.max_sack_ranges``, most useful first: ``(0, base-1)`` (everything
    below its window) when base > 0, then the runs it received most recently, then
    the highest runs. A format that has room for fewer keeps the first ones.
    """

    __slots__ = ()


class _Counters:
    """Compared and shown field by field, as a dataclass would be (a run's stats are
    compared whole: the same seed gives the same run)."""

    __slots__: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]  # unhashable, as a dataclass with eq

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other._values() == self._values()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__slots__)})"


class SenderStats(_Counters):
    __slots__ = ("packets_sent", "retransmissions", "timeouts", "fast_retransmits", "rtt_samples", "acks_received")

    def __init__(self):
        self.packets_sent = 0  # every data message handed out, first sends and resends
        self.retransmissions = 0  # resends of a packet sent before
        self.timeouts = 0  # timer expiries that caused a resend
        self.fast_retransmits = 0
        self.rtt_samples: list[float] = []  # seconds, Karn's rule applied
        self.acks_received = 0


class ReceiverStats(_Counters):
    __slots__ = ("packets_received", "duplicates", "out_of_window", "acks_sent")

    def __init__(self):
        self.packets_received = 0
        self.duplicates = 0  # data messages for packets already held or delivered
        self.out_of_window = 0  # discarded as outside the receive window
        self.acks_sent = 0


# The two interfaces, as plain classes the cores match by shape (none subclasses them).
# Not typing.Protocol: importing typing slows every program's start.
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
