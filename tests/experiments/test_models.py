"""Analytic models against values computed by hand (working in the comments)."""

import math

import pytest

from harness.models import (
    Link,
    gbn_textbook,
    gbn_timeout,
    mathis,
    md1_queue_length,
    md1_wait,
    pftk,
    pipelined_no_loss,
    rfc6298_rto,
    sr_textbook,
    sr_timeout,
    stop_and_wait,
    stop_and_wait_utilisation,
)

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

MIB = 1 << 20
# COMN link, 5 ms: t_data = 1069*8/1e7 = 0.8552 ms, t_ack = 44*8/1e7 = 0.0352 ms,
# idle RTT = 10 + 0.8552 + 0.0352 = 10.8904 ms.
LINK5 = Link(0.005, 0.05)
LINK25 = Link(0.025, 0.05)


def test_link_times():
    assert LINK5.t_data == pytest.approx(0.0008552)
    assert LINK5.t_ack == pytest.approx(0.0000352)
    assert LINK5.rtt == pytest.approx(0.0108904)
    assert LINK5.packets(MIB) == 1024
    assert LINK5.round_trip_loss == pytest.approx(0.0975)


def test_stop_and_wait_with_a_timeout_above_the_rtt():
    # q = 0.95^2 = 0.9025, failed attempts per packet (1-q)/q = 0.108033;
    # per packet 10.8904 ms + 20 ms * 0.108033 = 13.0511 ms; 1024 packets = 13.3643 s;
    # 1024 KiB / 13.3643 s = 76.62 KiB/s; retransmissions 1024 * 0.108033 = 110.63.
    m = stop_and_wait(LINK5, 0.020, MIB)
    assert m.retransmissions == pytest.approx(110.63, abs=0.01)
    assert m.time_s == pytest.approx(13.3643, rel=1e-4)
    assert m.throughput_kBps == pytest.approx(76.62, abs=0.01)


def test_stop_and_wait_premature_timeouts():
    # timeout 5 ms < RTT 10.89 ms: ceil(10.8904/5) = 3 copies before the ACK is back,
    # so 2 extra per packet: 1024 * (0.108033 + 2) = 2158.63.
    assert stop_and_wait(LINK5, 0.005, MIB).retransmissions == pytest.approx(2158.63, abs=0.01)
    # The longer the timeout above the RTT, the lower the throughput (seed 004 Q2).
    tps = [stop_and_wait(LINK5, t / 1000, MIB).throughput_kBps for t in (15, 20, 50, 100)]
    assert tps == sorted(tps, reverse=True)


def test_utilisation_and_pipelining_without_loss():
    assert stop_and_wait_utilisation(Link(0.005)) == pytest.approx(0.0008552 / 0.0108904)
    # 25 ms: RTT 50.8904 ms -> one 1 KiB packet per RTT = 19.650 KiB/s.
    assert pipelined_no_loss(Link(0.025), 1) == pytest.approx(19.650, abs=1e-3)
    # Capacity with ACKs on the shared queue: 1 / 0.8904 ms = 1123.1 packets/s.
    assert pipelined_no_loss(Link(0.025), 256) == pytest.approx(1123.1, abs=0.1)


def test_textbook_gbn_and_sr():
    # 1 + 2a = RTT / t_data = 12.734. W >= 12.734: U = 0.95 / (1 + 11.734*0.05) = 0.59873,
    # 0.59873 / 0.8552 ms = 700.1 packets/s. W = 1: U = 0.95 / 12.734 = 0.074604 -> 87.24.
    assert gbn_textbook(LINK5, 64) == pytest.approx(700.1, abs=0.1)
    assert gbn_textbook(LINK5, 1) == pytest.approx(87.24, abs=0.01)
    # SR, P = 0.0975: W >= 12.734: U = 0.9025 -> 1055.3 packets/s.
    assert sr_textbook(LINK5, 64) == pytest.approx(0.9025 / 0.0008552, abs=0.1)


def test_window_one_is_stop_and_wait_in_every_timeout_model():
    sw = stop_and_wait(LINK25, 0.060, MIB).throughput_kBps  # 1/(50.8904 + 6.4820 ms) = 17.43
    assert sw == pytest.approx(17.43, abs=0.01)
    assert gbn_timeout(LINK25, 1, 0.060) == pytest.approx(sw)
    assert sr_timeout(LINK25, 1, 0.060) == pytest.approx(sw)


