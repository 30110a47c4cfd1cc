"""Batteries as data: the COMN battery is complete and valid; mistakes are one line."""

import tomllib

import pytest

from grader.protocol.battery import load_battery, parse_battery
from harness.cli import event_words
from harness.engine import check_spec
from harness.procs import UsageError

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)


def test_comn_battery_covers_parts_and_conditions():
    b = load_battery("comn")
    assert {s.part for s in b.scenarios} == {1, 2, 3, 4}
    specs = " ".join(f"{s.link} {s.reverse or ''}" for s in b.scenarios)
    for condition in ("loss 5%", "loss 30%", "gemodel", "duplicate", "reorder", "distribution normal", "100ms"):
        assert condition in specs
    assert "corrupt" not in specs  # COMN's format has no checksum
    assert {s.meet for s in b.scenarios} == {"student", "sender", "receiver"}
    assert {0, 1, 3072, 1 << 20} <= {s.size for s in b.scenarios}
    assert max(s.size for s in b.scenarios) > 65536 * 1024  # wraps the 16-bit sequence number
    for s in b.scenarios:
        check_spec(s.link, s.name)
        if s.reverse:
            check_spec(s.reverse, s.name)
    assert all(s.part in (1,) or s.public is False or s.points > 0 for s in b.scenarios)


@pytest.mark.parametrize(
    "change, words",
    [
        ({"meet": "both"}, "meet must be one of"),
        ({"colour": "red"}, "unknown field"),
        ({"part": 9}, "part 9 has no [programs.9]"),
        ({"size": -1}, "size must be a non-negative number"),
        ({"retx_vs_ref": 2}, "retx_vs_ref must be [factor, slack]"),
        ({"retx_vs_losses": [1]}, "retx_vs_losses must be [factor, slack]"),
        ({"fast_retransmit_k": 0}, "fast_retransmit_k must be a number of duplicate ACKs"),
        ({"timer_after_sample_ms": -5}, "timer_after_sample_ms must be a positive number"),
        ({"reference_env": {"RDT_ENDING": 1}}, "reference_env must be a table of strings"),
    ],
)
def test_a_mistake_in_a_battery_is_one_line_naming_the_scenario(change, words):
    data = {
        "programs": {"2": {"sender": "Sender2 {file}", "receiver": "Receiver2 {output}"}},
        "scenario": [{"name": "s1", "part": 2, "link": "", **change}],
    }
    with pytest.raises(UsageError) as e:
        parse_battery(data, "b.toml")
    assert words in str(e.value) and "'s1'" in str(e.value) or words in str(e.value)
    assert "\n" not in str(e.value)


def test_unknown_battery_names_the_known_ones():
    with pytest.raises(UsageError, match="one of: comn"):
        load_battery("nope")


SET_IN_BATTERY = {
    name: ("time_limit",)
    for name in ("p4-wrap-reference-receiver", "p4-wrap-reference-sender", "p2-last-ack-lost", "p2-receiver-gone")
}


def test_the_comn_battery_grades_the_wrap_against_the_reference_and_termination_on_the_sender():
    by = {s.name: s for s in load_battery("comn").scenarios}
    for name, meet in (("p4-wrap-reference-receiver", "sender"), ("p4-wrap-reference-sender", "receiver")):
        assert by[name].meet == meet and by[name].size > 65536 * 1024  # the 16-bit numbers wrap
    gone = by["p2-receiver-gone"]
    assert gone.meet == "sender" and gone.reference_env == {"RDT_ENDING": "leave-unacked"}
    assert by["p4-buffering"].retx_vs_losses and by["p4-buffering"].goodput_vs_ref is None


