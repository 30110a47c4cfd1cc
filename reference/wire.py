"""Wire formats: bytes <-> the core's messages (reference/core/api.py).

Three formats, described in reference/PROTOCOL.md:

    "comn"     COMN, big-endian:    seq u16 | eof u8 | payload <= 1024    ACK: seq u16
    "comn-le"  COMN, little-endian: the same with the fields little-endian
    "ext"      extended: magic/version, type, flags, path, seq u32, CRC32, payload;
               ACKs carry a cumulative/packet seq, up to 16 selective-ACK ranges
               and the path id
    "md5"      the extended format with an MD5 digest for the CRC32 (seed 000)
    "mh"       the multihoming starter's: seq u32 | flags u8 | length u16 | MD5 | payload
               <= 1024; ACK: seq u32 (the packet acknowledged); "mh-le" little-endian

Cores count packets from 0 without bound; the wire field is 16 or 32 bits wide, so
decoding "unwraps" it to the value nearest a reference the caller keeps (the highest
packet number it has seen), as QUIC does with packet numbers.

Anything that is not a well-formed message of the format -- too short, too long,
bad magic, unknown type, bad flags, wrong CRC -- raises WireError, which the runtime
counts and drops. Decoders raise nothing else, whatever the bytes.
"""

from __future__ import annotations

import struct
import zlib

from reference.core.api import Ack, Data

MAX_UDP_PAYLOAD = 65507  # largest UDP payload over IPv4 (65535 - 8 UDP - 20 IP)


class WireError(ValueError):
    """A datagram that is not a valid message of the format."""


def unwrap(value: int, reference: int, bits: int) -> int:
    """The integer congruent to ``value`` mod 2**bits that is nearest ``reference``."""
    span = 1 << bits
    half = span >> 1
    candidate = reference - half + ((value - (reference - half)) % span)
    return candidate


class ComnFormat:
    """The COMN assignment's format, in either byte order."""

    seq_bits = 16
    header_size = 3
    max_payload = 1024
    has_sack = False
    has_crc = False
    has_path = False

    def __init__(self, byteorder: str = "big"):
        self.name = "comn" if byteorder == "big" else "comn-le"
        prefix = ">" if byteorder == "big" else "<"
        self._data = struct.Struct(prefix + "HB")
        self._ack = struct.Struct(prefix + "H")

    def encode_data(self, msg: Data) -> bytes:
        if len(msg.payload) > self.max_payload:
            raise WireError(f"{self.name}: payload of {len(msg.payload)} bytes exceeds {self.max_payload}")
        return self._data.pack(msg.seq & 0xFFFF, 1 if msg.eof else 0) + msg.payload

    def decode_data(self, datagram: bytes, reference: int = 0) -> Data:
        if len(datagram) < self.header_size:
            raise WireError(f"data message of {len(datagram)} bytes is shorter than the {self.header_size}-byte header")
        if len(datagram) > self.header_size + self.max_payload:
            raise WireError(
                f"data message of {len(datagram)} bytes is longer than {self.header_size + self.max_payload}"
            )
        seq, eof = self._data.unpack_from(datagram)
        if eof > 1:
            raise WireError(f"end-of-file flag is {eof}, expected 0 or 1")
        return Data(unwrap(seq, reference, 16), bytes(datagram[self.header_size :]), bool(eof))

    def encode_ack(self, ack: Ack) -> bytes:
        return self._ack.pack(ack.seq & 0xFFFF)  # -1 ("nothing yet") goes out as 0xFFFF

    def decode_ack(self, datagram: bytes, reference: int = 0) -> Ack:
        if len(datagram) != self._ack.size:
            raise WireError(f"ACK of {len(datagram)} bytes, expected {self._ack.size}")
        (seq,) = self._ack.unpack(datagram)
        return Ack(unwrap(seq, reference, 16))


