"""Property: any impairment that eventually lets packets through gives a byte-exact file.

Hypothesis draws finite sets of dropped messages in each direction (a finite set always
ends, so every retry after it gets through), time windows of total loss, duplication,
reordering and jitter, for every protocol.
"""

import pytest
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference.core import CoreConfig, make_receiver, make_sender
from reference.sim import Channel, SimPath, simulate

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

CONFIGS = {
    "sw": CoreConfig(payload_size=200, timeout=0.03),
    "gbn": CoreConfig(payload_size=200, window=5, timeout=0.04),
    "sr": CoreConfig(payload_size=200, window=6, adaptive=True, initial_rto=0.1, max_rto=0.5, sack=True),
    "sr-nosack": CoreConfig(payload_size=200, window=6, timeout=0.04),
    "tcp": CoreConfig(payload_size=200, window_bytes=1000, adaptive=True, initial_rto=0.1, max_rto=0.5),
    "mh": CoreConfig(
        payload_size=200,
        window=6,
        adaptive=True,
        initial_rto=0.1,
        max_rto=0.5,
        sack=True,
        paths=2,
        dead_path_timeouts=2,
    ),
}

drops = st.frozensets(st.integers(0, 80), max_size=40)
outages = st.lists(st.tuples(st.floats(0, 1), st.floats(0.01, 0.3)).map(lambda t: (t[0], t[0] + t[1])), max_size=2).map(
    tuple
)
channels = st.builds(
    lambda d, o, dup, reo, jit: Channel(
        delay=0.01, jitter=jit, drops=d, outages=o, duplicate=dup, reorder=reo, rate=5e6 if jit == 0 else None
    ),
    drops,
    outages,
    st.sampled_from([0.0, 0.2]),
    st.sampled_from([0.0, 0.25]),
    st.sampled_from([0.0, 0.008]),
)


def check(name, forward, reverse, size, seed):
    protocol = name.split("-")[0]
    config = CONFIGS[name]
    data = bytes((i * 7 + seed) % 256 for i in range(size))
    paths = [SimPath(forward, reverse)] * config.paths
    res = simulate(
        make_sender(protocol, data, config),
        make_receiver(protocol, config),
        paths,
        data=data,
        seed=seed,
        time_limit=3600,
    )
    assert res.ok, (name, res.sender_stats, res.forward, res.reverse)
    assert res.output == data


def _property(name):
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(forward=channels, reverse=channels, size=st.integers(0, 4000), seed=st.integers(0, 1000))
    def test(forward, reverse, size, seed):
        check(name, forward, reverse, size, seed)

    test.__name__ = f"test_{name.replace('-', '_')}_delivers_whatever_finite_loss_happens"
    return test


for _name in CONFIGS:
    _test = _property(_name)
    globals()[_test.__name__] = _test


@settings(max_examples=15, deadline=None)
@given(dead_at=st.floats(0, 0.3), seed=st.integers(0, 1000), other=channels)
def test_mh_delivers_when_one_path_dies_for_good(dead_at, seed, other):
    config = CONFIGS["mh"]
    data = bytes(range(256)) * 12
    paths = [SimPath(other, replace(other, drops=frozenset())), SimPath(Channel(delay=0.02), down_at=dead_at)]
    res = simulate(make_sender("mh", data, config), make_receiver("mh", config), paths, seed=seed)
    assert res.ok and res.output == data
