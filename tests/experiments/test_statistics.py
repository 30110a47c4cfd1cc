"""Per-cell statistics and seed 000's repeat-until-margin rule, against hand-computed values."""

import math

import pytest

from harness.statistics import needs_more_runs, repeat_until, summarize, t_critical

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)


def test_summary_of_one_to_five():
    s = summarize([1, 2, 3, 4, 5])
    # mean 3; sample std sqrt(10/4) = 1.58114; t(0.975, 4) = 2.776445;
    # margin = 2.776445 * 1.58114 / sqrt(5) = 1.96324; relative 0.654413
    assert (s.n, s.mean, s.min, s.max) == (5, 3.0, 1.0, 5.0)
    assert s.std == pytest.approx(1.581139, rel=1e-6)
    assert s.margin == pytest.approx(1.963243, rel=1e-6)
    assert (s.ci_low, s.ci_high) == pytest.approx((3 - 1.963243, 3 + 1.963243), rel=1e-6)
    assert s.rel_margin == pytest.approx(0.654414, rel=1e-5)


def test_t_quantiles():
    assert t_critical(2) == pytest.approx(12.7062, rel=1e-4)
    assert t_critical(30) == pytest.approx(2.04523, rel=1e-4)


def test_failed_runs_are_left_out_and_small_samples_have_no_interval():
    s = summarize([float("nan"), 7.0, None])
    assert s.n == 1 and s.mean == 7.0 and math.isnan(s.margin)
    assert summarize([]).n == 0


def test_stopping_rule():
    assert needs_more_runs([10, 10], 0.1, cap=30, min_runs=3)  # below the minimum
    assert not needs_more_runs([10, 10.1, 9.9], 0.1, cap=30)  # margin ~2.5% < 10%
    assert needs_more_runs([5, 15, 10], 0.1, cap=30)  # margin ~124%
    assert not needs_more_runs([5, 15, 10], 0.1, cap=3)  # cap reached


def test_repeat_until_stops_at_the_margin_or_the_cap():
    steady = repeat_until(lambda i: 100 + (i % 2), 0.10, cap=30, min_runs=3)
    assert len(steady) == 3
    noisy = repeat_until(lambda i: [1, 100][i % 2], 0.10, cap=12, min_runs=3)
    assert len(noisy) == 12
    # A decreasing spread: the rule stops at the first n whose margin is under 10%.
    values = repeat_until(lambda i: 100 + 40 * (-1) ** i / (i + 1), 0.10, cap=30)
    assert summarize(values).rel_margin < 0.10
    assert summarize(values[:-1]).rel_margin >= 0.10 or len(values) == 3


def test_repeat_until_rejects_bad_arguments():
    with pytest.raises(ValueError):
        repeat_until(lambda i: 1.0, 0, cap=5)


def test_the_95_percent_table_is_scipys_to_the_last_bit():
    from scipy import stats
    from harness.statistics import T975

    assert len(T975) >= 30
    assert all(T975[df - 1] == float(stats.t.ppf(0.975, df)) for df in range(1, len(T975) + 1))
    n = len(T975) + 2  # past the table: scipy's own
    assert t_critical(n) == float(stats.t.ppf(0.975, n - 1))
    assert t_critical(5, 0.9) == float(stats.t.ppf(0.95, 4))
