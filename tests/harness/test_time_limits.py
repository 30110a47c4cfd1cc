"""Time limits from the expected duration (floor, cap) and the no-progress window."""
import pytest

from harness import time_limits as tl
from harness.models import Link, stop_and_wait


def test_link_of_reads_delay_loss_and_rate_from_a_netem_spec():
    link = tl.link_of("delay 25ms 5ms distribution normal loss random 5% rate 10mbit limit 100")
    assert (link.delay_s, link.loss, link.rate_bps) == (0.025, 0.05, 10e6)
    assert tl.link_of("").delay_s == 0 and tl.link_of("rate 1kbps").rate_bps == 8000
    assert tl.link_of("delay 1s").delay_s == 1.0


def test_time_limit_follows_the_expected_duration_within_floor_and_cap():
    assert tl.time_limit(0.5) == tl.FLOOR_S
    assert tl.time_limit(100) == pytest.approx(3 * 100 + tl.STARTUP_S)
    assert tl.time_limit(10_000) == tl.CAP_S


def test_expected_seconds_is_stop_and_wait_at_the_programs_timeout():
    spec = "delay 25ms loss 5% rate 10mbit"
    want = stop_and_wait(Link(0.025, 0.05, 10e6), 0.06, 1 << 20).time_s
    assert tl.expected_seconds(spec, spec, 1 << 20, {"timeout": 60}) == pytest.approx(want)
    # No timeout parameter: two round trips.
    assert tl.expected_seconds(spec, spec, 1 << 20, {}) > want


def test_no_progress_window_has_a_floor_and_grows_with_rtt_and_timeout():
    assert tl.no_progress_window("delay 5ms", "delay 5ms", {"timeout": 20}) == tl.NO_PROGRESS_FLOOR_S
    slow = tl.no_progress_window("delay 500ms", "delay 500ms", {"timeout": 2000})
    assert slow == pytest.approx(tl.PATIENCE * (1.0 + 2.0), rel=0.01)
