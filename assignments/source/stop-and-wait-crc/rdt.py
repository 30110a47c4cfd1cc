# Forename Surname Matric
"""What your sender and receiver share: the wire format and a few helpers (standard
library only).

The wire format (rdtlab's extended format, reference/PROTOCOL.md), all fields big-endian:

    | 0xA1 | type | flags | path | sequence number (4 bytes) | CRC32 (4 bytes) | body ... |

- type 1 = data, 2 = ACK; flags: on data, 1 for the last packet (end of file), else 0; path 0.
- Data body: the payload (this course: up to 1024 bytes per packet; the format takes up to 65,495).
- ACK body: one byte 0 (no selective-ACK ranges). Its sequence number: the packet acknowledged
  (stop-and-wait), or the highest packet received in order (Go-Back-N; "none yet" is 0xFFFFFFFF).
- CRC32 (zlib.crc32) over the whole message with the CRC field set to 0: a flipped bit anywhere
  is caught, and the message is dropped as if lost.
The harness reads this format off the link (round-trip times, the picture of a transfer): keep it.
"""
import socket
import struct
import sys
import zlib

PAYLOAD = 1024
MAX_PAYLOAD = 65_495
HEADER = struct.Struct("!BBBBII")      # magic, type, flags, path, sequence number, CRC32
MAGIC, DATA, ACK = 0xA1, 1, 2
NONE = 0xFFFFFFFF                      # an ACK for "nothing in order yet"


def _message(kind, flags, seq, body):
    zeroed = HEADER.pack(MAGIC, kind, flags, 0, seq & 0xFFFFFFFF, 0) + body
    return zeroed[:8] + zlib.crc32(zeroed).to_bytes(4, "big") + zeroed[12:]


def _parse(datagram, kind):
    """-> (flags, seq, body) of an intact message of `kind`, else None."""
    if len(datagram) < HEADER.size:
        return None
    magic, got, flags, _path, seq, crc = HEADER.unpack_from(datagram)
    zeroed = datagram[:8] + b"\0\0\0\0" + datagram[12:]
    if magic != MAGIC or got != kind or zlib.crc32(zeroed) != crc:
        return None
    return flags, seq, datagram[HEADER.size:]


def pack_data(seq, eof, payload):
    return _message(DATA, 1 if eof else 0, seq, payload)


def unpack_data(datagram):
    """-> (seq, eof, payload), or None for a datagram that is not an intact data message."""
    parsed = _parse(datagram, DATA)
    if parsed is None or parsed[0] not in (0, 1):
        return None
    flags, seq, payload = parsed
    return seq, flags == 1, payload


def pack_ack(seq):
    """An ACK for packet `seq` (-1: none yet)."""
    return _message(ACK, 0, NONE if seq < 0 else seq, b"\0")


def unpack_ack(datagram):
    """-> the acknowledged packet (-1: none yet), or None for a datagram that is not an intact ACK."""
    parsed = _parse(datagram, ACK)
    if parsed is None:
        return None
    return -1 if parsed[1] == NONE else parsed[1]


def read_pieces(filename, size=PAYLOAD):
    """The file as a list of payloads of `size` bytes; the last one carries the end-of-file flag."""
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.exit(f"{sys.argv[0]}: cannot read {filename}: {e.strerror}")
    pieces = [data[i:i + size] for i in range(0, len(data), size)]
    if not pieces or len(pieces[-1]) == size:
        pieces.append(b"")      # an empty last piece, so the receiver knows where the file ends
    return pieces


def arguments(names):
    """sys.argv[1:] as the named arguments, or a one-line usage message and exit status 2."""
    args = sys.argv[1:]
    if len(args) != len(names):
        print(f"usage: {sys.argv[0]} <{'> <'.join(names)}>", file=sys.stderr)
        sys.exit(2)
    return args


def number(text, what, minimum=0):
    """A whole number >= minimum, or a one-line message naming the argument and exit status 2."""
    if not text.isdigit() or int(text) < minimum:
        print(f"{sys.argv[0]}: {what} must be a whole number >= {minimum}, got {text!r}", file=sys.stderr)
        sys.exit(2)
    return int(text)


def receiver_socket(port):
    """A UDP socket bound to port on every IPv6 and IPv4 address of this host."""
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.bind(("::", port))
    return sock


def sender_socket(host, port):
    """A UDP socket connected to host:port (an IPv4 or IPv6 address, or a name)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.connect(address)
    return sock
