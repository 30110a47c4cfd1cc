"""A deterministic discrete-event simulator: one sender core and one receiver core over
a simulated channel, on a simulated clock.

    from reference.core import CoreConfig, make_sender, make_receiver
    from reference.sim import Channel, simulate
    res = simulate(make_sender("sr", data, cfg), make_receiver("sr", cfg),
                   Channel(delay=0.025, loss=0.05, rate=10e6), seed=1)
    assert res.ok and res.output == data

Each direction of each path is a ``Channel`` with tc-netem semantics, applied to every
message in this order (net/sched/sch_netem.c): duplicate decision; loss (random, an
explicit list of message indices, or time windows of total loss); corruption of the
original (a checksum drops it, so here it is a loss counted apart); queue-limit tail
drop; then either reordering (sent at once, ahead of the queue) or delay with uniform
jitter followed by serialisation at ``rate`` behind the packets already queued:
``time_to_send = max(last_time_to_send, now + delay) + size / rate``. Loss comes before
the rate queue, so a lost packet costs no capacity, as in netem. A path may share one
queue for both directions (netem on ``lo``, the COMN setting) and may go down for a
time (``down_at``, ``up_at``), dropping everything sent on it meanwhile.

Every random decision comes from a generator seeded by (seed, path, direction), so the
forward channel's decisions for the n-th data message do not depend on the ACKs.

With ``ending=Ending(...)`` the programs' ending rules run too (reference/ending.py, the
same code as on sockets): the receiver leaves once complete and quiet long enough (what
reaches it afterwards is lost), and the sender gives up after its silence limit. Without
it the receiver stays for ever and the sender never gives up, as in the cores' tests.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass

from reference.core.api import Ack, Data, ReceiverCore, SenderCore, SenderStats, ReceiverStats
from reference.ending import LINGER, ReceiverEnding, SenderGiveUp

IP_UDP = 28  # IPv4 + UDP header bytes


@dataclass(frozen=True)
class Channel:
    """One direction of a link. Times in seconds, probabilities in [0, 1], rate in bit/s."""

    delay: float = 0.0
    jitter: float = 0.0  # uniform in [delay - jitter, delay + jitter]
    loss: float = 0.0
    drops: frozenset[int] = frozenset()  # indices of messages (0 = first) to drop
    outages: tuple[tuple[float, float], ...] = ()  # [start, end) windows that drop all
    duplicate: float = 0.0
    reorder: float = 0.0  # sent at once, overtaking the queue
    corrupt: float = 0.0
    rate: float | None = None  # bits per second; None = infinite
    limit: int = 1000  # messages in the delay line (netem's default)

    def __post_init__(self):
        object.__setattr__(self, "drops", frozenset(self.drops))
        for name in ("loss", "duplicate", "reorder", "corrupt"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"Channel.{name} must be a probability in [0, 1], got {getattr(self, name)}")
        if self.delay < 0 or self.jitter < 0:
            raise ValueError(f"Channel delay and jitter must be >= 0, got {self.delay}, {self.jitter}")
        if self.rate is not None and self.rate <= 0:
            raise ValueError(f"Channel.rate must be positive bits/s or None, got {self.rate}")


@dataclass(frozen=True)
class SimPath:
    forward: Channel = Channel()
    reverse: Channel | None = None  # None = same as forward
    shared_queue: bool = False  # both directions through one rate queue (lo)
    down_at: float | None = None  # the path drops everything from this time...
    up_at: float | None = None  # ...until this one (None = for good)


@dataclass(frozen=True)
class WireSizes:
    """Bytes a message takes on the link (what the rate queue serialises)."""

    # Defaults: the extended format of reference/PROTOCOL.md (12-byte header; an ACK
    # adds a count byte and 8 bytes per selective-ACK range), over IPv4 and UDP.
    data_overhead: int = IP_UDP + 12  # headers on top of the payload
    ack_bytes: int = IP_UDP + 13
    sack_range_bytes: int = 8

    def of(self, msg: Data | Ack) -> int:
        if isinstance(msg, Data):
            return self.data_overhead + len(msg.payload)
        return self.ack_bytes + self.sack_range_bytes * len(msg.sack)


COMN_SIZES = WireSizes(data_overhead=IP_UDP + 3, ack_bytes=IP_UDP + 2, sack_range_bytes=0)


@dataclass(frozen=True)
class Ending:
    """The programs' ending rules (reference/ending.py): the sender's silence limit and
    the receiver's linger settings, as the command line's defaults."""

    give_up_after: float = 30.0
    linger: float = LINGER
    max_linger: float = 120.0
    idle_timeout: float = 60.0


@dataclass
class DirectionStats:
    sent: int = 0
    delivered: int = 0
    lost: int = 0
    corrupted: int = 0
    duplicated: int = 0
    reordered: int = 0
    queue_drops: int = 0
    down_drops: int = 0
    bytes_delivered: int = 0


@dataclass
class SimResult:
    ok: bool  # receiver complete, output byte-exact, sender done, not failed
    output: bytes
    size: int
    completion_time: float | None  # when the sender was done (last ACK in)
    receiver_complete_time: float | None
    sender_failed: bool
    sender_stats: SenderStats
    receiver_stats: ReceiverStats
    forward: DirectionStats
    reverse: DirectionStats
    events: int
    sender_gave_up: bool = False  # (ending) no ACK for give_up_after seconds
    receiver_left_at: float | None = None  # (ending) when the complete receiver left
    receiver_failed: bool = False  # (ending) sender silent before completion
    lost_to_absent_receiver: int = 0  # (ending) data that arrived after it left

    @property
    def goodput_Bps(self) -> float:
        return self.size / self.completion_time if self.completion_time else 0.0

    @property
    def packets_per_unique(self) -> float:
        return self.sender_stats.packets_sent / max(
            1, self.sender_stats.packets_sent - self.sender_stats.retransmissions
        )


class _Queue:
    """netem's delay line: release times of messages still in it, and the last one."""

    def __init__(self):
        self.releases: list[float] = []
        self.last = 0.0

    def length(self, now: float) -> int:
        while self.releases and self.releases[0] <= now:
            heapq.heappop(self.releases)
        return len(self.releases)


