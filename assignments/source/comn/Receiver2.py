# Forename Surname Matric
"""Part 2: stop-and-wait receiver.

    python3 Receiver2.py <Port> <Filename>

Writes the file it receives to <Filename>. The wire format is in rdt.py.
"""
import sys

import rdt

args = rdt.arguments(["Port", "Filename"])
port, filename = args[0], args[1]
sock = rdt.receiver_socket(port)

# TODO (part 2): stop-and-wait receiver.
#  - ACK every data message with its own sequence number (so a lost ACK is repaired);
#  - write a piece only if it is the one expected next (a resent piece arrives twice);
#  - after the end-of-file piece, keep re-ACKing for a moment (say until 2 s pass with
#    nothing received) in case your last ACK was lost, then exit.
sys.exit("Receiver2.py: stop-and-wait is not written yet (see the TODO in Receiver2.py)")
