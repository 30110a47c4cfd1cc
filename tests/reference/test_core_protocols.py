"""Every protocol core over the simulated channel: byte-exact output under every
impairment, and the end-of-transfer rules (give-up, receivers that keep going)."""

import random
from dataclasses import replace

import pytest

from reference.core import CoreConfig, make_receiver, make_sender
from reference.core.api import Ack, Data
from reference.sim import Channel, SimPath, simulate

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

CONFIGS = {
    "sw": CoreConfig(timeout=0.05),
    "sw-adaptive": CoreConfig(adaptive=True, initial_rto=0.2),
    "gbn": CoreConfig(window=8, timeout=0.06),
    "sr": CoreConfig(window=16, adaptive=True, sack=True),
    "sr-nosack": CoreConfig(window=16, timeout=0.06),
    "tcp": CoreConfig(window_bytes=8192, adaptive=True),
    "tcp-k4": CoreConfig(window_bytes=8192, adaptive=True, dup_ack_threshold=4),
    "mh": CoreConfig(window=16, adaptive=True, sack=True, paths=2),
}
LINK = Channel(delay=0.01, rate=10e6)


def file_of(size: int, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(size)


def run(
    name: str,
    data: bytes,
    forward: Channel = LINK,
    reverse: Channel | None = None,
    seed: int = 1,
    paths: list[SimPath] | None = None,
    **changes,
):
    protocol = name.split("-")[0]
    config = CONFIGS[name]._replace(**changes)
    if paths is None:
        paths = [SimPath(forward, reverse)] * config.paths
    return simulate(
        make_sender(protocol, data, config),
        make_receiver(protocol, config),
        paths,
        data=data,
        seed=seed,
        time_limit=600,
    )


SCENARIOS = {
    "clean": dict(),
    "first packet lost": dict(forward=replace(LINK, drops={0})),
    "first three sends lost": dict(forward=replace(LINK, drops={0, 1, 2})),
    "last packet lost": dict(forward=replace(LINK, drops={49})),  # 50 KB: packet 49 is the last
    "first ACK lost": dict(reverse=replace(LINK, drops={0})),
    "every ACK lost for a while": dict(reverse=replace(LINK, outages=((0.02, 0.3),))),
    "burst of total loss": dict(
        forward=replace(LINK, outages=((0.03, 0.25),)), reverse=replace(LINK, outages=((0.03, 0.25),))
    ),
    "ACK loss 20%": dict(reverse=replace(LINK, loss=0.2)),
    "loss 10% each way": dict(forward=replace(LINK, loss=0.1)),
    "duplication 20%": dict(forward=replace(LINK, duplicate=0.2)),
    "reordering and jitter": dict(forward=Channel(delay=0.01, jitter=0.008, reorder=0.2)),
    "corruption 10% each way": dict(forward=replace(LINK, corrupt=0.1)),
    "small queue": dict(forward=replace(LINK, rate=2e6, limit=5)),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("name", CONFIGS)
def test_byte_exact_under_impairment(name, scenario):
    data = file_of(50 * 1024)
    res = run(name, data, **SCENARIOS[scenario])
    assert res.ok, (res.sender_stats, res.receiver_stats, res.forward, res.reverse)
    assert res.output == data
    assert res.completion_time is not None


@pytest.mark.parametrize("name", CONFIGS)
def test_half_the_packets_lost_each_way(name):
    data = file_of(10 * 1024)
    lossy = replace(LINK, loss=0.5)
    res = run(name, data, forward=lossy, seed=5, max_rto=1.0)
    assert res.ok and res.output == data
    assert res.forward.lost > 0 and res.reverse.lost > 0


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("size", [0, 1, 1024, 1025, 3 * 1024])
def test_sizes_at_packet_boundaries(name, size):
    data = file_of(size)
    res = run(name, data)
    assert res.ok and res.output == data


@pytest.mark.parametrize("name", CONFIGS)
def test_same_seed_same_run(name):
    data = file_of(30 * 1024)
    a, b = (run(name, data, forward=replace(LINK, loss=0.1), seed=9) for _ in range(2))
    assert (a.completion_time, a.sender_stats) == (b.completion_time, b.sender_stats)


@pytest.mark.parametrize("name", CONFIGS)
def test_sender_gives_up_when_the_receiver_is_gone(name):
    data = file_of(5 * 1024)
    res = run(name, data, forward=replace(LINK, loss=1.0), max_retries=3, max_rto=0.5)
    assert res.sender_failed and not res.ok
    assert res.completion_time is not None  # it stopped by itself
    assert res.sender_stats.packets_sent <= res.sender_stats.retransmissions + CONFIGS[name].window_packets() + 4
    assert res.completion_time < 30


def test_mh_survives_the_death_of_a_path():
    data = file_of(400 * 1024)
    paths = [SimPath(Channel(delay=0.01, rate=10e6)), SimPath(Channel(delay=0.02, rate=10e6), down_at=0.1)]
    sender = make_sender("mh", data, CONFIGS["mh"])
    res = simulate(sender, make_receiver("mh", CONFIGS["mh"]), paths, seed=2)
    assert res.ok and res.output == data
    assert sender.path_deaths == 1 and sender.alive == [True, False]
    assert res.forward.down_drops > 0


def test_mh_uses_both_paths_and_a_path_comes_back():
    data = file_of(600 * 1024)
    paths = [SimPath(Channel(delay=0.01, rate=4e6)), SimPath(Channel(delay=0.01, rate=4e6), down_at=0.1, up_at=0.4)]
    sender = make_sender("mh", data, CONFIGS["mh"])
    sent_on = [0, 0]
    original = sender.datagrams_to_send

    def counting(now):
        out = original(now)
        for msg in out:
            sent_on[msg.path] += 1
        return out

    sender.datagrams_to_send = counting
    res = simulate(sender, make_receiver("mh", CONFIGS["mh"]), paths, seed=2)
    assert res.ok and res.output == data
    assert sender.path_deaths >= 1 and sender.alive == [True, True]  # dead, probed, back
    assert min(sent_on) > 0.25 * sum(sent_on)


def test_mh_spreads_over_equal_paths():
    data = file_of(200 * 1024)
    paths = [SimPath(Channel(delay=0.01, rate=4e6))] * 2
    res = run("mh", data, paths=paths)
    assert res.ok
    # Two paths of 4 Mbit/s: faster than one path could carry the file.
    assert res.completion_time < 200 * 1024 * 8 / 4e6


@pytest.mark.parametrize("protocol", ["sw", "gbn", "sr", "tcp", "mh"])
def test_receiver_ignores_nonsense_and_keeps_the_file(protocol):
    config = CoreConfig(window=4, paths=2)
    receiver = make_receiver(protocol, config)
    receiver.receive(Data(0, b"ab"), 0.0)
    receiver.receive(Data(1, b"cd", eof=True), 0.0)
    assert receiver.complete and receiver.output() == b"abcd"
    # A duplicate end, a second different end, data past the end, a far-future packet.
    for msg in (Data(1, b"cd", eof=True), Data(0, b"zz", eof=True), Data(2, b"xx"), Data(10**9, b"yy")):
        receiver.receive(msg, 1.0)
    assert receiver.complete and receiver.output() == b"abcd"


@pytest.mark.parametrize("protocol", ["sw", "gbn", "sr", "tcp", "mh"])
def test_receiver_acks_a_duplicate_of_the_last_packet(protocol):
    """The runtime lingers after completion re-acking duplicates (the last ACK may be lost)."""
    receiver = make_receiver(protocol, CoreConfig(window=4))
    receiver.receive(Data(0, b"x", eof=True), 0.0)
    acks = receiver.receive(Data(0, b"x", eof=True), 1.0)
    assert [a.seq for a in acks] == [0]
    assert receiver.stats.duplicates == 1


def test_bad_config_is_a_clear_value_error():
    with pytest.raises(ValueError, match="at most half the sequence space"):
        make_sender("sr", b"x", CoreConfig(window=40000, seq_modulus=2**16))
    with pytest.raises(ValueError, match="unknown protocol 'xx'"):
        make_sender("xx", b"x", CoreConfig())
    with pytest.raises(ValueError, match="window must be a positive number, got 0"):
        make_receiver("gbn", CoreConfig(window=0))
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        make_sender("sw", b"x", CoreConfig(timeout=-1))
    make_sender("sr", b"x", CoreConfig(window=32768, seq_modulus=2**16))  # exactly half: fine
    make_sender("sw", b"x", CoreConfig(window=40000, seq_modulus=2**16))  # sw sends one at a time


def _max_in_flight(protocol, config, data, link):
    """Run over ``link`` and return the most bytes and packets ever in flight."""
    sender = make_sender(protocol, data, config)
    most = [0, 0]
    original = sender.datagrams_to_send

    def watching(now):
        out = original(now)
        most[0] = max(most[0], sender.bytes_in_flight)
        most[1] = max(most[1], sender.next_seq - sender.base)
        return out

    sender.datagrams_to_send = watching
    res = simulate(sender, make_receiver(protocol, config), link, data=data)
    assert res.ok
    return most


@pytest.mark.parametrize("protocol", ["gbn", "sr", "tcp"])
def test_byte_window_caps_the_bytes_in_flight(protocol):
    config = CoreConfig(window_bytes=3000, timeout=0.1)
    most_bytes, most_packets = _max_in_flight(protocol, config, file_of(40 * 1024), LINK)
    assert most_bytes == 2048 and most_packets == 2  # a third packet would make 3072


@pytest.mark.parametrize("protocol,window", [("sw", 1), ("gbn", 7), ("sr", 7), ("tcp", 7), ("mh", 7)])
def test_packet_window_is_reached_and_never_exceeded(protocol, window):
    config = CoreConfig(window=window, timeout=0.1, paths=1)
    _, most_packets = _max_in_flight(protocol, config, file_of(40 * 1024), replace(LINK, loss=0.1))
    assert most_packets == window


def test_sr_in_flight_cap_keeps_the_window_wide():
    config = CoreConfig(window=64, max_in_flight=5, timeout=0.1)
    sender = make_sender("sr", file_of(80 * 1024), config)
    assert len(sender.datagrams_to_send(0.0)) == 5
    sender.receive(Ack(0), 0.1)
    assert [m.seq for m in sender.datagrams_to_send(0.1)] == [5]


def test_gbn_receiver_discards_out_of_order_and_reacks_the_last_in_order():
    receiver = make_receiver("gbn", CoreConfig(window=4))
    assert [a.seq for a in receiver.receive(Data(1, b"b"), 0)] == [-1]  # nothing in order yet
    assert [a.seq for a in receiver.receive(Data(0, b"a"), 0)] == [0]
    assert [a.seq for a in receiver.receive(Data(2, b"c"), 0)] == [0]  # 1 was discarded
    assert [a.seq for a in receiver.receive(Data(1, b"b"), 0)] == [1]
    assert receiver.stats.out_of_window == 2 and receiver.output() == b"ab"


def test_tcp_receiver_keeps_out_of_order_and_acks_cumulatively():
    receiver = make_receiver("tcp", CoreConfig(window=4))
    assert [a.seq for a in receiver.receive(Data(1, b"b"), 0)] == [-1]
    assert [a.seq for a in receiver.receive(Data(2, b"c", eof=True), 0)] == [-1]
    assert [a.seq for a in receiver.receive(Data(0, b"a"), 0)] == [2]
    assert receiver.complete and receiver.output() == b"abc"


def test_sr_receiver_window_edges():
    receiver = make_receiver("sr", CoreConfig(window=4, sack=True))
    for seq in range(4):
        receiver.receive(Data(seq, b"x"), 0)
    assert receiver.base == 4
    assert receiver.receive(Data(8, b"x"), 0) == []  # base+N: outside
    assert [a.seq for a in receiver.receive(Data(7, b"x"), 0)] == [7]  # base+N-1: buffered
    assert [a.seq for a in receiver.receive(Data(0, b"x"), 0)] == [0]  # base-N: re-acked
    ack = receiver.receive(Data(5, b"x"), 0)[0]
    assert ack.sack == ((0, 3), (5, 5), (7, 7))  # below base, newest run, then the rest
