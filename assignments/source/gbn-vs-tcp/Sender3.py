# Forename Surname Matric
"""Go-Back-N sender.

    python3 Sender3.py <RemoteHost> <Port> <Filename> <RetryTimeout> <WindowSize>

RetryTimeout is in milliseconds. The wire format is in rdt.py (the extended format: a
4-byte sequence number and a CRC32 that catches corrupted packets; 1024 bytes of payload
per packet); ACKs are cumulative.
"""
import sys

import rdt

args = rdt.arguments(["RemoteHost", "Port", "Filename", "RetryTimeout", "WindowSize"])
host, port, filename = args[0], rdt.number(args[1], "Port", 1), args[2]
timeout_ms, window = rdt.number(args[3], "RetryTimeout", 1), rdt.number(args[4], "WindowSize", 1)
pieces = rdt.read_pieces(filename)
sock = rdt.sender_socket(host, port)

# TODO: Go-Back-N.
#  - keep up to WindowSize unacknowledged packets in flight (base .. next - 1);
#  - ACKs are cumulative: an ACK for n acknowledges every packet up to n; slide base;
#    rdt.unpack_ack gives None for a corrupted or foreign datagram: ignore it;
#  - one timer, for the oldest unacknowledged packet: when it expires, resend it and
#    every packet after it that was sent, and restart the timer;
#  - a connected UDP socket raises ConnectionRefusedError while the receiver is not up:
#    treat that as a lost packet;
#  - stop once the last packet is acknowledged.
sys.exit("Sender3.py: Go-Back-N is not written yet (see the TODO in Sender3.py)")
