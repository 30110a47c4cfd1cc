# Forename Surname Matric
"""Stop-and-wait sender with CRC32 and exponential back-off.

    python3 Sender.py <host> <port> <file> <payload bytes>      host: an IPv4 or IPv6 address

Sends the file in packets of <payload bytes> (1 to 65,495; the wire format is in rdt.py),
one at a time: the next only when the ACK of this one has arrived. Prints the transfer
time and the retransmissions.

Given (complete): stop-and-wait with a timeout of 200 ms. Yours: the TODO below.
"""
import socket
import sys
import time

import rdt

INITIAL_TIMEOUT = 0.2    # seconds
GIVE_UP = 30.0           # seconds without any ACK before the sender stops (exit status 1)

args = rdt.arguments(["host", "port", "file", "payload bytes"])
host, port, filename = args[0], rdt.number(args[1], "port", 1), args[2]
payload_size = rdt.number(args[3], "payload bytes", 1)
if payload_size > rdt.MAX_PAYLOAD:
    print(f"Sender.py: payload bytes must be at most {rdt.MAX_PAYLOAD}, got {payload_size}", file=sys.stderr)
    sys.exit(2)
pieces = rdt.read_pieces(filename, payload_size)
sock = rdt.sender_socket(host, port)


class Timer:
    """The retransmission timeout."""

    def __init__(self):
        self.timeout = INITIAL_TIMEOUT

    def sample(self, rtt):
        """An RTT measured on the ACK of a packet sent once (seconds)."""
        # TODO (adaptive timeout, RFC 6298): EstimatedRTT = 7/8 EstimatedRTT + 1/8 rtt,
        #   DevRTT = 3/4 DevRTT + 1/4 |rtt - EstimatedRTT|, timeout = EstimatedRTT + 4 DevRTT
        #   (the first sample: EstimatedRTT = rtt, DevRTT = rtt / 2); a new sample also undoes the back-off.

    def expired(self):
        """The timer went off with no ACK."""
        # TODO (exponential back-off): double the timeout at each expiry, up to 0.5 s
        #   (or the RTT estimate, if that is higher).
        sys.exit("Sender.py: exponential back-off is not written yet (see the TODO in Sender.py)")


timer = Timer()
retransmissions = 0
start = last_ack = time.monotonic()
for seq, payload in enumerate(pieces):
    message = rdt.pack_data(seq, seq == len(pieces) - 1, payload)
    first = True
    while True:
        sent = time.monotonic()
        try:
            sock.send(message)
        except ConnectionRefusedError:      # the receiver is not up yet: as good as lost
            pass
        if not first:
            retransmissions += 1
        deadline = sent + timer.timeout
        acked = False
        while not acked and time.monotonic() < deadline:
            sock.settimeout(max(0.0, deadline - time.monotonic()))
            try:
                acked = rdt.unpack_ack(sock.recv(64)) == seq
            except (socket.timeout, ConnectionRefusedError):
                break
        if acked:
            last_ack = time.monotonic()
            if first:
                timer.sample(last_ack - sent)
            break
        if time.monotonic() - last_ack > GIVE_UP:
            sys.exit(f"Sender.py: no ACK from {host}:{port} for {GIVE_UP:g} s; giving up")
        timer.expired()
        first = False

print(f"{time.monotonic() - start:.3f} s, {retransmissions} retransmissions")