class ExtFormat:
    """The extended format: 32-bit sequence numbers, CRC32, selective ACKs, path ids.

    Header (12 bytes, big-endian), then the payload (DATA) or the SACK list (ACK):
        0  u8   magic/version  0xA1
        1  u8   type           1 DATA, 2 ACK
        2  u8   flags          bit 0: end of file (DATA); other bits must be 0
        3  u8   path id
        4  u32  sequence number (DATA) / acknowledged number (ACK), mod 2**32
        8  u32  CRC32 of the whole message with this field set to 0
    ACK body: u8 count (<= 16), then count x (u32 first, u32 last), inclusive ranges.
    """

    name = "ext"
    seq_bits = 32
    header_size = 12
    max_payload = MAX_UDP_PAYLOAD - header_size
    max_sack = 16
    has_sack = True
    has_crc = True
    has_path = True

    MAGIC = 0xA1
    DATA, ACK = 1, 2
    EOF = 0x01
    _header = struct.Struct(">BBBBII")
    _range = struct.Struct(">II")

    def _pack(self, kind: int, flags: int, path: int, seq: int, body: bytes) -> bytes:
        if not 0 <= path <= 255:
            raise WireError(f"path id {path} does not fit in a byte")
        without_crc = self._header.pack(self.MAGIC, kind, flags, path, seq & 0xFFFFFFFF, 0) + body
        crc = zlib.crc32(without_crc)
        return without_crc[:8] + crc.to_bytes(4, "big") + without_crc[12:]

    def _unpack(self, datagram: bytes, kind: int) -> tuple[int, int, int, bytes]:
        if len(datagram) < self.header_size:
            raise WireError(f"message of {len(datagram)} bytes is shorter than the {self.header_size}-byte header")
        if len(datagram) > MAX_UDP_PAYLOAD:
            raise WireError(f"message of {len(datagram)} bytes is longer than {MAX_UDP_PAYLOAD}")
        magic, got_kind, flags, path, seq, crc = self._header.unpack_from(datagram)
        if magic != self.MAGIC:
            raise WireError(f"magic/version byte 0x{magic:02x}, expected 0x{self.MAGIC:02x}")
        zeroed = bytes(datagram[:8]) + b"\0\0\0\0" + bytes(datagram[12:])
        if zlib.crc32(zeroed) != crc:
            raise WireError("CRC32 mismatch (corrupt message)")
        if got_kind != kind:
            raise WireError(f"message type {got_kind}, expected {kind}")
        return flags, path, seq, bytes(datagram[self.header_size :])

    def encode_data(self, msg: Data) -> bytes:
        if len(msg.payload) > self.max_payload:
            raise WireError(f"ext: payload of {len(msg.payload)} bytes exceeds {self.max_payload}")
        return self._pack(self.DATA, self.EOF if msg.eof else 0, msg.path, msg.seq, msg.payload)

    def decode_data(self, datagram: bytes, reference: int = 0) -> Data:
        flags, path, seq, payload = self._unpack(datagram, self.DATA)
        if flags & ~self.EOF:
            raise WireError(f"unknown flags 0x{flags:02x} in a data message")
        return Data(unwrap(seq, reference, 32), payload, bool(flags & self.EOF), path)

    def encode_ack(self, ack: Ack) -> bytes:
        ranges = ack.sack[: self.max_sack]  # the core lists the most useful ranges first
        body = bytes([len(ranges)]) + b"".join(
            self._range.pack(first & 0xFFFFFFFF, last & 0xFFFFFFFF) for first, last in ranges
        )
        return self._pack(self.ACK, 0, ack.path, ack.seq, body)

    def decode_ack(self, datagram: bytes, reference: int = 0) -> Ack:
        flags, path, seq, body = self._unpack(datagram, self.ACK)
        if flags:
            raise WireError(f"unknown flags 0x{flags:02x} in an ACK")
        if not body or body[0] > self.max_sack or len(body) != 1 + body[0] * self._range.size:
            raise WireError("ACK's selective-ACK list is malformed")
        ranges = []
        for i in range(body[0]):
            first, last = self._range.unpack_from(body, 1 + i * self._range.size)
            first, last = unwrap(first, reference, 32), unwrap(last, reference, 32)
            if first > last:
                raise WireError(f"selective-ACK range {first}..{last} runs backwards")
            ranges.append((first, last))
        return Ack(unwrap(seq, reference, 32), tuple(ranges), path)


def _md5(data: bytes) -> bytes:
    import hashlib  # here, not at the top: only this format needs it, and every program starts

    return hashlib.md5(data).digest()


