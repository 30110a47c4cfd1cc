# Forename Surname Matric
"""Multi-homed sender.

    python3 Sender.py <file> <host>:<port> [<host2>:<port2>]

One address per path to the receiver: one address is experiment 1 (s–r3–d), two are
experiment 2 (s–r1–d and s–r2–d). Sends the file with Selective Repeat (the wire format
is in rdt.py): up to WINDOW packets in flight, each with its own timer, a packet resent
alone when its timer expires. Prints the file transfer time.

Given (complete): Selective Repeat over one path with a fixed timeout.
Yours: the three TODOs below.
"""
import selectors
import socket
import sys
import time

import rdt

WINDOW = 64            # packets in flight
TIMEOUT = 0.1          # seconds: the given fixed timeout (TODO 1 replaces it)
GIVE_UP = 30.0         # seconds without any ACK before the sender stops (exit status 1)

if len(sys.argv) not in (3, 4):
    rdt.usage("<file> <host>:<port> [<host2>:<port2>]")
filename, addresses = sys.argv[1], [rdt.address(a) for a in sys.argv[2:]]
pieces = rdt.read_pieces(filename)

# TODO 1 (adaptive timeout per path): keep EstimatedRTT and DevRTT for each path
#   (α = 0.125, β = 0.25; timeout = EstimatedRTT + 4 DevRTT), sampled on ACKs of packets
#   sent once (Karn's rule), and double a path's timeout when one of its timers expires.
# TODO 2 (two paths): with two addresses, send over both at once (e.g. each new packet on
#   the path with fewer packets in flight), each packet's timer from its path's timeout;
#   the ACK comes back on the path the packet took.
# TODO 3 (dead-path detection): a path with no ACK for several of its timeouts in a row is
#   down: stop using it and resend what was in flight on it over the other path.
if len(addresses) > 1:
    sys.exit("Sender.py: multi-homing is not written yet (see TODOs 2 and 3 in Sender.py)")

paths = []                         # one connected socket per path
selector = selectors.DefaultSelector()
for host, port in addresses:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((host, port))
    sock.setblocking(False)
    selector.register(sock, selectors.EVENT_READ, len(paths))
    paths.append(sock)


def send(seq, path):
    try:
        paths[path].send(rdt.pack_data(seq, seq == len(pieces) - 1, pieces[seq]))
    except (ConnectionRefusedError, BlockingIOError):    # receiver not up yet, or a full buffer: as lost
        pass


acked = [False] * len(pieces)
deadline = {}          # packet in flight -> when its timer expires
base = next_seq = 0    # oldest unacknowledged packet, next packet never sent
start = last_ack = time.monotonic()
while base < len(pieces):
    now = time.monotonic()
    while next_seq < len(pieces) and next_seq < base + WINDOW:
        send(next_seq, 0)
        deadline[next_seq] = now + TIMEOUT
        next_seq += 1
    for seq, due in list(deadline.items()):
        if due <= now:
            send(seq, 0)
            deadline[seq] = now + TIMEOUT
    if now - last_ack > GIVE_UP:
        sys.exit(f"Sender.py: no ACK for {GIVE_UP:g} s; giving up")
    for key, _ in selector.select(max(0.0, min(deadline.values(), default=now) - now)):
        try:
            seq = rdt.unpack_ack(key.fileobj.recv(64))
        except (ConnectionRefusedError, BlockingIOError):
            continue
        if seq is None or seq >= len(pieces) or acked[seq]:
            continue
        acked[seq], last_ack = True, time.monotonic()
        deadline.pop(seq, None)
        while base < len(pieces) and acked[base]:
            base += 1

print(f"{time.monotonic() - start:.3f} s")
