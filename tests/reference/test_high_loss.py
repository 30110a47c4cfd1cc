"""The reference Selective Repeat at high loss: tail copies in the core
(reference/core/sr.py, "Tail copies"), and a socket runtime that reads the ACKs
waiting for it before it fires a timer (reference/runtime.py).

The figures come from the simulator (deterministic, simulated time); one short run on
real sockets through the link engine checks that the programs do what the core does.
The 10-seed measurements are `python -m bench reference_sim` and `reference`.
"""

from __future__ import annotations

import random
import select
import socket
import statistics
import threading
import time

import pytest

from reference.cli import build_parser, settings
from reference.core import Ack, CoreConfig, make_receiver, make_sender
from reference.sim import Channel, WireSizes, simulate
from reference.wire import get_format

RATE = 10e6
CAPACITY = RATE / 8 * 1024 / (1024 + WireSizes().data_overhead)  # payload bytes/s


def cli_config(*options: str) -> CoreConfig:
    """The core's configuration as `python3 -m reference send` builds it."""
    args = build_parser().parse_args(
        ["send", "--protocol", "sr", "--host", "h", "--port", "1", "--file", "f", *options]
    )
    return settings(args)[0]


# The high-loss command line (bench/reference_loss.py's): extended format (SACK), adaptive RTO,
# wide window, 96 in flight.
HIGH_LOSS = ("--format", "ext", "--window", "1024", "--max-in-flight", "96", "--adaptive", "--timeout", "100")


def share(config: CoreConfig, loss: float, seed: int, size: int = 4 << 20) -> float:
    data = random.Random(seed).randbytes(size)
    res = simulate(
        make_sender("sr", data, config),
        make_receiver("sr", config),
        Channel(delay=0.025, rate=RATE, loss=loss),
        seed=seed,
    )
    assert res.ok
    return res.goodput_Bps / CAPACITY


def test_the_reference_keeps_90_percent_of_capacity_at_30_percent_loss_each_way():
    """6 seeds, 4 MiB, 10 Mbit/s, 25 ms each way (the bench runs 10). Without tail copies
    (`--tail-copies 1`) the last window's repairs take up to five rounds, the last ones on
    backed-off timers, and these bounds fail."""
    config = cli_config(*HIGH_LOSS)
    assert config.tail_copies == 3
    shares = [share(config, 0.30, seed) for seed in range(1, 7)]
    assert statistics.mean(shares) >= 0.93 and min(shares) >= 0.90, shares


def _tail_sender(acked_first: int):
    """16 packets, a window of 12, a 100 ms timeout; packets 0..acked_first-1 (at least
    4) acked after a 50 ms round trip, which sends 12..15 (15, the last, three times:
    nothing sent after it can show that it was lost)."""
    sender = make_sender("sr", bytes(16 * 1024), CoreConfig(window=12, timeout=0.1, tail_copies=3))
    assert [m.seq for m in sender.datagrams_to_send(0.0)] == list(range(12))
    for seq in range(acked_first):
        sender.receive(Ack(seq), 0.05)
    assert [m.seq for m in sender.datagrams_to_send(0.05)] == [12, 13, 14, 15, 15, 15]
    return sender


def test_resends_go_three_times_at_the_tail_while_the_path_has_room():
    sender = _tail_sender(8)  # 8 in flight, 8 acked in the last round trip
    sender.handle_timer(0.1)  # 8..11 time out
    assert [m.seq for m in sender.datagrams_to_send(0.1)] == [s for s in range(8, 12) for _ in range(3)]
    for seq in range(8, 15):
        sender.receive(Ack(seq), 0.12)
    # 15 alone is left: the link idles, and 15 of 30 messages were answered, so a round
    # of 3 copies would fail 12% of the time: 7 go (1%; at most LAST_COPIES, 8).
    sender.handle_timer(0.16)
    assert [m.seq for m in sender.datagrams_to_send(0.16)] == [15] * 7


def test_no_tail_copies_while_the_path_is_full():
    sender = _tail_sender(4)  # 12 in flight, only 4 acked in the last round trip
    sender.handle_timer(0.1)  # 4..11 time out, once each
    assert [m.seq for m in sender.datagrams_to_send(0.1)] == list(range(4, 12))


def test_no_tail_copies_before_the_tail():
    sender = make_sender("sr", bytes(16 * 1024), CoreConfig(window=12, timeout=0.1, tail_copies=3))
    sender.datagrams_to_send(0.0)
    sender.handle_timer(0.1)  # 12..15 are still to be sent
    assert [m.seq for m in sender.datagrams_to_send(0.1)] == list(range(12))


