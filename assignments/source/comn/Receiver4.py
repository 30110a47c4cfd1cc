# Forename Surname Matric
"""Part 4: Selective Repeat receiver.

    python3 Receiver4.py <Port> <Filename> <WindowSize>

Writes the file it receives to <Filename>. The wire format is in rdt.py.
"""
import sys

import rdt

args = rdt.arguments(["Port", "Filename", "WindowSize"])
port, filename, window = args[0], args[1], int(args[2])
sock = rdt.receiver_socket(port)

# TODO (part 4): Selective Repeat receiver.
#  - ACK every piece within the window (and re-ACK pieces below it: their ACK was lost);
#  - buffer pieces that arrive out of order; write them out in order as the gaps fill;
#  - after the whole file is written, keep re-ACKing for a moment, then exit.
sys.exit("Receiver4.py: Selective Repeat is not written yet (see the TODO in Receiver4.py)")
