"""Where the model's assumptions hold the kit reproduces it: kernel Reno (pinned per route,
read back from the connection) through the engine at 1% loss on the data only, 50 ms
round trip, no rate or window limit, within 15% of Mathis (bench/tcp_models.py
measures the whole grid). Two fixed seeds of 40 s in parallel: about 110 loss events
each."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.tcp_models import measure_reno

pytestmark = pytest.mark.netns


def test_kernel_reno_is_within_15_percent_of_mathis():
    with ThreadPoolExecutor(2) as pool:
        rows = list(pool.map(lambda seed: measure_reno(0.01, 0.05, seed, 40.0), (1, 2)))
    for row in rows:
        assert row["ok"], row["error"]
        assert row["tcp_cc"] == "reno"
    ratio = sum(r["goodput_kBps"] for r in rows) / len(rows) / rows[0]["mathis_kBps"]
    assert 0.85 <= ratio <= 1.15, [(r["goodput_kBps"], r["retransmissions"]) for r in rows]