def test_time_limits_come_from_the_parts_model_unless_the_battery_sets_one():
    from grader.jail import limits

    b = load_battery("comn")
    by = {s.name: s for s in b.scenarios}
    assert by["p4-wrap-reference-sender"].time_limit == 90  # set in the battery
    for s in b.scenarios:
        expected = limits.expected_seconds(
            b.programs[s.part].model, s.link, s.reverse or s.link, s.size, s.params, s.shared_queue
        )
        if "time_limit" not in SET_IN_BATTERY.get(s.name, ()):
            assert s.time_limit == max(10, -(-(3 * expected + 5) // 1))  # time_limits.GRADER
        assert s.no_progress >= 5
    # a window-bound 1 MiB at 25 ms takes the reference ~3.5 s: the GBN/SR models know it
    assert (
        2.5
        < limits.expected_seconds(
            "selective-repeat", by["p4-clean"].link, by["p4-clean"].link, 1 << 20, by["p4-clean"].params
        )
        < 5
    )
    assert by["p2-jitter"].no_progress > by["p2-clean"].no_progress  # 0.5 s timeout, 100 ms +- 20 ms
    assert 0.05 < limits.mean_loss("delay 10ms loss gemodel 2% 30% 80% 1% rate 10mbit") < 0.07
    data = {
        "programs": {"2": {"sender": "S {file}", "receiver": "R {output}"}},
        "scenario": [{"name": "s1", "part": 2, "link": "", "time_limit": 7, "no_progress": 3}],
    }
    s = parse_battery(data, "b.toml").scenarios[0]
    assert (s.time_limit, s.no_progress) == (7, 3)
    data["programs"]["2"]["model"] = "tcp"
    with pytest.raises(UsageError, match="model must be one of blast, stop-and-wait"):
        parse_battery(data, "b.toml")


def test_beyond_the_spec_runs_unscored_unless_the_course_scores_it():
    comn = load_battery("comn")
    wraps = [s for s in comn.scenarios if s.beyond_spec]
    assert {s.name for s in wraps} == {"p4-wrap-reference-receiver", "p4-wrap-reference-sender"}
    assert all(s.points == 0 and not s.scored for s in wraps) and comn.max_score == 60
    data = tomllib.loads(open(comn.source).read())
    data["battery"]["score_beyond_spec"] = True
    scored = parse_battery(data)
    assert scored.max_score == 64 and all(s.scored and s.points == 2 for s in scored.scenarios if s.beyond_spec)


def test_paths_schedules_ipv6_and_object_sizes_are_checked_where_written():
    base = {
        "battery": {"name": "b", "detect": "byte_order", "seq_bytes": 4},
        "programs": {
            "1": {
                "sender": "S {file} {receiver_host}:{receiver_port} {receiver_host2}:{receiver_port2}",
                "receiver": "R {listen_port} {output}",
                "model": "multipath",
                "model_timeout": 500,
            }
        },
    }

    def scenario(**keys):
        return parse_battery({**base, "scenario": [{"name": "s", "part": 1, **keys}]}).scenarios[0]

    s = scenario(
        paths=["delay 10ms", {"link": "delay 60ms", "reverse": "delay 5ms"}],
        ipv6=True,
        schedule=[{"at_ms": 3000, "cmd": "up", "path": "p0"}, {"at_ms": 1000, "cmd": "down", "path": "p0"}],
        path_share=0.2,
        sizes=[10, 20, 30],
    )
    assert s.paths == (("delay 10ms", None), ("delay 60ms", "delay 5ms")) and s.ipv6 and s.repeat == 3
    assert [e["at_ms"] for e in s.schedule] == [1000, 3000] and [s.size_of(k) for k in range(4)] == [10, 20, 30, 10]
    plain = scenario(paths=["delay 10ms", "delay 60ms"])
    assert s.time_limit >= plain.time_limit + 2  # the outage is in the limit
    one_way = scenario(
        paths=["delay 10ms", "delay 60ms"],
        schedule=[
            {"at_ms": 1000, "cmd": "down", "path": "p1", "direction": "reverse"},
            {"at_ms": 4000, "cmd": "up", "path": "p1", "direction": "reverse"},
        ],
    )
    assert one_way.time_limit >= plain.time_limit + 3  # so is an outage of the return path
    words = [w for e in one_way.schedule for w in event_words(e)]
    assert words == ["--down", "p1:reverse@1000", "--up", "p1:reverse@4000"]  # the replay line's
    for bad, words in (
        ({"paths": ["delay 1ms"], "link": "delay 1ms"}, "either link"),
        ({"paths": [5]}, "a path must be"),
        (
            {"paths": ["delay 1ms", "delay 1ms"], "schedule": [{"at_ms": 1, "cmd": "down", "path": "p7"}]},
            "schedule event",
        ),
        (
            {"paths": ["delay 1ms"], "schedule": [{"at_ms": 1, "cmd": "down", "path": "p0", "direction": "up"}]},
            "direction = forward|reverse",
        ),
        ({"path_share": 0.3}, "path_share"),
        ({"sizes": [-1]}, "sizes"),
        ({"backend": "kernel"}, "backend must be"),
    ):
        with pytest.raises(UsageError, match=words):
            scenario(**bad)
    for head, words in (
        ({"detect": "magic"}, "detect must be"),
        ({"seq_bytes": 3}, "seq_bytes"),
        ({"score_beyond_spec": "yes"}, "score_beyond_spec"),
        ({"build_time_limit": 0}, "build_time_limit must be a positive number"),
        ({"build_time_limit": "1m"}, "build_time_limit must be a positive number"),
    ):
        with pytest.raises(UsageError, match=words):
            parse_battery({**base, "battery": {**base["battery"], **head}, "scenario": [{"name": "s", "part": 1}]})
    slow_builds = parse_battery(
        {**base, "battery": {**base["battery"], "build_time_limit": 300}, "scenario": [{"name": "s", "part": 1}]}
    )
    assert slow_builds.build_time_limit == slow_builds.select(part=1).build_time_limit == 300
