"""bench.notebooks.steady_rate: a class's rate in full swing, its ramp and drain left out."""

from bench.notebooks import steady_rate


def test_a_steady_pool_gives_its_own_rate_whatever_the_ramp_and_drain():
    # four at once, each grading 40 s, a new one started as one ends (one every 10 s),
    # the first four admitted 10 s apart by the gate: 360 an hour in full swing
    finished = [(10.0 * k, 10.0 * k + 40.0) for k in range(40)]
    assert steady_rate(finished) == 360.0
    # the whole class's wall rate is lower: its ramp and drain (one grading's time each)
    wall = max(e for _, e in finished) - min(s for s, _ in finished)
    assert 3600 * len(finished) / wall < 340


def test_a_slow_middle_lowers_it():
    finished = [(10.0 * k, 10.0 * k + 40.0) for k in range(20)] + [(200 + 20.0 * k, 240 + 20.0 * k) for k in range(20)]
    assert 180 < steady_rate(finished) < 360


def test_too_short_a_swing_has_no_rate():
    assert steady_rate([]) is None
    assert steady_rate([(0.0, 40.0), (10.0, 50.0), (20.0, 60.0)]) is None  # the last start before the first end
    assert steady_rate([(0.0, 40.0), (10.0, 45.0), (50.0, 90.0)]) is None  # two ends in the window
    # eight at once, admitted 10 s apart: ends bunched between the first end and the last start
    assert steady_rate([(10.0 * k, 10.0 * k + 45.0) for k in range(8)]) is None


def test_the_ramp_does_not_count():
    # the gate fills the pool one start a settle (10 s), then starts one every 12 s as
    # room comes: 300 an hour in full swing, whatever the faster ramp before the first end
    ramp = [(10.0 * k, 10.0 * k + 45.0) for k in range(5)]
    swing = [(52.0 + 12.0 * k, 52.0 + 12.0 * k + 45.0) for k in range(30)]
    assert steady_rate(ramp + swing) == 300.0