def test_copies_count_as_one_try_towards_the_retry_limit():
    config = CoreConfig(window=1, timeout=0.1, tail_copies=3, max_retries=2)
    sender = make_sender("sr", bytes(100), config)
    assert len(sender.datagrams_to_send(0.0)) == 3
    for t in (0.1, 0.25):
        sender.handle_timer(t)
        assert len(sender.datagrams_to_send(t)) == 3 and not sender.failed
    sender.handle_timer(0.5)
    assert sender.failed


def test_tail_copies_are_for_sr_only():
    with pytest.raises(ValueError, match="tail_copies is for protocol 'sr' only"):
        make_sender("mh", b"x", CoreConfig(tail_copies=3, paths=2))


def test_the_textbook_comn_sender_is_unchanged():
    """The grader's baseline (reference/comn with RDT_SR_REFINEMENTS=off) sends no tail copies."""
    from reference.comn import common

    assert common.config(timeout=0.066, window=64).tail_copies == 1


# ---------------------------------------------------------------- the socket runtime

LATE = 0.4


def late_readable(sockets, timeout):
    """select() that hands control back LATE seconds after it wakes: a sender process
    on a loaded machine, scheduled late after its timer expired."""
    ready = select.select(sockets, [], [], timeout)[0]
    time.sleep(LATE)
    return ready


def _run_late_sender(monkeypatch, answer):
    """One packet, a fixed 100 ms timeout, an event loop that runs 400 ms late after
    every wake-up, and a receiver that answers data message number n (0 = the first)
    ``answer(n)`` seconds after it arrives (None = never)."""
    from reference import runtime

    monkeypatch.setattr(runtime, "_readable", late_readable)
    fmt = get_format("ext")
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.settimeout(0.02)
    stop = threading.Event()
    timers = []

    def serve():
        n = 0
        while not stop.is_set():
            try:
                datagram, source = receiver.recvfrom(65535)
            except TimeoutError:
                continue
            delay = answer(n)
            n += 1
            if delay is not None:
                ack = fmt.encode_ack(Ack(fmt.decode_data(datagram).seq))
                timers.append(threading.Timer(delay, receiver.sendto, (ack, source)))
                timers[-1].start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        core = make_sender("sr", bytes(1000), CoreConfig(window=1, timeout=0.1, sack=True))
        runtime.run_sender(core, 1000, fmt, [receiver.getsockname()], give_up_after=10)
    finally:
        stop.set()
        thread.join(5)
        for timer in timers:
            timer.cancel()
            timer.join(5)
        receiver.close()
    return core.stats


def test_a_late_sender_reads_the_waiting_ack_before_its_timer_fires(monkeypatch):
    """The ACK comes 150 ms after the data: after the 100 ms timeout, but long before the
    sender runs again (500 ms). It is waiting in the socket: no resend."""
    stats = _run_late_sender(monkeypatch, lambda n: 0.15)
    assert (stats.timeouts, stats.retransmissions, stats.acks_received) == (0, 0, 1)


def test_a_late_sender_still_resends_when_no_ack_is_waiting(monkeypatch):
    """The first copy is never answered: the timer fires and the resend is answered."""
    stats = _run_late_sender(monkeypatch, lambda n: None if n == 0 else 0.0)
    assert (stats.timeouts, stats.retransmissions, stats.acks_received) == (1, 1, 1)


def test_the_reference_at_30_percent_loss_on_real_sockets():
    """A short run through the link engine: byte-exact, ended, and the tail copies on
    the wire. Its goodput is reported, not asserted (a loaded machine slows the
    Python programs); the bench measures 10 seeds of 4 MiB."""
    from harness import Link, run_transfer
    from bench.reference import programs
    from harness.engine import find_linkemu

    try:
        find_linkemu()
    except Exception as e:
        pytest.skip(f"link engine not built: {e}")
    sender, receiver = programs("sr-ext", 1024, 96)
    r = run_transfer(
        sender=sender,
        receiver=receiver,
        link=Link(forward="delay 25ms loss 30% rate 10mbit"),
        params={"timeout": 100, "window": 1024},
        size=512 << 10,
        seed=2,
        backend="local",
        time_limit=60,
    )
    assert r.ok, r.error
    assert r.link["forward"]["lost"] > 0 and r.link["reverse"]["lost"] > 0
    # every packet went at least once; copies at the tail add a few repeats beyond 1/(1-p)
    assert r.packets["forward"] >= 512
