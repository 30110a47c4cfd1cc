"""harness/steal.py: a late engine blamed on the VM's host when it stole CPU time, on
load otherwise; readings of /proc/stat's format, and of this machine's own file."""

import pytest
from harness import steal

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

#          user  nice system idle   iowait irq softirq steal
BEFORE = "cpu  1000 0 200 8000 10 0 5 100 0 0\ncpu0 500 0 100 4000 5 0 2 50 0 0\n"
AFTER_QUIET = "cpu  1100 0 220 8880 10 0 5 100 0 0\n"  # 1000 jiffies, no steal
AFTER_STOLEN = "cpu  1100 0 220 8800 10 0 5 180 0 0\n"  # 1000 jiffies, 80 stolen


def reading(tmp_path, text):
    path = tmp_path / "stat"
    path.write_text(text)
    return steal.cpu_times(str(path))


def test_the_aggregate_line_is_read_as_eight_counters(tmp_path):
    assert reading(tmp_path, BEFORE) == [1000, 0, 200, 8000, 10, 0, 5, 100]


def test_a_file_that_is_not_proc_stat_reads_as_nothing(tmp_path):
    assert reading(tmp_path, "intr 1 2 3\n") is None
    assert reading(tmp_path, "cpu 1 2 x 4 5 6 7 8\n") is None
    assert steal.cpu_times(str(tmp_path / "missing")) is None


def test_the_share_stolen_is_of_all_cpu_time_between_readings(tmp_path):
    before = reading(tmp_path, BEFORE)
    assert steal.stolen_share(before, reading(tmp_path, AFTER_STOLEN)) == 0.08
    assert steal.stolen_share(before, reading(tmp_path, AFTER_QUIET)) == 0.0
    assert steal.stolen_share(before, before) is None and steal.stolen_share(None, before) is None


def test_the_host_is_blamed_only_when_it_stole_a_notable_share(tmp_path):
    before = reading(tmp_path, BEFORE)
    assert (
        steal.lag_cause(steal.stolen_share(before, reading(tmp_path, AFTER_STOLEN)))
        == "this VM's host held its CPUs back (steal: 8.0% of the CPU time during the run)"
    )
    assert steal.lag_cause(steal.stolen_share(before, reading(tmp_path, AFTER_QUIET))) == "the machine was busy"
    assert steal.lag_cause(None) == "the machine was busy"


def test_this_machines_counters_only_grow():
    first = steal.cpu_times()
    second = steal.cpu_times()
    assert first is not None and len(first) == 8
    assert all(b >= a for a, b in zip(first, second))
