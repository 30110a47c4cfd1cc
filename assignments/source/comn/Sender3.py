# Forename Surname Matric
"""Part 3: Go-Back-N sender.

    python3 Sender3.py <RemoteHost> <Port> <Filename> <RetryTimeout> <WindowSize>

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

# TODO (part 3): Go-Back-N.
#  - keep up to WindowSize unacknowledged pieces in flight (base .. next - 1);
#  - ACKs are cumulative: an ACK for n acknowledges every piece up to n; slide base;
#  - one timer, for the oldest unacknowledged piece: when it expires, resend it and
#    every piece after it that was sent, and restart the timer;
#  - stop once the last piece is acknowledged; print the throughput in KB/s.
sys.exit("Sender3.py: Go-Back-N is not written yet (see the TODO in Sender3.py)")
