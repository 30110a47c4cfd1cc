"""How a transfer ends (reference/ending.py, PROTOCOL.md "How a transfer ends"): the
rules alone, then every protocol over the simulated channel with the programs' own
ending rules at 30% and 50% loss each way, 200 seeds each: the receiver never leaves
while the sender still needs it, and the sender never gives up on a receiver that is
there. (Real sockets: test_programs.py, and the 20-run sample in
`python -m bench reference_ending`.)
"""

import random

import pytest

from reference.comn.common import SR_REFINEMENTS
from reference.core import CoreConfig, make_receiver, make_sender
from reference.core.sr import TAIL_COPIES
from reference.ending import LINGER, ReceiverEnding, SenderGiveUp
from reference.sim import COMN_SIZES, Channel, Ending, SimPath, WireSizes, simulate

# ---------------------------------------------------------------- the rules alone


def test_receiver_waits_for_the_first_datagram_then_fails_if_the_sender_falls_silent():
    ending = ReceiverEnding(linger=2.0, idle_timeout=60.0)
    assert ending.deadline() is None  # a server: waits as long as it takes
    ending.heard(0, 5.0)
    assert ending.deadline() == 65.0  # idle timeout before completion


def test_receiver_quiet_time_is_twenty_retry_intervals_or_the_linger():
    ending = ReceiverEnding(linger=2.0)
    ending.heard(0, 0.0)
    ending.heard(1, 0.01)
    ending.completed(0.01)
    assert ending.deadline() == pytest.approx(2.01)  # nothing seen of the sender's retries yet
    ending.heard(1, 0.31)  # a copy of packet 1 after 0.3 s: its retry interval
    assert ending.retry_interval == pytest.approx(0.3)
    assert ending.deadline() == pytest.approx(0.31 + 20 * 0.3)
    ending.heard(1, 1.31)  # a longer gap after completion (back-off) counts too
    assert ending.deadline() == pytest.approx(1.31 + 20 * 1.0)


def test_receiver_leaves_at_the_latest_max_linger_after_completion():
    ending = ReceiverEnding(linger=2.0, max_linger=30.0)
    ending.heard(0, 0.0)
    ending.completed(0.0)
    ending.heard(0, 5.0)  # a sender 5 s between tries: 100 s of quiet...
    assert ending.deadline() == 30.0  # ...capped


def test_default_linger_covers_twenty_tries_at_the_back_off_ceiling():
    from reference.core.rto import BACKOFF_CEILING

    assert LINGER == 20 * BACKOFF_CEILING == ReceiverEnding().linger == Ending().linger


def test_sender_gives_up_after_the_time_and_64_unanswered_messages():
    give_up = SenderGiveUp(30.0)
    give_up.started(0.0)
    give_up.sent(63)
    assert give_up.deadline() is None  # not enough tries unanswered
    give_up.sent()
    assert give_up.deadline() == 30.0
    give_up.heard(12.0)  # an ACK: both counts start again
    assert give_up.deadline() is None
    give_up.sent(64)
    assert give_up.deadline() == 42.0


# ---------------------------------------------------------------- every protocol, 200 seeds

SEEDS = range(200)
SIZES = [100, 3000, 8192, 20_000, 32_768]  # one packet (nothing resent before completion) to 32
EXT = dict(sack=True, seq_modulus=1 << 32, adaptive=True, initial_rto=0.1)
COMN = dict(seq_modulus=1 << 16)


def _cases():
    """(name, protocol, config, shared queue, wire sizes, sender's give-up seconds), as
    the programs run them: COMN (fixed RetryTimeout, give-up max(10 s, 20 timeouts)) and
    the command line with the extended format (adaptive RTO with back-off, 30 s)."""
    for protocol, window, timeout in (("sw", 1, 0.066), ("gbn", 16, 0.084), ("sr", 64, 0.125), ("sr", 64, 0.066)):
        refinements = SR_REFINEMENTS if protocol == "sr" else {}  # Sender4's pacing and repair copies
        yield (
            f"{protocol}-comn-{round(timeout * 1000)}ms",
            protocol,
            CoreConfig(window=window, timeout=timeout, **COMN, **refinements),
            True,
            COMN_SIZES,
            max(10.0, 20 * timeout),
        )
    tail = {"tail_copies": TAIL_COPIES}  # the command line's SR default
    for protocol, window, extra in (
        ("sw", 1, {}),
        ("gbn", 16, {}),
        ("sr", 64, tail),
        ("tcp", 64, {}),
        ("sr", 1024, {"max_in_flight": 96, **tail}),
        ("mh", 64, {"paths": 2}),
    ):
        name = f"{protocol}-ext" + ("-w1024" if window == 1024 else "")
        yield name, protocol, CoreConfig(window=window, **EXT, **extra), False, WireSizes(), 30.0


CASES = {case[0]: case for case in _cases()}


@pytest.mark.parametrize("loss", [0.3, 0.5])
@pytest.mark.parametrize("name", list(CASES))
def test_every_seed_ends_well_at_high_loss_each_way(name, loss):
    _, protocol, config, shared, sizes, give_up = CASES[name]
    path = SimPath(Channel(delay=0.025, loss=loss, rate=10e6), shared_queue=shared)
    link = [path] * config.paths if protocol == "mh" else path
    ending = Ending(give_up_after=give_up)
    failures = []
    for seed in SEEDS:
        data = random.Random(seed).randbytes(SIZES[seed % len(SIZES)])
        res = simulate(
            make_sender(protocol, data, config),
            make_receiver(protocol, config),
            link,
            data=data,
            seed=seed,
            sizes=sizes,
            ending=ending,
            time_limit=3600,
        )
        if not res.ok:
            why = "sender gave up" if res.sender_gave_up else "receiver failed" if res.receiver_failed else "unfinished"
            failures.append((seed, why, res.receiver_left_at))
        else:
            assert res.output == data
    assert failures == [], f"{name} at {loss:.0%}: {len(failures)} of {len(SEEDS)} failed: {failures[:5]}"


def test_the_old_rules_fail_where_the_new_ones_hold():
    """With the sender's earlier rules (back-off to RFC 6298's 60 s, give-up on
    30 s without an ACK alone) and a 2 s linger, seeds are lost at 50% each way: the
    check above is able to fail."""
    from reference.core import rto

    config = CoreConfig(window=64, **EXT)
    path = SimPath(Channel(delay=0.025, loss=0.5, rate=10e6))
    old = pytest.MonkeyPatch()
    old.setattr(rto, "BACKOFF_CEILING", 60.0)
    old.setattr(SenderGiveUp, "UNANSWERED", 0)
    try:
        failed = sum(
            not simulate(
                make_sender("sr", bytes(8192), config),
                make_receiver("sr", config),
                path,
                seed=seed,
                ending=Ending(linger=2.0),
                time_limit=3600,
            ).ok
            for seed in range(40)
        )
    finally:
        old.undo()
    assert failed >= 2
