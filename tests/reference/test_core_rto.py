"""The RTO estimator against RFC 6298's arithmetic, back-off, and Karn's rule in the cores."""

import pytest

from reference.core import Ack, CoreConfig, make_sender
from reference.core.rto import RtoEstimator

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

ADAPTIVE = CoreConfig(adaptive=True, initial_rto=1.0, min_rto=0.001, max_rto=60.0, rto_margin=0.001)


def test_initial_rto_before_any_sample():
    assert RtoEstimator(ADAPTIVE).rto == 1.0
    assert RtoEstimator(CoreConfig(timeout=0.005)).rto == 0.005  # fixed: as given, even below min_rto


def test_rfc6298_known_values():
    est = RtoEstimator(ADAPTIVE)
    est.sample(0.100)  # first: SRTT = R, RTTVAR = R/2
    assert est.srtt == pytest.approx(0.100)
    assert est.rttvar == pytest.approx(0.050)
    assert est.rto == pytest.approx(0.100 + 4 * 0.050)
    est.sample(0.200)  # RTTVAR from the old SRTT, then SRTT
    assert est.rttvar == pytest.approx(0.75 * 0.050 + 0.25 * abs(0.100 - 0.200))  # 0.0625
    assert est.srtt == pytest.approx(0.875 * 0.100 + 0.125 * 0.200)  # 0.1125
    assert est.rto == pytest.approx(0.1125 + 4 * 0.0625)  # 0.3625
    for _ in range(200):  # a steady RTT: RTTVAR decays, RTO -> SRTT + G
        est.sample(0.050)
    assert est.srtt == pytest.approx(0.050, abs=1e-6)
    assert est.rto == pytest.approx(0.050 + 0.001, abs=1e-5)


def test_margin_and_clamps():
    est = RtoEstimator(CoreConfig(adaptive=True, rto_margin=0.01, min_rto=0.2, max_rto=0.5))
    est.sample(0.01)
    assert est.rto == 0.2  # min_rto
    est.sample(5.0)
    assert est.rto == 0.5  # max_rto
    steady = RtoEstimator(CoreConfig(adaptive=True, rto_margin=0.01, min_rto=0.001))
    for _ in range(200):
        steady.sample(0.05)
    assert steady.rto == pytest.approx(0.06, abs=1e-5)  # SRTT + G when RTTVAR ~ 0


def test_backoff_doubles_once_per_rto_and_resets_on_progress():
    est = RtoEstimator(CoreConfig(adaptive=True, initial_rto=0.1, min_rto=0.01, max_rto=0.5))
    est.timed_out(1.0)
    assert est.rto == pytest.approx(0.2)
    est.timed_out(1.01)  # same burst of timeouts: no second doubling
    assert est.rto == pytest.approx(0.2)
    est.timed_out(1.2)
    assert est.rto == pytest.approx(0.4)
    est.timed_out(1.6)
    assert est.rto == pytest.approx(0.5)  # capped at max_rto
    est.progress()
    assert est.rto == pytest.approx(0.1)
    rfc = RtoEstimator(CoreConfig(adaptive=True, initial_rto=0.1, min_rto=0.01, max_rto=0.5, backoff_until_sample=True))
    rfc.timed_out(1.0)
    rfc.progress()  # no sample yet: no estimate to go back to
    assert rfc.rto == pytest.approx(0.2)
    rfc.sample(0.03)
    rfc.timed_out(3.0)
    assert rfc.rto == pytest.approx(2 * (0.03 + 4 * 0.015))
    rfc.progress()  # an estimate: back to it
    assert rfc.rto == pytest.approx(0.03 + 4 * 0.015)


def test_no_backoff_with_a_fixed_timeout_unless_asked():
    fixed = RtoEstimator(CoreConfig(timeout=0.05))
    fixed.timed_out(1.0)
    assert fixed.rto == 0.05
    seed002 = RtoEstimator(CoreConfig(timeout=0.05, backoff=True))
    seed002.timed_out(1.0)
    seed002.timed_out(1.1)
    assert seed002.rto == pytest.approx(0.2)
    seed002.progress()
    assert seed002.rto == 0.05


@pytest.mark.parametrize("protocol", ["sw", "gbn", "sr", "tcp", "mh"])
def test_karns_rule_no_sample_from_a_resent_packet(protocol):
    config = CoreConfig(adaptive=True, initial_rto=1.0, window=1, paths=1)
    sender = make_sender(protocol, b"a" * 2048, config)
    assert [m.seq for m in sender.datagrams_to_send(0.0)] == [0]
    assert sender.next_timer() == pytest.approx(1.0)
    sender.handle_timer(1.0)
    assert [m.seq for m in sender.datagrams_to_send(1.0)] == [0]  # the resend
    sender.receive(Ack(0), 1.05)  # answers either copy: no sample
    assert sender.stats.rtt_samples == []
    assert sender.stats.timeouts == 1 and sender.stats.retransmissions == 1
    assert [m.seq for m in sender.datagrams_to_send(1.05)] == [1]
    sender.receive(Ack(1), 1.15)  # sent once: a sample
    assert sender.stats.rtt_samples == [pytest.approx(0.10)]
    assert sender.done


@pytest.mark.parametrize("protocol", ["sw", "gbn", "sr", "tcp"])
def test_backoff_on_repeated_timeouts_of_one_packet(protocol):
    config = CoreConfig(timeout=0.1, backoff=True, window=1)
    sender = make_sender(protocol, b"a" * 10, config)
    sender.datagrams_to_send(0.0)
    deadlines = []
    for _ in range(4):
        deadline = sender.next_timer()
        deadlines.append(deadline)
        sender.handle_timer(deadline)
        sender.datagrams_to_send(deadline)
    gaps = [b - a for a, b in zip([0.0] + deadlines, deadlines)]
    # doubling, up to the back-off ceiling (0.5 s): a sender still trying keeps asking
    assert gaps == [pytest.approx(g) for g in (0.1, 0.2, 0.4, 0.5)]


def test_backoff_ceiling_is_half_a_second_or_the_estimate():
    from reference.core.rto import BACKOFF_CEILING

    assert BACKOFF_CEILING == 0.5
    fast = RtoEstimator(CoreConfig(adaptive=True, initial_rto=0.1, min_rto=0.01))
    slow = RtoEstimator(CoreConfig(adaptive=True, initial_rto=0.8, min_rto=0.01))
    for t in range(1, 20):
        fast.timed_out(float(t))
        slow.timed_out(float(t))
    assert fast.rto == pytest.approx(0.5)  # not RFC 6298's 60 s
    assert slow.rto == pytest.approx(0.8)  # an estimate above the ceiling is kept, not doubled
