"""Conclusions only where the intervals allow (harness/statistics.py `compare`, `best_sentence`):
over synthetic tables whose 95% intervals overlap no generated sentence ranks the cells, and
over tables whose intervals are apart the same sentences do rank them."""

import itertools
import re

import pandas as pd
import pytest

from assignments.comn import sheet as comn
from harness.sheets.sheet import Results
from harness.statistics import best_sentence, compare, margin_to_separate, order, runs_to_separate, summarize

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

RANKING = ("is above", "is below", "beats", "peaks at", "SR is ahead")
RATIO = re.compile(r"\d\.\d+×")  # "2.0×": a ratio of two cells


def runs(cells: list[dict], base, spread: float, n: int = 3, retx: int = 60, **extra) -> pd.DataFrame:
    """n runs per cell around base(cell), ± spread: goodput and retransmissions."""
    rows = []
    for i, cell in enumerate(cells):
        for k in range(n):
            value = base(cell, i) + spread * (k - (n - 1) / 2)
            rows.append(
                {**cell, "ok": True, "error": None, "goodput_kBps": value, "retransmissions": retx + k, **extra}
            )
    return pd.DataFrame(rows)


def comn_results(spread: float, step: float) -> Results:
    """Every sweep of the COMN sheet; cell i's mean is 100 + step·i (so with a large spread
    and a small step every interval overlaps every other)."""
    plan = comn.QUICK
    q1 = [{"delay": 5, "loss": 5, "timeout": t} for t in plan.q1_timeouts]
    q3 = [
        {"delay": d, "loss": 5, "timeout": comn.gbn_timeout_ms(d), "window": w}
        for d, w in itertools.product(plan.q3_delays, plan.q3_windows)
    ]
    q5 = [{"delay": 25, "loss": 5, "timeout": 60, "window": w} for w in plan.q5_windows]
    q7 = [{"delay": 25, "loss": 5, "window_kB": w} for w in plan.q7_windows_kB]
    base = lambda cell, i: 100 + step * i  # noqa: E731
    return Results(
        frames={
            "q1": runs(q1, base, spread, retx=11),
            "q3": runs(q3, base, spread),
            "q5": runs(q5, base, spread),
            "q7": runs(q7, base, spread, tcp_cc="cubic"),
            "q7reno": runs(q7, lambda c, i: 100 + step * i + step / 2, spread, tcp_cc="reno"),
        }
    )


def discussions(r: Results) -> dict[str, str]:
    plan = comn.QUICK
    return {
        "q2": comn.q2_answer(r, plan.size),
        "q4": comn.q4_answer(r, plan),
        "q6": comn.q6_answer(r, plan),
        "q8": comn.q8_answer(r),
    }


def test_overlapping_intervals_rank_nothing():
    texts = discussions(comn_results(spread=60.0, step=1.0))
    for q, text in texts.items():
        for word in RANKING:
            # the Q4 models paragraph sets a model beside a measurement ("3.1× the measured"), not two cells
            body = text.split("Models:")[0] if q == "q4" else text
            assert word not in body, (q, word, text)
        assert not RATIO.search(text.split("Models:")[0]), (q, text)
        assert "cannot tell" in text, (q, text)
        assert "runs per cell" in text and "--margin" in text, (q, text)
    assert (
        "Optimal timeout from these measurements (the highest throughput among timeouts whose "
        "retransmissions stay within 25% of the loss floor): the runs cannot tell which of" in texts["q2"]
    )


def test_separated_intervals_are_ranked():
    texts = discussions(comn_results(spread=1.0, step=40.0))
    assert "is above" in texts["q6"] or "is below" in texts["q6"]
    assert "loss floor) is 100 ms (" in texts["q2"]
    assert "TCP cubic (100.0 ± 2.5 KB/s) is below GBN (300.0 ± 2.5 KB/s)" in texts["q8"]  # at equal window


