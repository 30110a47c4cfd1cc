# Forename Surname Matric
"""Part 3: Go-Back-N receiver.

    python3 Receiver3.py <Port> <Filename>

Writes the file it receives to <Filename>. The wire format is in rdt.py.
"""
import sys

import rdt

args = rdt.arguments(["Port", "Filename"])
port, filename = args[0], args[1]
sock = rdt.receiver_socket(port)

# TODO (part 3): Go-Back-N receiver.
#  - accept only the piece expected next; discard anything else (out of order or a
#    duplicate) and re-send the ACK of the last piece received in order;
#  - the ACK carries the highest sequence number received in order (cumulative);
#  - after the end-of-file piece, keep re-ACKing for a moment, then exit.
sys.exit("Receiver3.py: Go-Back-N is not written yet (see the TODO in Receiver3.py)")
