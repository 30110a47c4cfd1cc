"""Batteries as data: the COMN battery is complete and valid; mistakes are one line."""
import pytest

from grader.battery import load_battery, parse_battery
from harness.engine import check_spec
from harness.procs import UsageError


def test_comn_battery_covers_parts_and_conditions():
    b = load_battery("comn")
    assert {s.part for s in b.scenarios} == {1, 2, 3, 4}
    specs = " ".join(f"{s.link} {s.reverse or ''}" for s in b.scenarios)
    for condition in ("loss 5%", "loss 30%", "gemodel", "duplicate", "reorder", "distribution normal", "100ms"):
        assert condition in specs
    assert "corrupt" not in specs          # COMN's format has no checksum
    assert {s.meet for s in b.scenarios} == {"student", "sender", "receiver"}
    assert {0, 1, 3072, 1 << 20} <= {s.size for s in b.scenarios}
    assert max(s.size for s in b.scenarios) > 65536 * 1024      # wraps the 16-bit sequence number
    for s in b.scenarios:
        check_spec(s.link, s.name)
        if s.reverse:
            check_spec(s.reverse, s.name)
    assert all(s.part in (1,) or s.public is False or s.points > 0 for s in b.scenarios)


@pytest.mark.parametrize("change, words", [
    ({"meet": "both"}, "meet must be one of"),
    ({"colour": "red"}, "unknown field"),
    ({"part": 9}, "part 9 has no [programs.9]"),
    ({"size": -1}, "size must be a non-negative number"),
    ({"retx_vs_ref": 2}, "retx_vs_ref must be [factor, slack]"),
])
def test_a_mistake_in_a_battery_is_one_line_naming_the_scenario(change, words):
    data = {"programs": {"2": {"sender": "Sender2 {file}", "receiver": "Receiver2 {output}"}},
            "scenario": [{"name": "s1", "part": 2, "link": "", **change}]}
    with pytest.raises(UsageError) as e:
        parse_battery(data, "b.toml")
    assert words in str(e.value) and "'s1'" in str(e.value) or words in str(e.value)
    assert "\n" not in str(e.value)


def test_unknown_battery_names_the_known_ones():
    with pytest.raises(UsageError, match="one of: comn"):
        load_battery("nope")
