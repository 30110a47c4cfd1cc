"""What the COMN spec leaves open, as options of the reference programs, so that they
can meet any valid student program (DESIGN.md, "The COMN contract"):

    RDT_BYTE_ORDER  big | little      the 2-byte fields' byte order
    RDT_NUMBERING   count | alt       count 0, 1, 2, ... (mod 65536), or rdt3.0's
                                      alternating bit 0, 1, 0, ... (stop-and-wait only)
    RDT_FIRST_SEQ   0 | 1             the number of the first data message
    RDT_EOF_VALUE   1 .. 255          the end-of-file byte the sender sends (a receiver
                                      takes any non-zero byte as end of file)
    RDT_ACK         last | next       an ACK names the message received (last), or the
                                      next one expected in order (next; Go-Back-N style)

Defaults: big, count, 0, 1, last. The cores count packets from 0 without bound; these
rules live only in the wire format, which maps a core's number to the wire's and back
(sans-IO, like reference/wire.py, whose COMN format this extends).
"""

from __future__ import annotations

import os
from collections import namedtuple

from reference.core.api import Ack, Data
from reference.wire import ComnFormat, WireError, unwrap

CHOICES = {"byte_order": ("big", "little"), "numbering": ("count", "alt"), "first_seq": (0, 1), "ack": ("last", "next")}
ENV = {
    "byte_order": "RDT_BYTE_ORDER",
    "numbering": "RDT_NUMBERING",
    "first_seq": "RDT_FIRST_SEQ",
    "eof_value": "RDT_EOF_VALUE",
    "ack": "RDT_ACK",
}


class ConventionError(ValueError):
    """An option with a value it cannot take (one line naming it)."""


# A named tuple, not a dataclass: reference/core/api.py says why.
class Conventions(
    namedtuple("Conventions", "byte_order numbering first_seq eof_value ack", defaults=("big", "count", 0, 1, "last"))
):
    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls, *args, **kwargs)
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ConventionError(
                    f"{name} must be one of {', '.join(map(str, allowed))}, not {getattr(self, name)!r}"
                )
        if not (isinstance(self.eof_value, int) and 1 <= self.eof_value <= 255):
            raise ConventionError(f"eof_value must be a byte from 1 to 255, not {self.eof_value!r}")
        return self

    def _replace(self, **changes) -> "Conventions":
        """A changed copy, checked as a new one is (namedtuple's own skips __new__)."""
        return Conventions(**{**self._asdict(), **changes})

    @classmethod
    def from_env(cls, environ=os.environ) -> "Conventions":
        values = {}
        for name, var in ENV.items():
            text = environ.get(var)
            if text is None:
                continue
            if name in ("first_seq", "eof_value"):
                if not text.strip().isdigit():
                    raise ConventionError(f"{var} must be a whole number, got {text!r}")
                values[name] = int(text)
            else:
                values[name] = text
        try:
            return cls(**values)
        except ConventionError as e:
            name = str(e).split()[0]
            raise ConventionError(f"{ENV[name]}: {e}") from None

    def env(self) -> dict[str, str]:
        """The environment that gives these conventions (only what differs from the defaults)."""
        default = Conventions()
        return {ENV[name]: str(value) for name, value, usual in zip(self._fields, self, default) if value != usual}

    def describe(self, acks: bool = True) -> str:
        return (
            f"{self.byte_order}-endian, "
            + ("alternating bit" if self.numbering == "alt" else "counting")
            + f" from {self.first_seq}, EOF byte {self.eof_value}"
            + (
                ", ACK names the " + ("message received" if self.ack == "last" else "next message expected")
                if acks
                else ""
            )
        )


class ConventionFormat(ComnFormat):
    """The COMN format under `Conventions`. ``seq_bits`` stays the field's 16 bits (the
    runtime's sanity bound on windows); numbers wrap at ``modulus``."""

    def __init__(self, conventions: Conventions = Conventions()):
        super().__init__(conventions.byte_order)
        self.conventions = conventions
        self.modulus_bits = 1 if conventions.numbering == "alt" else 16
        self.modulus = 1 << self.modulus_bits
        self.first = conventions.first_seq
        self.ack_shift = 1 if conventions.ack == "next" else 0
        self.name = (
            "comn"
            + ("-le" if conventions.byte_order == "little" else "")
            + "".join(f"+{k}={v}" for k, v in conventions.env().items() if k != "RDT_BYTE_ORDER")
        )

    def encode_data(self, msg: Data) -> bytes:
        if len(msg.payload) > self.max_payload:
            raise WireError(f"{self.name}: payload of {len(msg.payload)} bytes exceeds {self.max_payload}")
        seq = (msg.seq + self.first) % self.modulus
        return self._data.pack(seq, self.conventions.eof_value if msg.eof else 0) + msg.payload

    def decode_data(self, datagram: bytes, reference: int = 0) -> Data:
        """Any non-zero end-of-file byte ends the file. ``reference`` is the highest
        packet seen: with the alternating bit the new one is the next (reference + 1)."""
        if len(datagram) < self.header_size:
            raise WireError(f"data message of {len(datagram)} bytes is shorter than the {self.header_size}-byte header")
        if len(datagram) > self.header_size + self.max_payload:
            raise WireError(
                f"data message of {len(datagram)} bytes is longer than {self.header_size + self.max_payload}"
            )
        seq, eof = self._data.unpack_from(datagram)
        if seq >= self.modulus:
            raise WireError(f"sequence number {seq} is not a {self.conventions.numbering} number")
        value = (seq - self.first) % self.modulus
        near = reference + 1 if self.modulus_bits == 1 else reference
        return Data(unwrap(value, near, self.modulus_bits), bytes(datagram[self.header_size :]), eof != 0)

    def encode_ack(self, ack: Ack) -> bytes:
        return self._ack.pack((ack.seq + self.ack_shift + self.first) % self.modulus)

    def decode_ack(self, datagram: bytes, reference: int = 0) -> Ack:
        if len(datagram) != self._ack.size:
            raise WireError(f"ACK of {len(datagram)} bytes, expected {self._ack.size}")
        (seq,) = self._ack.unpack(datagram)
        if seq >= self.modulus:
            raise WireError(f"ACK number {seq} is not a {self.conventions.numbering} number")
        value = (seq - self.ack_shift - self.first) % self.modulus
        return Ack(unwrap(value, reference, self.modulus_bits))
