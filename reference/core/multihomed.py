"""Multi-homed Selective Repeat: one transfer spread over several paths (seed 000).

The sender is Selective Repeat (sr.py) with three additions:
* Spreading. Each new packet goes on the live path with the fewest packets in flight
  (ties: the lowest path number), so equal paths alternate and a slower path gets
  fewer packets. Each packet remembers its path; the runtime sends it there.
* One RTO per path. Paths differ in delay, so each has its own RFC 6298 estimator, fed
  by ACKs of packets sent on it (Karn's rule as usual).
* Dead-path detection. A timeout on a path that has heard no ACK for
  ``dead_path_timeouts`` (D) of its RTOs (the estimate, without back-off) marks it
  dead: its packets in flight are resent on the live paths at once and it gets no new
  ones. Silence, not a count of timeouts: packets sent in one burst time out in one
  burst, and on a lossy path (seed 000's 28% per hop is 48% each way) D of them in a
  row are common although ACKs keep coming; D RTOs without any ACK while packets are
  in flight is not. A dead path is probed now and then (one packet, at its RTO,
  doubling up to rto.BACKOFF_CEILING) and comes back to life as soon as an ACK
  arrives on it. If every path is dead, all are used again (nothing else can get
  the file through).
* Tail copies. Once every packet has been sent, a packet that times out is sent
  ``TAIL_COPIES`` times (or once on every live path, if more): over the other paths
  first. At the tail the link is idle but for the few packets left, and each of them
  can hold up the end by a backed-off RTO: at 48% loss each way (seed 000's 28% per
  hop) one try gets through 27% of the time, three copies 61%.

The receiver is the Selective Repeat receiver: it acks each packet on the path it came
by (``Ack.path`` = ``Data.path``), so an ACK proves that path works both ways.
"""

from __future__ import annotations

from reference.core.api import Data
from reference.core.config import CoreConfig
from reference.core.rto import BACKOFF_CEILING, RtoEstimator
from reference.core.sr import TAIL_COPIES, InFlight, SelectiveRepeatReceiver, SelectiveRepeatSender


class MultiHomedSender(SelectiveRepeatSender):
    def __init__(self, data: bytes, config: CoreConfig):
        super().__init__(data, config)
        n = config.paths
        self.estimators = [RtoEstimator(config) for _ in range(n)]
        self.alive = [True] * n
        self.last_heard: list[float | None] = [None] * n  # last ACK on the path (or first send)
        self.in_flight_on = [0] * n  # packets in flight per path
        self.probe_at: list[float | None] = [None] * n
        self.probe_interval = [0.0] * n
        self.path_deaths = 0  # how often a path was declared dead
        self._probes: list[int] = []  # dead paths due for a probe
        self._copies: list[tuple[int, int]] = []  # (seq, path): tail copies due

    def datagrams_to_send(self, now: float) -> list[Data]:
        out = []
        for path in self._probes:
            if self.in_flight and not self.failed:
                # Probe with the oldest packet in flight: useful if it gets through.
                # Its ACK may answer the probe, so it gives no RTT sample (Karn).
                packet = self.in_flight[min(self.in_flight)]
                packet.resends += 1
                self._count_send(resend=True)
                out.append(self._message(packet.seq, path))
        self._probes.clear()
        out += super().datagrams_to_send(now)
        for seq, path in self._copies:
            held = self.in_flight.get(seq)
            if held is not None and not self.failed:
                held.resends += 1
                self._count_send(resend=True)
                out.append(self._message(seq, path))
        self._copies.clear()
        return out

    def next_timer(self) -> float | None:
        timer = super().next_timer()
        probes = [t for t in self.probe_at if t is not None]
        if self.done or not probes:
            return timer
        return min(probes) if timer is None else min(timer, min(probes))

    def handle_timer(self, now: float) -> None:
        for path, due in enumerate(self.probe_at):
            if due is not None and due <= now:
                self._probes.append(path)
                ceiling = max(BACKOFF_CEILING, self.estimators[path].base_rto)
                self.probe_interval[path] = min(self.probe_interval[path] * 2, ceiling, self.config.max_rto)
                self.probe_at[path] = now + self.probe_interval[path]
        super().handle_timer(now)

    # --- the hooks of the SR sender ---

    def _path_for_new(self) -> int:
        return self._least_loaded()

    def _path_for_resend(self, packet: InFlight) -> int:
        return packet.path if self.alive[packet.path] else self._least_loaded()

    def _transmit(self, packet: InFlight, now: float) -> Data:
        if packet.seq in self.in_flight:
            self.in_flight_on[packet.path] -= 1
        msg = super()._transmit(packet, now)
        self.in_flight_on[packet.path] += 1
        if self.last_heard[packet.path] is None:
            self.last_heard[packet.path] = now  # silence counts from the first send
        return msg

    def _estimator(self, path: int) -> RtoEstimator:
        return self.estimators[path]

    def _ack_arrived_on(self, path: int, now: float) -> None:
        if not 0 <= path < len(self.alive):
            return
        self.last_heard[path] = now
        if not self.alive[path]:
            self.alive[path] = True
            self.probe_at[path] = None

    def _forget(self, packet: InFlight) -> None:
        self.in_flight_on[packet.path] -= 1

    def _timed_out(self, packet: InFlight, now: float) -> None:
        path = packet.path
        heard = self.last_heard[path]
        silent_for = now - (heard if heard is not None else packet.sent_at)
        if (
            self.alive[path]
            and sum(self.alive) > 1
            and silent_for >= self.config.dead_path_timeouts * self.estimators[path].base_rto
        ):
            self._declare_dead(path, now)
        super()._timed_out(packet, now)
        if self.next_seq >= self.packet_count and not self.failed:
            live = sorted(
                (p for p in range(len(self.alive)) if self.alive[p] and p != path), key=lambda p: self.in_flight_on[p]
            )
            others = live + [self._path_for_resend(packet)] * TAIL_COPIES
            self._copies += [(packet.seq, p) for p in others[: max(TAIL_COPIES, len(live) + 1) - 1]]

    # --- inside ---

    def _declare_dead(self, path: int, now: float) -> None:
        self.alive[path] = False
        self.path_deaths += 1
        self.probe_interval[path] = self.estimators[path].rto
        self.probe_at[path] = now + self.probe_interval[path]
        for packet in self.in_flight.values():
            if packet.path == path:
                self._queue_resend(packet)  # resent on a live path (_path_for_resend)

    def _least_loaded(self) -> int:
        live = [p for p in range(len(self.alive)) if self.alive[p]] or list(range(len(self.alive)))
        return min(live, key=lambda p: self.in_flight_on[p])


class MultiHomedReceiver(SelectiveRepeatReceiver):
    pass
