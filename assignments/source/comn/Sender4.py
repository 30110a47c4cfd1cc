# Forename Surname Matric
"""Part 4: Selective Repeat sender.

    python3 Sender4.py <RemoteHost> <Port> <Filename> <RetryTimeout> <WindowSize>

RetryTimeout is in milliseconds. Prints "<throughput KB/s>" on one line.
The wire format is in rdt.py (2-byte sequence number, 1-byte end-of-file flag, up to
1024 bytes of payload; ACKs are the 2-byte sequence number).
"""
import socket
import sys
import time

import rdt

args = rdt.arguments(["RemoteHost", "Port", "Filename", "RetryTimeout", "WindowSize"])
host, port, filename, timeout_ms = args[0], int(args[1]), args[2], float(args[3])
window = int(args[4])
pieces = rdt.read_pieces(filename)
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

# TODO (part 4): Selective Repeat.
#  - keep up to WindowSize unacknowledged pieces in flight, each with its own timer;
#  - an ACK acknowledges only the piece it names; slide the window past acknowledged pieces;
#  - a piece whose timer expires is resent alone;
#  - stop once every piece is acknowledged; print the throughput in KB/s.
sys.exit("Sender4.py: Selective Repeat is not written yet (see the TODO in Sender4.py)")
