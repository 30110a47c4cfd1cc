# Forename Surname Matric
"""What every COMN program shares: the wire format and a few helpers (standard library only).

The wire format (the COMN assignment's):

    data message:  | sequence number (2 bytes) | end-of-file flag (1 byte) | payload (0..1024 bytes) |
    ACK message:   | sequence number (2 bytes) |

- Sequence numbers count packets from 0 (not bytes) and wrap at 65536.
- The file is cut into 1024-byte pieces; the last piece (shorter, or empty for an empty
  file) has the end-of-file flag 1, every other piece 0.
- Byte order: big-endian ("network order", struct's "!"). The course does not fix it;
  the harness measures on the wire and does not care, as long as your sender and your
  receiver agree.
- Stop-and-wait (part 2) and Selective Repeat (part 4) ACK the packet they received;
  Go-Back-N (part 3) ACKs cumulatively: the highest packet received in order.
"""
import socket
import struct
import sys

PAYLOAD = 1024
HEADER = struct.Struct("!HB")      # sequence number, end-of-file flag
ACK = struct.Struct("!H")
MAX_DATAGRAM = HEADER.size + PAYLOAD


def pack_data(seq, eof, payload):
    return HEADER.pack(seq % 65536, 1 if eof else 0) + payload


def unpack_data(datagram):
    """-> (seq, eof, payload), or None for a datagram that is not a data message."""
    if not HEADER.size <= len(datagram) <= MAX_DATAGRAM:
        return None
    seq, eof = HEADER.unpack_from(datagram)
    if eof not in (0, 1):
        return None
    return seq, eof == 1, datagram[HEADER.size:]


def pack_ack(seq):
    return ACK.pack(seq % 65536)


def unpack_ack(datagram):
    """-> seq, or None for a datagram that is not an ACK."""
    return ACK.unpack(datagram)[0] if len(datagram) == ACK.size else None


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
    return pieces


def arguments(names):
    """sys.argv[1:] as the named arguments, or a one-line usage message and exit status 2."""
    args = sys.argv[1:]
    if len(args) != len(names):
        sys.exit(f"usage: {sys.argv[0]} <{'> <'.join(names)}>")
    return args


def receiver_socket(port):
    """A UDP socket bound to localhost:port (as the course runs everything over `lo`)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("localhost", int(port)))
    return sock
