# Forename Surname Matric
"""TCP-like sender.

    python3 Sender.py <host> <port> <file> <window bytes> <k> <timeout ms>

Sends the file in 1000-byte segments (the wire format is in rdt.py) with at most
<window bytes> of unacknowledged data in flight. ACKs are cumulative.
  <k>           duplicate ACKs that trigger a fast retransmit; 0 = no fast retransmit
  <timeout ms>  a fixed retransmission timeout; 0 = an adaptive one (see the TODOs)
Prints the transfer time and the retransmissions on one line.

Given (complete): the sliding window in bytes, cumulative ACKs, one timer for the oldest
unacknowledged segment with a fixed timeout, resending that segment when it expires.
Yours: the two TODOs below.
"""
import socket
import sys
import time

import rdt

GIVE_UP = 30.0     # seconds without any ACK before the sender stops (exit status 1)

args = rdt.arguments(["host", "port", "file", "window bytes", "k", "timeout ms"])
host, port, filename = args[0], rdt.number(args[1], "port", 1), args[2]
window = max(1, rdt.number(args[3], "window bytes", 1) // rdt.PAYLOAD)   # segments in flight
k = rdt.number(args[4], "k")
timeout_ms = rdt.number(args[5], "timeout ms")
pieces = rdt.read_pieces(filename)

# TODO 1 (fast retransmit): when the same ACK arrives k more times (k duplicate ACKs)
#   while segments are in flight, resend the oldest unacknowledged segment at once and
#   restart its timer; count duplicates again from 0 after a new ACK. See on_duplicate_ack.
if k > 0:
    sys.exit("Sender.py: fast retransmit is not written yet (see TODO 1 in Sender.py)")
# TODO 2 (adaptive timeout, RFC 6298): with <timeout ms> 0, start from a 100 ms timeout and
#   measure a sample RTT on every ACK of a segment sent only once (Karn's rule), then
#     EstimatedRTT = (1 - 1/8) EstimatedRTT + 1/8 SampleRTT   (the first sample: EstimatedRTT = SampleRTT,
#     DevRTT       = (1 - 1/4) DevRTT + 1/4 |SampleRTT - EstimatedRTT|           DevRTT = SampleRTT / 2)
#     timeout      = EstimatedRTT + 4 DevRTT
#   and double the timeout after each expiry (back-off), up to 0.5 s. See Timer.
if timeout_ms == 0:
    sys.exit("Sender.py: the adaptive timeout is not written yet (see TODO 2 in Sender.py)")


class Timer:
    """The retransmission timeout. Given: a fixed one. TODO 2: the adaptive one."""

    def __init__(self, timeout_ms):
        self.timeout = timeout_ms / 1000

    def sample(self, rtt):
        """An RTT measured on an ACK (seconds)."""

    def expired(self):
        """The timer went off (back off here)."""


def on_duplicate_ack(count):
    """The count-th duplicate ACK in a row arrived: return True to resend the oldest segment (TODO 1)."""
    return False


sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.connect((host, port))
timer = Timer(timeout_ms)


def send(seq):
    try:
        sock.send(rdt.pack_data(seq, seq == len(pieces) - 1, pieces[seq]))
    except ConnectionRefusedError:      # the receiver is not up yet: as good as lost
        pass


base = 0            # oldest unacknowledged segment
next_seq = 0        # next segment never sent
sent_at = {}        # segment -> when it was first sent (None once resent: no RTT sample from it)
deadline = None     # when the timer of the oldest segment expires
duplicates = 0
retransmissions = 0
start = last_ack = time.monotonic()
while base < len(pieces):
    now = time.monotonic()
    while next_seq < len(pieces) and next_seq < base + window:
        send(next_seq)
        sent_at[next_seq] = now
        next_seq += 1
        if deadline is None:
            deadline = now + timer.timeout
    if now - last_ack > GIVE_UP:
        sys.exit(f"Sender.py: no ACK from {host}:{port} for {GIVE_UP:g} s; giving up")
    sock.settimeout(max(0.0, deadline - now))
    try:
        ack = rdt.unpack_ack(sock.recv(64))
    except socket.timeout:              # the oldest segment's timer expired: resend it
        send(base)
        sent_at[base] = None
        retransmissions += 1
        timer.expired()
        deadline = time.monotonic() + timer.timeout
        continue
    except ConnectionRefusedError:
        continue
    if ack is None:
        continue
    now = last_ack = time.monotonic()
    if ack >= base:                     # new data acknowledged: slide the window
        # Karn's rule: a sample only when no segment this ACK covers was resent (a resent
        # one may be what the ACK answers, and the time from `ack`'s send would be far too long)
        if all(sent_at.get(seq) is not None for seq in range(base, ack + 1)):
            timer.sample(now - sent_at[ack])
        for seq in range(base, ack + 1):
            sent_at.pop(seq, None)
        base, duplicates = ack + 1, 0
        deadline = now + timer.timeout if base < next_seq else None
    elif ack == base - 1 and base < next_seq:
        duplicates += 1
        if on_duplicate_ack(duplicates):
            send(base)
            sent_at[base] = None
            retransmissions += 1
            deadline = now + timer.timeout

print(f"{time.monotonic() - start:.3f} s, {retransmissions} retransmissions")
