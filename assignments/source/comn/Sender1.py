# Forename Surname Matric
"""Part 1: send a file over UDP, no reliability (complete, as the course hands it out).

    python3 Sender1.py <RemoteHost> <Port> <Filename>
"""
import socket
import time

import rdt

host, port, filename = rdt.arguments(["RemoteHost", "Port", "Filename"])
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
pieces = rdt.read_pieces(filename)
for seq, piece in enumerate(pieces):
    sock.sendto(rdt.pack_data(seq, seq == len(pieces) - 1, piece), (host, int(port)))
    time.sleep(0.001)    # pace the packets: the 10 Mbit/s link carries one every 0.86 ms
sock.close()
