# Forename Surname Matric
"""Go-Back-N receiver (complete, as the course hands it out).

    python3 Receiver3.py <Port> <Filename>

Keeps only the next packet in order (anything else is discarded), and answers every intact
data message with a cumulative ACK: the highest packet received in order. A corrupted
message fails its CRC32 and is dropped as if lost. Once the end-of-file packet is in,
writes the file, then stays and ACKs again whatever still arrives (its last ACKs may have
been lost), until the sender has been silent for LINGER seconds.
"""
import os
import socket

import rdt

LINGER = 10.0      # seconds of silence from the sender before leaving, once the file is written

args = rdt.arguments(["Port", "Filename"])
port, filename = rdt.number(args[0], "Port", 1), args[1]
sock = rdt.receiver_socket(port)

pieces = []        # the file's payloads in order
done = False
sender = None      # the sender's address (the first that sends a data message)
while not done:
    datagram, address = sock.recvfrom(65_536)
    message = rdt.unpack_data(datagram)
    if message is None or sender not in (None, address):
        continue
    sender = address
    seq, eof, payload = message
    if seq == len(pieces):
        pieces.append(payload)
        done = eof
    sock.sendto(rdt.pack_ack(len(pieces) - 1), sender)

partial = filename + ".part"
with open(partial, "wb") as out:
    out.write(b"".join(pieces))
os.replace(partial, filename)      # nobody ever sees half a file

sock.settimeout(LINGER)
try:
    while True:
        datagram, address = sock.recvfrom(65_536)
        if address == sender and rdt.unpack_data(datagram) is not None:
            sock.sendto(rdt.pack_ack(len(pieces) - 1), sender)
except socket.timeout:
    pass
sock.close()
