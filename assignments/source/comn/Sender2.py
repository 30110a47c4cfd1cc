# Forename Surname Matric
"""Part 2: stop-and-wait sender.

    python3 Sender2.py <RemoteHost> <Port> <Filename> <RetryTimeout>

RetryTimeout is in milliseconds. Prints "<retransmissions> <throughput KB/s>" on one line.
The wire format is in rdt.py (2-byte sequence number, 1-byte end-of-file flag, up to
1024 bytes of payload; ACKs are the 2-byte sequence number).
"""
import socket
import sys
import time

import rdt

args = rdt.arguments(["RemoteHost", "Port", "Filename", "RetryTimeout"])
host, port, filename, timeout_ms = args[0], int(args[1]), args[2], float(args[3])
pieces = rdt.read_pieces(filename)
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

# TODO (part 2): stop-and-wait.
#  - send piece 0, start a timer of RetryTimeout milliseconds (sock.settimeout);
#  - wait for its ACK; on a timeout send the same piece again and count a retransmission;
#  - an ACK for the piece in flight moves on to the next piece; ignore any other ACK;
#  - after the last piece's ACK (or, if its ACK never comes, after some retries), stop;
#  - print the number of retransmissions and the throughput in KB/s (file size / 1024 /
#    seconds from the first send to the last ACK), on one line: "92 70.13".
sys.exit("Sender2.py: stop-and-wait is not written yet (see the TODO in Sender2.py)")
