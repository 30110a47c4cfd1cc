"""A regrade's digest of what decides a scenario's verdict (grader/compare.py)."""

import dataclasses

from grader.compare import definition, to_run
from grader.protocol.battery import load_battery
from tests.support.grading import TINY


def test_a_changed_build_limit_regrades_every_scenario_and_an_unset_one_none():
    battery = load_battery(TINY)
    before = {"scenarios": [{"name": s.name, "definition": definition(s, battery)} for s in battery.scenarios]}
    assert to_run(battery, before) == []
    assert to_run(dataclasses.replace(battery, build_time_limit=None), before) == []
    slower = dataclasses.replace(battery, build_time_limit=300)
    assert to_run(slower, before) == [s.name for s in battery.scenarios]