class _Direction:
    def __init__(
        self,
        channel: Channel,
        queue: _Queue,
        rng: random.Random,
        path: SimPath,
        sizes: WireSizes,
        stats: DirectionStats,
    ):
        self.ch, self.queue, self.rng, self.path, self.sizes, self.stats = channel, queue, rng, path, sizes, stats
        self.count = 0

    def send(self, msg, now: float) -> list[float]:
        """Arrival times of the copies of ``msg`` that get through (0, 1 or 2)."""
        ch, rng, st = self.ch, self.rng, self.stats
        index, self.count = self.count, self.count + 1
        st.sent += 1
        p = self.path
        if p.down_at is not None and p.down_at <= now and (p.up_at is None or now < p.up_at):
            st.down_drops += 1
            return []
        copies = 2 if ch.duplicate and rng.random() < ch.duplicate else 1
        if copies == 2:
            st.duplicated += 1
        if index in ch.drops or any(a <= now < b for a, b in ch.outages) or (ch.loss and rng.random() < ch.loss):
            st.lost += 1
            copies -= 1
        arrivals = []
        for copy in range(copies):
            if copy == 0 and ch.corrupt and rng.random() < ch.corrupt:
                st.corrupted += 1  # the receiver's checksum drops it
                continue
            if self.queue.length(now) >= ch.limit:
                st.queue_drops += 1
                continue
            arrivals.append(self._release_time(msg, now))
        st.delivered += len(arrivals)
        st.bytes_delivered += len(arrivals) * self.sizes.of(msg)
        return arrivals

    def _release_time(self, msg, now: float) -> float:
        ch, rng, queue = self.ch, self.rng, self.queue
        if ch.reorder and rng.random() < ch.reorder:
            self.stats.reordered += 1
            when = now
        else:
            delay = max(0.0, ch.delay + (rng.uniform(-ch.jitter, ch.jitter) if ch.jitter else 0.0))
            if ch.rate is None:
                when = now + delay
            else:
                when = max(queue.last, now + delay) + self.sizes.of(msg) * 8 / ch.rate
                queue.last = when
        heapq.heappush(queue.releases, when)
        return when


