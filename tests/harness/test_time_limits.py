"""harness/time_limits.py, the one time-limit policy: estimates from the models, the
named limits each caller picks (rdtlab run, the grader, the sheets), and the
no-progress windows."""

import pytest

from harness import time_limits as tl
from harness.engine import SpecError
from harness.models import Link, stop_and_wait

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)


def test_link_of_reads_delay_loss_and_rate_from_a_netem_spec():
    link = tl.link_of("delay 25ms 5ms distribution normal loss random 5% rate 10mbit limit 100")
    assert (link.delay_s, link.loss, link.rate_bps) == (0.025, 0.05, 10e6)
    assert tl.link_of("").delay_s == 0 and tl.link_of("rate 1kbps").rate_bps == 8000
    assert tl.link_of("delay 1s").delay_s == 1.0
    assert tl.jitter_of("delay 100ms 20ms distribution normal") == 0.02 and tl.jitter_of("delay 5ms") == 0


def test_burst_loss_counts_at_its_long_run_mean():
    # Gilbert-Elliott: 2% into the bad state, 30% out of it, 80% loss there, 1% in the good one
    spec = "delay 10ms loss gemodel 2% 30% 80% 1% rate 10mbit"
    share_bad = 0.02 / 0.32
    assert tl.mean_loss(spec) == pytest.approx(share_bad * 0.8 + (1 - share_bad) * 0.01)
    assert tl.worse_link(spec, "delay 10ms").loss == tl.mean_loss(spec)
    assert tl.mean_loss("loss 5%") == 0.05


def test_the_engine_parses_the_spec_so_every_form_tc_takes_counts():
    """One parser (the engine's): what tc accepts and a Python regex did not read before
    (a percentage without its sign, abbreviated keywords, the 4-state model) plans the
    run as the engine runs it; what the engine refuses is one line naming the token."""
    assert tl.link_of("lat 25ms lo 5 ra 1mbit") == tl.link_of("delay 25ms loss 5% rate 1mbit")
    assert tl.link_of("lat 25ms lo 5").loss == 0.05
    # 4-state: 1% into a burst, 30% back to the gap, bursts of lost packets only; 0.5% isolated losses
    p13, p31, p14 = 0.01, 0.30, 0.005
    w1, w3 = p31 / p13, 1.0
    expected = (w3 + w1 * p14) / (w1 + w3 + w1 * p14)
    assert tl.mean_loss("loss state 1% 30% 0% 100% 0.5%") == pytest.approx(expected)
    assert tl.expected_seconds("loss state 1% 30% 0% 100% 0.5%", "", 100_000, {"timeout": 50}) > tl.expected_seconds(
        "", "", 100_000, {"timeout": 50}
    )
    with pytest.raises(SpecError, match="bad link spec 'delay 5 parsecs': .*parsecs"):
        tl.link_of("delay 5 parsecs")


def test_the_run_limit_follows_the_expected_duration_within_floor_and_cap():
    assert tl.time_limit(0.5) == tl.RUN(0.5) == 30
    assert tl.time_limit(100) == pytest.approx(3 * 100 + 10)
    assert tl.time_limit(10_000) == 900


def test_the_grader_limit_is_tighter_in_whole_seconds_without_a_cap():
    assert tl.GRADER(0.5) == 10
    assert tl.GRADER(2.1) == 12  # 3 x 2.1 + 5 = 11.3, rounded up
    assert tl.GRADER(1000) == 3005


def test_the_sheets_limits_keep_their_formulas():
    assert tl.BOUND(2.0) == 60 + 20 * 2.0  # stop_and_wait_crc, multihoming
    assert tl.LOSSY_BOUND(2.0) == 120 + 40 * 2.0  # tcp_like
    assert tl.WORST_CASE(150.0) == 60 + 150.0  # gbn_vs_tcp
    assert tl.LimitPolicy(factor=2, slack_s=1, floor_s=5, cap_s=8)(0) == 5
    assert tl.LimitPolicy(factor=2, slack_s=1, floor_s=5, cap_s=8)(10) == 8


def test_expected_seconds_is_stop_and_wait_at_the_programs_timeout_by_default():
    spec = "delay 25ms loss 5% rate 10mbit"
    want = stop_and_wait(Link(0.025, 0.05, 10e6), 0.06, 1 << 20).time_s
    assert tl.expected_seconds(spec, spec, 1 << 20, {"timeout": 60}) == pytest.approx(want)
    # No timeout parameter: two round trips.
    assert tl.expected_seconds(spec, spec, 1 << 20, {}) > want


def test_a_pipelined_model_expects_less_and_a_blast_least():
    spec, size, params = "delay 25ms loss 5% rate 10mbit", 1 << 20, {"timeout": 60, "window": 16}
    sw, gbn, sr, blast = (
        tl.expected_seconds(spec, spec, size, params, model=m)
        for m in ("stop-and-wait", "go-back-n", "selective-repeat", "blast")
    )
    assert blast < sr <= gbn < sw
    assert blast == pytest.approx(1024 * 1051 * 8 / 10e6 + 0.05, rel=0.05)  # 1024 packets at 10 Mbit/s
    assert tl.expected_seconds(spec, spec, 0, params, model="go-back-n") == pytest.approx(
        0.05, rel=0.05
    )  # one round trip


def test_no_progress_window_has_a_floor_and_grows_with_rtt_jitter_and_timeout():
    assert tl.no_progress_window("delay 5ms", "delay 5ms", {"timeout": 20}) == tl.NO_PROGRESS_FLOOR_S == 10
    slow = tl.no_progress_window("delay 500ms", "delay 500ms", {"timeout": 2000})
    assert slow == pytest.approx(tl.PATIENCE * (1.0 + 2.0), rel=0.01)
    jittery = tl.no_progress_window("delay 500ms 100ms", "delay 500ms", {"timeout": 2000})
    assert jittery == pytest.approx(slow + 4 * 6 * 0.1, rel=0.01)  # 3 sigma each way, each round


def test_the_grader_window_counts_more_rounds_above_a_lower_floor_in_whole_seconds():
    assert tl.no_progress_window("delay 5ms", "delay 5ms", {"timeout": 20}, tl.GRADER_WINDOW) == 5
    # 100 ms +- 20 ms, 500 ms timeout: 8 x (0.2 + 0.12 + 0.5) = 6.56 -> 7
    assert tl.no_progress_window("delay 100ms 20ms", "delay 100ms 20ms", {"timeout": 500}, tl.GRADER_WINDOW) == 7


def test_a_late_packet_disturbs_a_run_in_proportion_to_its_round_trip():
    """1 ms on short round trips; 2% of the shortest round trip of the run's paths above
    50 ms, so one burst of a VM host's steal does not unsettle a 300 ms scenario."""
    from harness.transfer import LAG_WARN_US, lag_bar_us

    def path(forward, reverse=None):
        return {"forward": forward, "reverse": forward if reverse is None else reverse}

    assert lag_bar_us([path("delay 5ms rate 10mbit")]) == LAG_WARN_US
    assert lag_bar_us([path("")]) == LAG_WARN_US
    assert lag_bar_us([path("delay 150ms rate 10mbit")]) == pytest.approx(6000)
    assert lag_bar_us([path("delay 150ms", "delay 50ms")]) == pytest.approx(4000)
    # multi-homed: the shortest path's round trip sets the bar
    assert lag_bar_us([path("delay 150ms"), path("delay 40ms")]) == pytest.approx(1600)
