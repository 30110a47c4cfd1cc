# Forename Surname Matric
"""Stop-and-wait receiver with CRC32 (complete, as the course hands it out).

    python3 Receiver.py <port> <file> <payload bytes>

Listens on every IPv4 and IPv6 address. Keeps the next packet when it arrives intact
(a corrupted message fails its CRC32 and is dropped as if lost), and ACKs every intact
data message with its own sequence number, so a sender whose ACK was lost hears it
again. Once the end-of-file packet is in, writes the file, then stays and ACKs again
whatever still arrives, until the sender has been silent for LINGER seconds.
"""
import os
import socket
import sys

import rdt

LINGER = 10.0      # seconds of silence from the sender before leaving, once the file is written

args = rdt.arguments(["port", "file", "payload bytes"])
port, filename = rdt.number(args[0], "port", 1), args[1]
payload_size = rdt.number(args[2], "payload bytes", 1)
if payload_size > rdt.MAX_PAYLOAD:
    print(f"Receiver.py: payload bytes must be at most {rdt.MAX_PAYLOAD}, got {payload_size}", file=sys.stderr)
    sys.exit(2)
sock = rdt.receiver_socket(port)

pieces = []        # the file's payloads in order
done = False
sender = None
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
    sock.sendto(rdt.pack_ack(seq), sender)

partial = filename + ".part"
with open(partial, "wb") as out:
    out.write(b"".join(pieces))
os.replace(partial, filename)      # nobody ever sees half a file

sock.settimeout(LINGER)
try:
    while True:
        datagram, address = sock.recvfrom(65_536)
        message = rdt.unpack_data(datagram)
        if address == sender and message is not None:
            sock.sendto(rdt.pack_ack(message[0]), sender)
except socket.timeout:
    pass
sock.close()