def test_gbn_timeout_model_has_the_seed_004_shape():
    # Throughput rises with the window, peaks, and falls when ACKs queue behind the data
    # (seed 004 Q4); the textbook keeps rising and is far off at large windows.
    curve = [gbn_timeout(LINK5, w, 0.020) for w in (1, 2, 4, 8, 16, 32, 64, 128, 256)]
    peak = curve.index(max(curve))
    assert 3 <= peak <= 5 and curve[-1] < curve[peak] / 4
    assert gbn_textbook(LINK5, 256) > 5 * gbn_timeout(LINK5, 256, 0.020)


def test_gbn_timeout_known_value():
    # 25 ms, W = 8, T = 60 ms: RTT_eff = 50.8904 ms, r = 8/0.0508904 = 157.20/s;
    # e = 0.05 + 0.95*0.05^8 = 0.05000000037, e/(1-e) = 0.0526316;
    # D = 0.060 + 0.0508904*(7/8) = 0.1045291; 1/r + e/(1-e)*D = 0.0063613 + 0.0055015
    # = 0.0118628 s -> 84.30 packets/s = 84.30 KiB/s.
    assert gbn_timeout(LINK25, 8, 0.060) == pytest.approx(84.30, abs=0.01)


def test_sr_timeout_round_model():
    # W = 2, P = 0.0975: E[max] = sum_k 1-(1-P^k)^2 = 0.18549 + 0.018918 + 0.0018535 + ...
    # = 0.206463; round = 50.8904 + 60 * 0.206463 = 63.278 ms -> 2/0.063278 = 31.61.
    assert sr_timeout(LINK25, 2, 0.060) == pytest.approx(31.61, abs=0.01)


def test_mathis_and_pftk():
    # 1.2247 * 1024 / (0.05 * sqrt(0.05)) = 112170 B/s = 109.54 KiB/s (seed 004 Q8: ~109).
    assert mathis(1024, 0.05, 0.05) / 1024 == pytest.approx(109.54, abs=0.01)
    # PFTK, MSS 1, RTT 0.1, p 0.01, T0 1, b 2: 0.1*sqrt(0.04/3) = 0.0115470;
    # min(1, 3*sqrt(0.0075)) = 0.259808; * 0.01 * (1 + 0.0032) = 0.0026064;
    # 1/(0.0141534) = 70.654 segments/s.
    assert pftk(1, 0.1, 0.01, 1.0) == pytest.approx(70.654, abs=1e-3)
    assert pftk(1, 0.1, 0.01, 1.0, wmax_packets=4) == pytest.approx(40.0)  # Wmax/RTT
    with pytest.raises(ValueError):
        mathis(1024, 0.05, 0)


def test_md1():
    # lambda 500/s, mu 1000/s: rho 0.5, Wq = 0.5 / (2*1000*0.5) = 0.5 ms, Lq = 0.25.
    assert md1_wait(500, 1000) == pytest.approx(0.0005)
    assert md1_queue_length(500, 1000) == pytest.approx(500 * md1_wait(500, 1000))
    assert math.isinf(md1_wait(1000, 1000))


def test_rfc6298():
    # R=1: SRTT 1, RTTVAR 0.5 -> RTO 3. R'=1: RTTVAR 0.375 -> RTO 2.5.
    assert rfc6298_rto([1.0, 1.0], min_rto_s=0) == pytest.approx([3.0, 2.5])
    # R'=2 after R=1: RTTVAR = 0.75*0.5 + 0.25*1 = 0.625, SRTT = 1.125 -> 3.625.
    assert rfc6298_rto([1.0, 2.0], min_rto_s=0)[-1] == pytest.approx(3.625)
    assert rfc6298_rto([0.1]) == [1.0]  # RFC minimum of 1 s


def test_bad_model_input():
    with pytest.raises(ValueError):
        Link(0.005, 1.5)
    with pytest.raises(ValueError):
        gbn_timeout(LINK5, 0, 0.02)
