"""Selective Repeat: resend only the packets that were lost.

Sender. Up to ``window`` packets past the oldest unacked one (``base``) may be in
flight. Each packet has its own timer: when it expires, that packet alone is sent again
(and with back-off configured, the timeout doubles: see rto.py). Each ACK names one packet; the sender marks
it and slides ``base`` past every acked packet at the front of the window.

Two refinements make it efficient:
* Early loss detection (``dup_ack_threshold`` k, 0 = off): once k packets that were
  sent *after* an unacked packet have been acked, that packet is almost surely lost,
  so it is resent at once instead of waiting for its timer (the idea of TCP's fast
  retransmit and of RACK, in SR terms). An ACK of a packet sent more than once counts
  at the copy it can answer: the first one if it came sooner after the latest than
  the shortest round trip seen (RACK's test), so a premature timeout's resend does not
  make the packets queued behind it look lost.
* Selective-ACK ranges (``sack``, when the wire format has room): every ACK also says
  "everything below X, and these ranges, have arrived". A lost ACK then costs
  nothing: the next ACK repeats what it said.

Two more are for a window that the path could carry in less than a round trip (the
sender spends most of its time with the window full, waiting on its oldest packet),
as in the COMN sheet's Q5 (W=64, fixed 66 ms timeout): the COMN programs turn them on.
* Pacing (``pace``): new packets leave spread out, a window per shortest round trip
  (pacing.py), not in one burst whenever the window opens: they wait here and not in
  the bottleneck's queue, so a fixed timeout shorter than a full window's queue does
  not fire for packets that were merely queued.
* Repair copies (``repair_copies``): a packet that early loss detection finds lost
  is sent that many times at once. Without selective ACKs, a lost resend (or its lost
  ACK) holds the window's base for another round trip while the rest of the window
  waits; with two copies that takes both to fail. The copies use capacity that a
  window-bound sender leaves idle.

One more is for the end of a transfer on a lossy link:
* Tail copies (``tail_copies`` c): once every packet has been sent, a resend goes c
  times at once while fewer packets are in flight than the path delivered in the last
  shortest round trip, and so does the last packet's first send (nothing sent after it
  can show that it was lost). At the tail the link idles and each repair round costs a
  round trip or a backed-off RTO; c copies fail a round only if all c do, and use only
  capacity the tail leaves idle (a window wider than the path, whose queue stays full,
  sends none). The last LAST_FEW in flight, whose ACKs no later ACK repeats, go up to
  LAST_COPIES times: enough for a round to fail at most LAST_ROUND_FAILS of the time at
  the share of messages answered so far.

Receiver. Its window is ``[base, base+N-1]``. A packet in the window is buffered (if
new) and acked; the file is handed over in order as gaps fill. A packet in
``[base-N, base-1]`` was already delivered but its ACK may have been lost, so it is
acked again; anything else is ignored. The sender's window must be no larger than the
receiver's, and with wrapping sequence numbers at most half the sequence space.

Timers: ``next_timer()`` is the earliest packet deadline; the heap holds
``(deadline, transmission number, seq)`` and stale entries (packet acked or resent
since) are skipped when they come to the top. A packet times out once it has been
unacked for longer than the RTO in force *when the timer fires*: while a queue fills
up, RTT samples grow, and a deadline fixed at send time would fire too early.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from collections import deque

from reference.core.api import Ack, Data
from reference.core.base import ReceiverBase, SenderBase
from reference.core.config import TAIL_COPIES, CoreConfig  # noqa: F401  (TAIL_COPIES: sr's default, here too)
from reference.core.pacing import Pacer
from reference.core.rto import RtoEstimator


# The last few packets (at most LAST_FEW in flight: the link idles) go up to LAST_COPIES
# times, so that a round fails at most LAST_ROUND_FAILS of the time.
LAST_FEW, LAST_COPIES, LAST_ROUND_FAILS = 4, 8, 0.01


class InFlight:
    """One sent, not yet acked packet."""

    __slots__ = ("seq", "sent_at", "tx", "first_tx", "resends", "path", "later_acks", "queued", "copies")

    def __init__(self, seq: int, sent_at: float, tx: int, path: int = 0):
        self.seq = seq
        self.sent_at = sent_at
        self.tx = tx  # transmission number of its latest send (global order)
        self.first_tx = -1  # ... of its first send
        self.resends = 0
        self.path = path
        self.later_acks = 0  # packets sent after it that were acked since
        self.queued = False  # waiting in the resend queue
        self.copies = 1  # ... to be sent this many times


class SelectiveRepeatSender(SenderBase):
    def __init__(self, data: bytes, config: CoreConfig):
        super().__init__(data, config)
        self.acked = bytearray(self.packet_count)
        # Unacked packets in order of their latest transmission (dicts keep order).
        self.in_flight: dict[int, InFlight] = {}
        self._resend: deque[InFlight] = deque()
        self._timers: list[tuple[float, int, int]] = []
        self._tx = 0
        self._acked_at: deque[float] = deque()  # when packets were acked, the last min RTT's
        self.rto = RtoEstimator(config)
        self.min_rtt: float | None = None  # the shortest RTT sample (Karn's rule applied)
        # pacing.py: the window (or the cap on packets in flight) per round trip
        self.pacer = Pacer(min(self.window, config.max_in_flight or self.window), self.rto.rto) if config.pace else None

    # --- the sans-IO interface ---

    def datagrams_to_send(self, now: float) -> list[Data]:
        out = []
        while self._resend and not self.failed:
            packet = self._resend.popleft()
            packet.queued = False
            if self.in_flight.get(packet.seq) is packet:
                out += self._transmit_copies(packet, now)
        while self._can_send_new() and self._pipe_has_room() and self._paced(now):
            seq = self.next_seq
            self._sent_new(seq)
            packet = InFlight(seq, now, 0, path=self._path_for_new())
            if seq == self.packet_count - 1:  # no later packet will show its loss
                packet.copies = self.config.tail_copies
            out += self._transmit_copies(packet, now)
        return out

    def receive(self, ack: Ack, now: float) -> None:
        self.stats.acks_received += 1
        if self.done:
            return
        self._ack_arrived_on(ack.path, now)
        if ack.sack:
            newly = list({seq: self.in_flight[seq] for seq in self._seqs_acked(ack) if seq in self.in_flight}.values())
        else:  # the COMN format: one packet per ACK (the common case, kept cheap)
            packet = self.in_flight.get(ack.seq)
            newly = [packet] if packet is not None else []
        if not newly:
            return
        for packet in newly:
            if packet.seq == ack.seq and packet.resends == 0:  # Karn's rule
                self._rtt_sample(packet, now - packet.sent_at)
            del self.in_flight[packet.seq]
            self._forget(packet)
            self.acked[packet.seq] = 1
            self._acked(packet.seq)
            self._estimator(packet.path).progress()
            self._acked_at.append(now)
        self._delivered_lately(now)
        while self.base < self.packet_count and self.acked[self.base]:
            self.base += 1
        self._detect_losses(newly, now)

    def next_timer(self) -> float | None:
        if self.done:
            return None
        timers = self._timers
        while timers and not self._live_timer(timers[0]):
            heapq.heappop(timers)
        timer = timers[0][0] if timers else None
        if self.pacer and self._can_send_new() and self._pipe_has_room():
            paced = self.pacer.next_send_at()  # a new packet waits its turn
            timer = paced if timer is None else min(timer, paced)
        return timer

    def handle_timer(self, now: float) -> None:
        timers = self._timers
        while timers and timers[0][0] <= now and not self.done:
            entry = heapq.heappop(timers)
            if not self._live_timer(entry):
                continue
            packet = self.in_flight[entry[2]]
            # The RTO may have grown since the packet was sent (a queue filling up):
            # it times out only once unacked for longer than the RTO now in force.
            due = packet.sent_at + self._estimator(packet.path).rto
            if due > now:
                heapq.heappush(timers, (due, entry[1], entry[2]))
            else:
                self._timed_out(packet, now)

    # --- inside ---

    def _pipe_has_room(self) -> bool:
        cap = self.config.max_in_flight
        return cap is None or len(self.in_flight) - len(self._resend) < cap

    def _paced(self, now: float) -> bool:
        return self.pacer is None or self.pacer.may_send(now)

    def _seqs_acked(self, ack: Ack):
        """Packet numbers this ACK vouches for that are in flight."""
        yield ack.seq
        for first, last in ack.sack:
            # Ranges may start far below base (the cumulative part): clip to the window,
            # and walk whichever is shorter, the range or the packets in flight.
            first, last = max(first, self.base), min(last, self.next_seq - 1)
            if last - first < len(self.in_flight):
                yield from range(first, last + 1)
            else:
                yield from [seq for seq in self.in_flight if first <= seq <= last]

    def _transmit(self, packet: InFlight, now: float) -> Data:
        resend = self.in_flight.pop(packet.seq, None) is not None
        self.in_flight[packet.seq] = packet  # now the newest transmission
        if resend:
            packet.resends += 1
            packet.path = self._path_for_resend(packet)
        else:
            packet.first_tx = self._tx
        packet.sent_at, packet.tx, packet.later_acks = now, self._tx, 0
        self._tx += 1
        self._count_send(resend)
        if self.pacer:
            self.pacer.sent(now)
        deadline = now + self._estimator(packet.path).rto
        heapq.heappush(self._timers, (deadline, packet.tx, packet.seq))
        return self._message(packet.seq, packet.path)

    def _transmit_copies(self, packet: InFlight, now: float) -> list[Data]:
        """``packet.copies`` copies of ``packet`` at once; they count as one try
        towards ``max_retries``."""
        copies, packet.copies = packet.copies, 1
        if copies == 1:
            return [self._transmit(packet, now)]
        out = [self._transmit(packet, now) for _ in range(copies)]
        packet.resends -= copies - 1
        return out

    def _live_timer(self, entry: tuple[float, int, int]) -> bool:
        packet = self.in_flight.get(entry[2])
        return packet is not None and packet.tx == entry[1]

    def _timed_out(self, packet: InFlight, now: float) -> None:
        if self._out_of_retries(packet.resends):
            self.failed = True
            return
        self.stats.timeouts += 1
        self._estimator(packet.path).timed_out(now)
        packet.copies = max(packet.copies, self._tail_copies(now))
        self._queue_resend(packet)

    def _tail_copies(self, now: float) -> int:
        """Copies of a resend: ``tail_copies`` once nothing new is left to send and the
        path is not full; more for the last few packets, enough that a round of them
        all fails at most LAST_ROUND_FAILS of the time at the round-trip success rate
        seen so far."""
        copies = self.config.tail_copies
        if copies == 1 or self.next_seq < self.packet_count:
            return 1
        if len(self.in_flight) > LAST_FEW:
            return copies if self._path_not_full(now) else 1
        sent, answered = self.stats.packets_sent, self.stats.acks_received
        if 0 < answered < sent:
            needed = math.ceil(math.log(LAST_ROUND_FAILS) / math.log(1 - answered / sent))
            copies = max(copies, min(needed, LAST_COPIES))
        return copies

    def _path_not_full(self, now: float) -> bool:
        """Are fewer packets in flight than the path delivered in the last shortest
        round trip? A window wider than that (or than the bottleneck's queue) keeps
        the queue full to the end, and copies would only queue, or be dropped, there."""
        return self.min_rtt is not None and len(self.in_flight) <= self._delivered_lately(now)

    def _delivered_lately(self, now: float) -> int:
        """Packets acked in the last shortest round trip (all of them until one is known)."""
        acked_at = self._acked_at
        while self.min_rtt is not None and acked_at and acked_at[0] < now - self.min_rtt:
            acked_at.popleft()
        return len(acked_at)

    def _queue_resend(self, packet: InFlight) -> None:
        if not packet.queued:
            packet.queued = True
            self._resend.append(packet)

    def _detect_losses(self, newly: list[InFlight], now: float) -> None:
        """Resend packets that k packets sent later on the same path have overtaken
        (were acked before them). Paths of different delays reorder, so only the
        packet's own path counts.

        An ACK of a packet sent more than once may answer an earlier copy (Karn). If it
        came back sooner after the latest copy than any round trip yet (RACK's test,
        RFC 8985 6.2), or no round trip is known, it answers the first copy and counts
        as sent then. Counting it at its latest copy made every packet still queued
        behind a premature resend look overtaken: at W=64 with a 66 ms timeout on the
        COMN link (every packet times out before its ACK is back) that resent each
        packet about three times instead of twice."""
        k = self.config.dup_ack_threshold
        if k == 0:
            return
        sent_as = [self._answered_tx(p, now) for p in newly]
        oldest = next(iter(self.in_flight.values()), None)
        newest = max(sent_as)
        if oldest is None or oldest.tx >= newest:  # nothing was overtaken (ACKs in order: most of them)
            return
        acked_txs: dict[int, list[int]] = {}
        for packet, tx in zip(newly, sent_as):
            acked_txs.setdefault(packet.path, []).append(tx)
        for packet in self.in_flight.values():  # oldest transmission first
            if packet.tx >= newest:
                break
            later = sum(1 for tx in acked_txs.get(packet.path, ()) if tx > packet.tx)
            packet.later_acks += later
            if later and packet.later_acks >= k and not packet.queued and not self._out_of_retries(packet.resends):
                self.stats.fast_retransmits += 1
                packet.copies = max(self.config.repair_copies, self._tail_copies(now))
                self._queue_resend(packet)

    def _answered_tx(self, packet: InFlight, now: float) -> int:
        """The transmission an ACK of ``packet`` (just in) answers, as far as can be told."""
        if packet.resends == 0:
            return packet.tx
        if self.min_rtt is None or now - packet.sent_at < self.min_rtt:
            return packet.first_tx  # too soon for the latest copy: an earlier one's ACK
        return packet.tx

    # Hooks for the multi-homed sender (one path here).
    def _path_for_new(self) -> int:
        return 0

    def _path_for_resend(self, packet: InFlight) -> int:
        return packet.path

    def _estimator(self, path: int) -> RtoEstimator:
        return self.rto

    def _rtt_sample(self, packet: InFlight, rtt: float) -> None:
        self.stats.rtt_samples.append(rtt)
        self.min_rtt = rtt if self.min_rtt is None else min(self.min_rtt, rtt)
        if self.pacer:
            self.pacer.round_trip(self.min_rtt)
        self._estimator(packet.path).sample(rtt)

    def _ack_arrived_on(self, path: int, now: float) -> None:
        pass

    def _forget(self, packet: InFlight) -> None:
        """``packet`` was acked and is no longer in flight."""


class SelectiveRepeatReceiver(ReceiverBase):
    def __init__(self, config: CoreConfig):
        super().__init__(config)
        self.window = config.window_packets()
        self._recent: list[int] = []  # latest arrivals above base, newest first

    def receive(self, msg: Data, now: float) -> list[Ack]:
        self.stats.packets_received += 1
        n = self.window
        if self._beyond_eof(msg) or not (self.base - n <= msg.seq < self.base + n):
            self.stats.out_of_window += 1
            return []
        self._store(msg)  # counts a duplicate if below base or already buffered
        self.stats.acks_sent += 1
        return [Ack(msg.seq, self._sack_ranges(msg.seq) if self.config.sack else (), msg.path)]

    def _sack_ranges(self, seq: int) -> tuple[tuple[int, int], ...]:
        """What has arrived, most useful first (as RFC 2018 advises for TCP): all below
        base, then the runs that changed most recently (so each is repeated in a few
        ACKs in case one is lost), then the highest runs."""
        limit = self.config.max_sack_ranges
        ranges = [(0, self.base - 1)] if self.base > 0 else []
        if not self.buffer:
            return tuple(ranges[:limit])
        runs = _runs(sorted(self.buffer))
        starts = [first for first, _ in runs]
        self._recent = [s for s in [seq, *self._recent] if s >= self.base][:limit]
        for recent in self._recent:
            i = bisect_right(starts, recent) - 1
            if i >= 0 and runs[i][1] >= recent and runs[i] not in ranges:
                ranges.append(runs[i])
        for run in reversed(runs):
            if len(ranges) >= limit:
                break
            if run not in ranges:
                ranges.append(run)
        return tuple(ranges[:limit])


def _runs(seqs: list[int]) -> list[tuple[int, int]]:
    """[1, 2, 3, 7, 8] -> [(1, 3), (7, 8)]"""
    runs: list[tuple[int, int]] = []
    for seq in seqs:
        if runs and runs[-1][1] == seq - 1:
            runs[-1] = (runs[-1][0], seq)
        else:
            runs.append((seq, seq))
    return runs
