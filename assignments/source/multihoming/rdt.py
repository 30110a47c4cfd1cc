# Forename Surname Matric
"""What the multi-homed sender and receiver share: the wire format and a few helpers
(standard library only).

The wire format (after the report's: a sequence number, the payload's length and an
MD5 checksum; its own ACK number and 512-byte payloads left out):

    data message:  | sequence number (4 bytes) | flags (1 byte) | length (2 bytes) | MD5 (16 bytes) | payload |
    ACK message:   | sequence number (4 bytes) |

- Sequence numbers count packets from 0; packet n holds the file's bytes n*1024 .. n*1024+1023.
- flags: 1 on the last packet (end of file), else 0. length: the payload's bytes (0..1024).
- MD5 over the sequence number, flags, length and payload: a message whose digest does
  not match is dropped as corrupt.
- Every packet is acknowledged on its own (Selective Repeat), with an ACK on the path the
  packet came in on.
- Byte order: big-endian (struct's "!"). The harness measures on the wire and does not
  care, as long as your sender and your receiver agree.
"""
import hashlib
import socket
import struct
import sys

PAYLOAD = 1024
HEADER = struct.Struct("!IBH16s")     # sequence number, flags, length, MD5
ACK = struct.Struct("!I")
MAX_DATAGRAM = HEADER.size + PAYLOAD


def _digest(seq, flags, payload):
    return hashlib.md5(struct.pack("!IBH", seq, flags, len(payload)) + payload).digest()


def pack_data(seq, eof, payload):
    flags = 1 if eof else 0
    return HEADER.pack(seq, flags, len(payload), _digest(seq, flags, payload)) + payload


def unpack_data(datagram):
    """-> (seq, eof, payload), or None for a datagram that is not an intact data message."""
    if not HEADER.size <= len(datagram) <= MAX_DATAGRAM:
        return None
    seq, flags, length, digest = HEADER.unpack_from(datagram)
    payload = datagram[HEADER.size:]
    if flags not in (0, 1) or length != len(payload) or digest != _digest(seq, flags, payload):
        return None
    return seq, flags == 1, payload


def pack_ack(seq):
    return ACK.pack(seq)


def unpack_ack(datagram):
    """-> the acknowledged packet, or None for a datagram that is not an ACK."""
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


def usage(names):
    print(f"usage: {sys.argv[0]} {names}", file=sys.stderr)
    sys.exit(2)


def address(text):
    """HOST:PORT -> (host, port), or a one-line message and exit status 2."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        print(f"{sys.argv[0]}: expected HOST:PORT, got {text!r}", file=sys.stderr)
        sys.exit(2)
    return host.strip("[]"), int(port)


def receiver_socket(port):
    """A UDP socket bound to port on every IPv4 address of this host (one per path)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("", port))
    return sock
