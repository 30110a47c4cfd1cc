"""What a protocol core is told: one record shared by every protocol.

Not every field matters to every protocol (stop-and-wait ignores the window, only the
multi-homed core reads ``paths``); each core's docstring says which it uses.
"""

from __future__ import annotations

import math
from collections import namedtuple

PROTOCOLS = ("sw", "gbn", "sr", "tcp", "mh")
# What the command line's SR sends at the tail, and mh's own tail copies (reference/core/sr.py,
# "Tail copies"). Here, not in sr.py: the command line reads it, and a notebook's kernel
# imports the command line (kernel TCP's program) in a jail that hides the protocols.
TAIL_COPIES = 3


# The fields and their defaults (a named tuple, not a dataclass: reference/core/api.py says why).
# A changed copy: config._replace(window=8, ...).
_FIELDS = dict(
    payload_size=1024,  # bytes of file data per packet
    # Retransmission timeout: a fixed ``timeout`` (seconds), or ``adaptive`` (RFC 6298:
    # SRTT/RTTVAR with alpha 1/8, beta 1/4) starting at ``initial_rto``.
    timeout=0.1,
    adaptive=False,
    initial_rto=1.0,
    # RFC 6298 says at least 1 s on the Internet; a lab link of a few ms needs less.
    min_rto=0.01,
    max_rto=60.0,
    # RFC 6298's G: RTO = SRTT + max(G, 4 RTTVAR). On a steady link RTTVAR decays to
    # almost nothing and a 1 ms margin makes every small queueing hiccup a spurious
    # timeout, so the margin is at least this (seconds).
    rto_margin=0.01,
    # Exponential back-off: each resend of a packet doubles its timeout (up to max_rto).
    # None = on when adaptive (RFC 6298 5.5), off with a fixed timeout (COMN).
    backoff=None,
    # An adaptive RTO with no sample yet keeps its back-off when a new packet is acked
    # (RFC 6298 5.7) instead of going back to the initial RTO (rto.py says why that is
    # the default): where the round trip exceeds the initial RTO, going back resends
    # every packet once, for ever, since Karn's rule then never gives a sample.
    backoff_until_sample=False,
    window=1,  # packets in flight (GBN, SR, TCP-like, MH)
    window_bytes=None,  # if set, a window in bytes in flight instead (seed 003)
    # SR/MH: at most this many packets in the network at once (None = the window).
    # A window much larger than the path's bandwidth-delay product only fills the
    # bottleneck queue; capping the packets in flight near the BDP while the window
    # stays wide lets a lost packet be repaired without stalling the sender.
    max_in_flight=None,
    # Duplicate-ACK threshold k: TCP-like fast retransmit after k duplicate ACKs; SR and
    # MH resend a packet once k packets sent after it are acked. 0 = off.
    dup_ack_threshold=3,
    # SR: a packet found lost that way is sent this many times at once (sr.py, "Repair
    # copies"); 1 = once, as usual.
    repair_copies=1,
    # SR: once every packet has been sent, a resend (timed out or found lost) goes this
    # many times at once (sr.py, "Tail copies"); 1 = once, as usual.
    tail_copies=1,
    # SR: space new packets out, a window per shortest round trip (pacing.py).
    pace=False,
    paths=1,  # multi-homed: number of paths
    # multi-homed: a path is dead once it has heard no ACK for this many of its RTOs
    # while packets were in flight on it (multihomed.py, "Dead-path detection")
    dead_path_timeouts=5,
    sack=False,  # the wire format carries selective-ACK ranges
    max_sack_ranges=16,  # at most this many ranges in one ACK (extended format: 16)
    seq_modulus=None,  # e.g. 2**16 when the wire's sequence number wraps
    max_retries=None,  # resends of one packet before giving up; None = never
)


class CoreConfig(namedtuple("CoreConfig", _FIELDS, defaults=_FIELDS.values())):
    __slots__ = ()

    @property
    def use_backoff(self) -> bool:
        return self.adaptive if self.backoff is None else self.backoff

    def window_packets(self) -> int:
        """The most packets that can be in flight (a byte window holds at least one)."""
        if self.window_bytes is None:
            return self.window
        return max(1, math.ceil(self.window_bytes / self.payload_size))

    def validate(self, protocol: str) -> None:
        """Raise ValueError with one line naming the bad field."""
        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {protocol!r}; expected one of {', '.join(PROTOCOLS)}")
        _positive("payload_size", self.payload_size)
        for name in ("timeout", "initial_rto", "min_rto", "max_rto", "rto_margin"):
            _positive(name, getattr(self, name))
        if self.min_rto > self.max_rto:
            raise ValueError(f"min_rto {self.min_rto} is above max_rto {self.max_rto}")
        _positive("window", self.window)
        if self.window_bytes is not None:
            _positive("window_bytes", self.window_bytes)
        if self.max_in_flight is not None:
            _positive("max_in_flight", self.max_in_flight)
        if self.dup_ack_threshold < 0:
            raise ValueError(f"dup_ack_threshold must be 0 (off) or more, got {self.dup_ack_threshold}")
        _positive("repair_copies", self.repair_copies)
        _positive("tail_copies", self.tail_copies)
        if self.tail_copies > 1 and protocol != "sr":  # mh has its own, over its other paths
            raise ValueError(f"tail_copies is for protocol 'sr' only, got {protocol!r}")
        if self.pace and protocol != "sr":
            raise ValueError(f"pace is for protocol 'sr' only, got {protocol!r}")
        _positive("paths", self.paths)
        _positive("dead_path_timeouts", self.dead_path_timeouts)
        _positive("max_sack_ranges", self.max_sack_ranges)
        if self.max_retries is not None and self.max_retries < 0:
            raise ValueError(f"max_retries must be None (never give up) or 0 or more, got {self.max_retries}")
        if self.seq_modulus is not None:
            window = 1 if protocol == "sw" else self.window_packets()
            if window > self.seq_modulus // 2:
                raise ValueError(
                    f"window of {window} packets is too large for sequence numbers modulo "
                    f"{self.seq_modulus}: it must be at most half the sequence space "
                    f"({self.seq_modulus // 2})"
                )


def _positive(name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