def test_q8_names_the_algorithm_that_ran_and_sets_reno_beside_the_models():
    text = comn.q8_answer(comn_results(spread=1.0, step=40.0))
    assert "TCP cubic" in text and "Measured with Reno itself" in text
    assert "0.7 of its window" in text  # said of CUBIC, which ran
    bbr = comn_results(spread=1.0, step=40.0)
    bbr.frames["q7"]["tcp_cc"] = "bbr"
    text = comn.q8_answer(bbr)
    assert "TCP bbr" in text and "0.7" not in text and "does not back off on loss" in text


def test_compare_and_best_on_their_own():
    a, b = summarize([100, 110, 120]).to_dict(), summarize([105, 125, 140]).to_dict()
    far = summarize([10, 11, 12]).to_dict()
    assert order(a, b) == 0 and order(a, far) == 1 and order(far, a) == -1
    text = compare("A", a, "B", b, "KB/s")
    assert text.startswith("the runs cannot tell A (110.0 ± 24.8 KB/s) from B")
    n = runs_to_separate(a, b)
    assert n is not None and n > 3 and f"about {n} runs per cell" in text
    assert f"--margin {margin_to_separate(a, b):g}" in text
    assert compare("A", a, "C", far, ratio=True).startswith("A (110.0 ± 24.8) is above C (11.0 ± 2.5, 10.00×)")
    # a model's value is exact: ranked only when outside the measurement's interval
    assert "lies inside" in compare("A", a, "Mathis", 109.0)
    assert "is above Mathis" in compare("A", a, "Mathis", 60.0)
    # one run has no interval: never ranked
    assert "cannot tell" in compare("A", summarize([500]).to_dict(), "C", far)
    top = best_sentence("The best", {(1,): a, (2,): b, (3,): far}, lambda k: f"w{k[0]}")
    assert "cannot tell which of w2, w1 it is" in top
    assert best_sentence("The best", {(1,): far, (2,): a}, lambda k: f"w{k[0]}").startswith("The best is w2 (")


@pytest.mark.parametrize("means", [(5.0, 5.0)])
def test_equal_means_need_no_more_runs(means):
    a = summarize([means[0] - 1, means[0], means[0] + 1]).to_dict()
    b = summarize([means[1] - 1, means[1], means[1] + 1]).to_dict()
    assert runs_to_separate(a, b) is None and margin_to_separate(a, b) is None
    assert "no number of runs" in compare("A", a, "B", b)


def _times(cells: list[dict], means: list[float], spread: float) -> pd.DataFrame:
    rows = []
    for cell, mean in zip(cells, means):
        for k in (-1, 0, 1):
            rows.append({**cell, "ok": True, "error": None, "wire_time_s": mean + spread * k})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("spread, ranked", [(5.0, False), (0.01, True)])
def test_the_other_sheets_rank_only_apart_intervals(spread, ranked):
    from assignments.multihoming import sheet as multihoming
    from assignments.tcp_like import sheet as tcp_like

    plan = multihoming.QUICK
    one = _times([{"loss": p} for p in plan.losses], [10.0 + i for i, _ in enumerate(plan.losses)], spread)
    two = _times([{"loss": p} for p in plan.losses], [6.0 + i for i, _ in enumerate(plan.losses)], spread)
    text = multihoming.comparison_answer(Results(frames={"one_path": one, "two_paths": two}), plan)
    assert ("Two paths are faster at every loss rate" in text) == ranked, text
    assert ("cannot tell" in text) == (not ranked) and "NOT" not in text
    loss = _times(
        [{"loss": p, "fast_retransmit": fr} for p in (10, 20) for fr in (0, tcp_like.K)], [8.0, 5.0, 12.0, 7.0], spread
    )
    text = tcp_like.loss_answer(Results(frames={"loss": loss}))
    assert ("beyond the 95% intervals" in text) == ranked, text
    assert ("cannot tell" in text) == (not ranked), text
