# Forename Surname Matric
"""What the TCP-like sender and receiver share: the wire format and a few helpers
(standard library only).

The wire format (the COMN format, with the report's 1000-byte segments):

    data message:  | segment number (2 bytes) | end-of-file flag (1 byte) | payload (0..1000 bytes) |
    ACK message:   | segment number (2 bytes) |

- Segment numbers count segments from 0 (not bytes as real TCP does): segment n holds the
  file's bytes n*1000 .. n*1000+999. A file may have at most 65,535 segments (65 MB), so
  the numbers never wrap.
- The last segment (shorter, or empty) has the end-of-file flag 1, every other one 0.
- ACKs are cumulative: the highest segment received in order; 65535 means "none yet" (-1).
- Byte order: big-endian (struct's "!"). The harness measures on the wire and does not care,
  as long as your sender and your receiver agree.
"""
import socket
import struct
import sys

PAYLOAD = 1000                     # bytes of the file per segment (the report's)
HEADER = struct.Struct("!HB")      # segment number, end-of-file flag
ACK = struct.Struct("!H")
MAX_DATAGRAM = HEADER.size + PAYLOAD
NONE = 65535                       # an ACK for "nothing in order yet"


def pack_data(seq, eof, payload):
    return HEADER.pack(seq, 1 if eof else 0) + payload


def unpack_data(datagram):
    """-> (seq, eof, payload), or None for a datagram that is not a data message."""
    if not HEADER.size <= len(datagram) <= MAX_DATAGRAM:
        return None
    seq, eof = HEADER.unpack_from(datagram)
    if eof not in (0, 1):
        return None
    return seq, eof == 1, datagram[HEADER.size:]


def pack_ack(seq):
    """The cumulative ACK for segment `seq` (-1: none yet)."""
    return ACK.pack(NONE if seq < 0 else seq)


def unpack_ack(datagram):
    """-> the acknowledged segment (-1: none yet), or None for a datagram that is not an ACK."""
    if len(datagram) != ACK.size:
        return None
    seq = ACK.unpack(datagram)[0]
    return -1 if seq == NONE else seq


def read_pieces(filename):
    """The file as a list of payloads; the last one carries the end-of-file flag."""
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.exit(f"{sys.argv[0]}: cannot read {filename}: {e.strerror}")
    pieces = [data[i:i + PAYLOAD] for i in range(0, len(data), PAYLOAD)]
    if not pieces or len(pieces[-1]) == PAYLOAD:
        pieces.append(b"")      # an empty last piece, so the receiver knows where the file ends
    if len(pieces) >= NONE:
        sys.exit(f"{sys.argv[0]}: {filename} is too large ({len(pieces)} segments, at most {NONE - 1})")
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
    """A UDP socket bound to port on every IPv4 address of this host."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("", port))
    return sock
