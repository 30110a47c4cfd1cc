# Forename Surname Matric
"""Multi-homed receiver (complete, as the course hands it out).

    python3 Receiver.py <port> <file> <number of paths>

Listens on <port> on every address of this host: each path of the topology reaches it at
an address of its own. Accepts data from up to <number of paths> sender addresses (one
per path), keeps every intact packet wherever it falls (the report's "bookshelf"), and
ACKs each packet on the path it came in on. Once every packet up to the end-of-file one
is in, writes the file, then stays and ACKs again whatever still arrives (its last ACKs
may have been lost), until the sender has been silent for LINGER seconds.
"""
import os
import socket
import sys

import rdt

LINGER = 10.0      # seconds of silence from the sender before leaving, once the file is written

if len(sys.argv) != 4 or not sys.argv[1].isdigit() or sys.argv[3] not in ("1", "2"):
    rdt.usage("<port> <file> <number of paths: 1 or 2>")
port, filename, paths = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
sock = rdt.receiver_socket(port)

shelf = {}         # packet number -> payload
last = None        # the end-of-file packet's number, once seen
senders = []       # the sender's addresses, one per path, in the order they appeared


def from_sender(address):
    if address not in senders and len(senders) < paths:
        senders.append(address)
    return address in senders


while last is None or len(shelf) <= last:
    datagram, address = sock.recvfrom(rdt.MAX_DATAGRAM + 1)
    message = rdt.unpack_data(datagram)
    if message is None or not from_sender(address):
        continue
    seq, eof, payload = message
    shelf.setdefault(seq, payload)
    if eof:
        last = seq
    sock.sendto(rdt.pack_ack(seq), address)      # on the path it came by

partial = filename + ".part"
with open(partial, "wb") as out:
    out.write(b"".join(shelf[seq] for seq in range(last + 1)))
os.replace(partial, filename)      # nobody ever sees half a file

sock.settimeout(LINGER)
try:
    while True:
        datagram, address = sock.recvfrom(rdt.MAX_DATAGRAM + 1)
        message = rdt.unpack_data(datagram)
        if message is not None and address in senders:
            sock.sendto(rdt.pack_ack(message[0]), address)
except socket.timeout:
    pass
sock.close()
