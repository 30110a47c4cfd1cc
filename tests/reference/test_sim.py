"""The simulated channel's netem semantics, checked with scripted endpoints.

The endpoints here are test doubles of a core (they send a fixed burst and record when
things arrive) so that arrival times can be checked exactly.
"""

import pytest

from reference.core.api import Ack, Data, ReceiverStats, SenderStats
from reference.sim import Channel, SimPath, WireSizes, simulate

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

SIZES = WireSizes(data_overhead=0, ack_bytes=100, sack_range_bytes=0)
PAYLOAD = b"x" * 1250  # 10 000 bits: 1 ms at 10 Mbit/s


class BurstSender:
    """Sends ``count`` packets at time 0 (on ``paths`` in turn), done when all are acked."""

    def __init__(self, count: int, paths: int = 1):
        self.count, self.paths = count, paths
        self.stats = SenderStats()
        self.acked: dict[int, float] = {}
        self.sent = False
        self.payloads = [PAYLOAD] * count

    def datagrams_to_send(self, now):
        if self.sent:
            return []
        self.sent = True
        return [Data(i, PAYLOAD, i == self.count - 1, i % self.paths) for i in range(self.count)]

    def receive(self, ack, now):
        self.acked.setdefault(ack.seq, now)

    def next_timer(self):
        return None

    def handle_timer(self, now):
        pass

    @property
    def done(self):
        return len(self.acked) == self.count


class RecordingReceiver:
    def __init__(self):
        self.stats = ReceiverStats()
        self.arrivals: list[tuple[int, float]] = []

    def receive(self, msg, now):
        self.arrivals.append((msg.seq, now))
        return [Ack(msg.seq, (), msg.path)]

    def output(self):
        return PAYLOAD * len({s for s, _ in self.arrivals})

    @property
    def complete(self):
        return True


def burst(count, link, seed=0, paths=1):
    sender, receiver = BurstSender(count, paths), RecordingReceiver()
    res = simulate(sender, receiver, link, seed=seed, sizes=SIZES)
    return res, receiver.arrivals, sender.acked


def test_rate_serialises_a_burst_after_the_delay():
    res, arrivals, _ = burst(5, Channel(delay=0.010, rate=10e6))
    assert [t for _, t in arrivals] == [pytest.approx(0.010 + 0.001 * k) for k in range(1, 6)]
    assert res.ok


def test_loss_comes_before_the_queue_and_costs_no_capacity():
    _, arrivals, _ = burst(6, Channel(delay=0.010, rate=10e6, drops={0, 1, 2}))
    assert arrivals == [(3, pytest.approx(0.011)), (4, pytest.approx(0.012)), (5, pytest.approx(0.013))]


def test_ack_timing_and_independent_queues():
    _, _, acked = burst(2, Channel(delay=0.010, rate=10e6))
    # ACK of 100 bytes = 0.08 ms on the reverse queue, which the data does not occupy.
    assert acked[0] == pytest.approx(0.011 + 0.010 + 0.00008)
    assert acked[1] == pytest.approx(0.012 + 0.010 + 0.00008)


def test_shared_queue_makes_acks_wait_behind_data():
    link = SimPath(Channel(delay=0.0, rate=10e6), shared_queue=True)
    _, arrivals, acked = burst(3, link)
    # The first ACK (sent at 1 ms) queues behind data packets 2 and 3 (until 3 ms).
    assert acked[0] == pytest.approx(0.003 + 0.00008)


def test_queue_limit_drops_the_tail():
    res, arrivals, _ = burst(10, Channel(delay=0.0, rate=10e6, limit=4))
    assert [s for s, _ in arrivals] == [0, 1, 2, 3]
    assert res.forward.queue_drops == 6


def test_outage_window_and_explicit_drops():
    res, arrivals, _ = burst(3, Channel(delay=0.001, outages=((0.0, 0.5),)))
    assert arrivals == [] and res.forward.lost == 3


def test_duplication_and_corruption_are_counted():
    res, arrivals, _ = burst(2000, Channel(duplicate=0.1, corrupt=0.1), seed=3)
    dup, bad = res.forward.duplicated, res.forward.corrupted
    # 99.9% binomial bounds around 200 of 2000: 200 +- 3.29 * sqrt(2000 * 0.1 * 0.9)
    assert 156 <= dup <= 244 and 156 <= bad <= 244
    assert len(arrivals) == 2000 + dup - bad
    assert res.forward.delivered == len(arrivals)


def test_random_loss_rate_is_right():
    res, arrivals, _ = burst(4000, Channel(loss=0.25), seed=8)
    # 1000 expected; 99.9% bound 3.29 * sqrt(4000 * 0.25 * 0.75) = 90
    assert 910 <= res.forward.lost <= 1090
    assert len(arrivals) == 4000 - res.forward.lost


def test_jitter_reorders_without_a_rate_but_not_with_one():
    _, free, _ = burst(200, Channel(delay=0.01, jitter=0.005), seed=1)
    _, queued, _ = burst(200, Channel(delay=0.01, jitter=0.005, rate=10e6), seed=1)
    assert [s for s, _ in free] != sorted(s for s, _ in free)
    assert [s for s, _ in queued] == list(range(200))
    assert all(0.005 <= t <= 0.015 for _, t in free)


def test_reorder_sends_some_at_once():
    res, arrivals, _ = burst(100, Channel(delay=0.05, reorder=0.3), seed=2)
    early = [s for s, t in arrivals if t == 0.0]
    assert len(early) == res.forward.reordered > 0


def test_path_down_and_up():
    paths = [SimPath(Channel(delay=0.01)), SimPath(Channel(delay=0.01), down_at=0.0, up_at=1.0)]
    res, arrivals, _ = burst(4, paths, paths=2)
    assert sorted(s for s, _ in arrivals) == [0, 2]
    assert res.forward.down_drops == 2


def test_same_seed_same_decisions_and_directions_independent():
    forward = Channel(loss=0.3)
    a = burst(300, SimPath(forward, Channel(loss=0.0)), seed=5)[1]
    b = burst(300, SimPath(forward, Channel(loss=0.9)), seed=5)[1]
    c = burst(300, SimPath(forward, Channel(loss=0.0)), seed=6)[1]
    assert a == b  # ACK traffic does not move the forward channel's dice
    assert a != c


def test_bad_channel_settings_are_clear_errors():
    with pytest.raises(ValueError, match="Channel.loss must be a probability"):
        Channel(loss=1.5)
    with pytest.raises(ValueError, match="Channel.rate must be positive"):
        Channel(rate=0)
    with pytest.raises(ValueError, match="delay and jitter must be >= 0"):
        Channel(delay=-1)
    with pytest.raises(ValueError, match="on path 1, but the simulation has 1 path"):
        burst(2, Channel(), paths=2)


def test_time_limit_stops_a_hopeless_run():
    from reference.core import CoreConfig, make_receiver, make_sender

    config = CoreConfig(timeout=0.1)
    res = simulate(make_sender("sw", b"abc", config), make_receiver("sw", config), Channel(loss=1.0), time_limit=5.0)
    assert not res.ok and res.completion_time is None
    assert res.sender_stats.timeouts == pytest.approx(50, abs=1)