def simulate(
    sender: SenderCore,
    receiver: ReceiverCore,
    link: Channel | SimPath | list[SimPath] = Channel(),
    *,
    data: bytes | None = None,
    seed: int = 0,
    sizes: WireSizes = WireSizes(),
    time_limit: float = 3600.0,
    max_events: int = 10_000_000,
    ending: Ending | None = None,
) -> SimResult:
    """Run until the sender is done (or gives up, or ``time_limit`` simulated seconds pass).

    ``link``: a Channel (both directions alike, separate queues), a SimPath, or a list
    of SimPaths for multi-homed cores (``Data.path`` / ``Ack.path`` index it).
    ``data``: the file, to check the output against (default: the sender's payloads).
    ``ending``: run the programs' ending rules (see the module's docstring).
    """
    paths = [link] if isinstance(link, SimPath) else list(link) if isinstance(link, list) else [SimPath(link)]
    if data is None:
        data = b"".join(getattr(sender, "payloads", []))
    fwd_stats, rev_stats = DirectionStats(), DirectionStats()
    directions = []
    for i, path in enumerate(paths):
        fq = _Queue()
        rq = fq if path.shared_queue else _Queue()
        directions.append(
            (
                _Direction(path.forward, fq, random.Random(seed * 1000 + 2 * i), path, sizes, fwd_stats),
                _Direction(
                    path.reverse or path.forward, rq, random.Random(seed * 1000 + 2 * i + 1), path, sizes, rev_stats
                ),
            )
        )
    stays = ReceiverEnding(ending.linger, ending.max_linger, ending.idle_timeout) if ending else None
    give_up = SenderGiveUp(ending.give_up_after) if ending else None

    events: list[tuple[float, int, object]] = []  # (time, order, message)
    order = 0
    now = 0.0
    done_at = complete_at = left_at = None
    gave_up = receiver_failed = False
    lost_to_absent = 0
    count = 0

    def put(msg, direction: int) -> None:
        nonlocal order
        index = msg.path
        if not 0 <= index < len(directions):
            raise ValueError(f"message on path {index}, but the simulation has {len(directions)} path(s)")
        for when in directions[index][direction].send(msg, now):
            heapq.heappush(events, (when, order, msg))
            order += 1

    def flush() -> None:
        for msg in sender.datagrams_to_send(now):
            put(msg, 0)
            if give_up:
                give_up.sent()

    if give_up:
        give_up.started(now)
    flush()
    while count < max_events:
        if sender.done:
            done_at = now
            break
        # the next thing to happen: a message arrives, the sender's timer, or an ending rule
        candidates = [
            (t, kind)
            for t, kind in (
                (events[0][0] if events else None, "message"),
                (sender.next_timer(), "timer"),
                (give_up.deadline() if give_up else None, "give up"),
                (stays.deadline() if stays and left_at is None and not receiver_failed else None, "receiver"),
            )
            if t is not None
        ]
        if not candidates:
            break  # nothing in flight and no timer: the sender is stuck
        when, kind = min(candidates, key=lambda c: c[0])
        now = max(now, when)
        if now > time_limit:
            break
        if kind == "message":
            _, _, msg = heapq.heappop(events)
            if isinstance(msg, Data):
                if left_at is not None or receiver_failed:
                    lost_to_absent += 1
                else:
                    if stays:
                        stays.heard(msg.seq, now)
                    for ack in receiver.receive(msg, now):
                        put(ack, 1)
                    if complete_at is None and receiver.complete:
                        complete_at = now
                        if stays:
                            stays.completed(now)
            else:
                if give_up:
                    give_up.heard(now)
                sender.receive(msg, now)
        elif kind == "timer":
            sender.handle_timer(now)
        elif kind == "give up":
            gave_up = True
            break
        elif complete_at is not None:
            left_at = now  # the receiver leaves
        else:
            receiver_failed = True  # silent sender before completion
        count += 1
        flush()

    output = receiver.output()
    failed = bool(getattr(sender, "failed", False)) or gave_up
    ok = sender.done and not failed and not receiver_failed and receiver.complete and output == data
    return SimResult(
        ok,
        output,
        len(data),
        done_at,
        complete_at,
        failed,
        sender.stats,
        receiver.stats,
        fwd_stats,
        rev_stats,
        count,
        gave_up,
        left_at,
        receiver_failed,
        lost_to_absent,
    )
