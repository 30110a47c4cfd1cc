# Forename Surname Matric
"""TCP-like receiver (complete, as the course hands it out).

    python3 Receiver.py <port> <file> <window bytes>

Keeps the segments that arrive out of order within the window, and answers every data
message with a cumulative ACK: the highest segment received in order. Once every
segment up to the end-of-file one is in, writes the file, then stays a while and ACKs
again whatever still arrives (its last ACKs may have been lost), until the sender has
been silent for LINGER seconds.
"""
import os
import socket

import rdt

LINGER = 10.0      # seconds of silence from the sender before leaving, once the file is written

args = rdt.arguments(["port", "file", "window bytes"])
port, filename = rdt.number(args[0], "port", 1), args[1]
window = max(1, rdt.number(args[2], "window bytes", 1) // rdt.PAYLOAD)   # segments
sock = rdt.receiver_socket(port)

held = {}          # segment number -> payload, received but not yet written in order
pieces = []        # the file's payloads in order
last = None        # the end-of-file segment's number, once seen
sender = None      # the sender's address (the first that sends a data message)
while last is None or len(pieces) <= last:
    datagram, address = sock.recvfrom(rdt.MAX_DATAGRAM + 1)
    message = rdt.unpack_data(datagram)
    if message is None or sender not in (None, address):
        continue
    sender = address
    seq, eof, payload = message
    if len(pieces) <= seq < len(pieces) + window:
        held[seq] = payload
        if eof:
            last = seq
    while len(pieces) in held:
        pieces.append(held.pop(len(pieces)))
    sock.sendto(rdt.pack_ack(len(pieces) - 1), sender)

partial = filename + ".part"
with open(partial, "wb") as out:
    out.write(b"".join(pieces))
os.replace(partial, filename)      # nobody ever sees half a file

sock.settimeout(LINGER)
try:
    while True:
        datagram, address = sock.recvfrom(rdt.MAX_DATAGRAM + 1)
        if address == sender and rdt.unpack_data(datagram) is not None:
            sock.sendto(rdt.pack_ack(len(pieces) - 1), sender)
except socket.timeout:
    pass
sock.close()