class Md5Format(ExtFormat):
    """The extended format with an MD5 digest in place of the CRC32 (seed 000's
    "md5 checksum"): magic/version 0xA2, then type, flags, path, seq u32 as in `ext`,
    then the 16-byte MD5 of the whole message with the digest field zeroed (the report
    hashed the payload only; covering the header too keeps a damaged sequence number
    out). Header 24 bytes, so a data message carries up to 65483 bytes."""

    name = "md5"
    header_size = 24
    max_payload = MAX_UDP_PAYLOAD - header_size
    MAGIC = 0xA2
    _fields = struct.Struct(">BBBBI")
    _zero_digest = bytes(16)

    def _pack(self, kind: int, flags: int, path: int, seq: int, body: bytes) -> bytes:
        if not 0 <= path <= 255:
            raise WireError(f"path id {path} does not fit in a byte")
        head = self._fields.pack(self.MAGIC, kind, flags, path, seq & 0xFFFFFFFF)
        return head + _md5(head + self._zero_digest + body) + body

    def _unpack(self, datagram: bytes, kind: int) -> tuple[int, int, int, bytes]:
        if len(datagram) < self.header_size:
            raise WireError(f"message of {len(datagram)} bytes is shorter than the {self.header_size}-byte header")
        if len(datagram) > MAX_UDP_PAYLOAD:
            raise WireError(f"message of {len(datagram)} bytes is longer than {MAX_UDP_PAYLOAD}")
        magic, got_kind, flags, path, seq = self._fields.unpack_from(datagram)
        if magic != self.MAGIC:
            raise WireError(f"magic/version byte 0x{magic:02x}, expected 0x{self.MAGIC:02x}")
        body = bytes(datagram[self.header_size :])
        if _md5(bytes(datagram[:8]) + self._zero_digest + body) != bytes(datagram[8:24]):
            raise WireError("MD5 mismatch (corrupt message)")
        if got_kind != kind:
            raise WireError(f"message type {got_kind}, expected {kind}")
        return flags, path, seq, body


class StarterMd5Format:
    """The multihoming starter's format (assignments/source/multihoming/rdt.py), in
    either byte order: no path id (the runtime tells a path by its address), no
    selective ACKs (an ACK names the one packet it acknowledges).

        data: seq u32 | flags u8 (1: end of file) | length u16 | MD5 (16) | payload <= 1024
        ACK:  seq u32

    The MD5 covers seq, flags and length packed in the message's byte order, then the
    payload. A decoder also takes a digest over the fields packed big-endian: a student
    who turned the header little-endian but kept the starter's digest helper."""

    seq_bits = 32
    header_size = 23
    max_payload = 1024
    has_sack = False
    has_crc = True
    has_path = False

    def __init__(self, byteorder: str = "big"):
        self.name = "mh" if byteorder == "big" else "mh-le"
        prefix = ">" if byteorder == "big" else "<"
        self._fields = struct.Struct(prefix + "IBH")
        self._big = struct.Struct(">IBH")
        self._ack = struct.Struct(prefix + "I")

    def encode_data(self, msg: Data) -> bytes:
        if len(msg.payload) > self.max_payload:
            raise WireError(f"{self.name}: payload of {len(msg.payload)} bytes exceeds {self.max_payload}")
        fields = self._fields.pack(msg.seq & 0xFFFFFFFF, 1 if msg.eof else 0, len(msg.payload))
        return fields + _md5(fields + msg.payload) + msg.payload

    def decode_data(self, datagram: bytes, reference: int = 0) -> Data:
        if not self.header_size <= len(datagram) <= self.header_size + self.max_payload:
            raise WireError(
                f"data message of {len(datagram)} bytes, expected {self.header_size} to "
                f"{self.header_size + self.max_payload}"
            )
        seq, flags, length = self._fields.unpack_from(datagram)
        payload = bytes(datagram[self.header_size :])
        if flags > 1 or length != len(payload):
            raise WireError(f"flags {flags} / length {length} do not fit a message of {len(payload)} payload bytes")
        digest = bytes(datagram[7:23])
        if digest != _md5(bytes(datagram[:7]) + payload) and digest != _md5(
            self._big.pack(seq, flags, length) + payload
        ):
            raise WireError("MD5 mismatch (corrupt message)")
        return Data(unwrap(seq, reference, 32), payload, bool(flags))

    def encode_ack(self, ack: Ack) -> bytes:
        return self._ack.pack(ack.seq & 0xFFFFFFFF)

    def decode_ack(self, datagram: bytes, reference: int = 0) -> Ack:
        if len(datagram) != self._ack.size:
            raise WireError(f"ACK of {len(datagram)} bytes, expected {self._ack.size}")
        return Ack(unwrap(self._ack.unpack(datagram)[0], reference, 32))


FORMATS = {
    "comn": ComnFormat("big"),
    "comn-le": ComnFormat("little"),
    "ext": ExtFormat(),
    "md5": Md5Format(),
    "mh": StarterMd5Format("big"),
    "mh-le": StarterMd5Format("little"),
}


def get_format(name: str):
    """The codec for a format name (one of FORMATS)."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown wire format {name!r}; expected one of: {', '.join(FORMATS)}") from None
