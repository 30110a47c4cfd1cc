"""harness/monitor.py without processes: the no-progress rule, the time limit and the
failure diagnosis, replayed on what real failing runs fed them (monitor_runs.json,
recorded by record_monitor_runs.py from tests/fixtures' misbehaving programs), and on
small synthetic cases for the edges."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from harness import monitor
from harness.monitor import (
    ErrorKind,
    Exit,
    Failure,
    Monitor,
    RunEnd,
    Stopped,
    first_failure,
    link_story,
    output_mismatch,
    with_link_story,
)

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

RUNS = json.loads(Path(__file__).with_name("monitor_runs.json").read_text())


def stopped_of(d: dict | None) -> Stopped | None:
    return None if d is None else Stopped(**{**d, "kind": ErrorKind(d["kind"])})


def end_of(d: dict) -> RunEnd:
    return RunEnd(
        **{**d, "stopped": stopped_of(d["stopped"]), "sender": Exit(**d["sender"]), "receiver": Exit(**d["receiver"])}
    )


def replay(rec: dict) -> list[Stopped | None]:
    """The recorded checks fed to a fresh monitor: what it answers to each."""
    m = Monitor(rec["time_limit_s"], rec["no_progress_s"], rec["start_ns"], rec["interval_s"])
    facts = ("engine_exited", "receiver_left", "stats", "output_bytes", "receiver_exited")
    return [m.check(c["now_ns"], **{k: c[k] for k in facts}) for c in rec["checks"]]


@pytest.mark.parametrize("name", RUNS)
def test_the_monitor_answers_every_recorded_check_as_it_did_in_the_run(name):
    rec = RUNS[name]
    assert replay(rec) == [stopped_of(c["stopped"]) for c in rec["checks"]]


@pytest.mark.parametrize("name", [n for n in RUNS if "end" in RUNS[n]])
def test_the_diagnosis_gives_the_error_the_run_reported(name):
    rec = RUNS[name]
    end = end_of(rec["end"])
    failure = first_failure(end)
    assert failure == (rec["failure"] and Failure(ErrorKind(rec["failure"]["kind"]), rec["failure"]["message"]))
    if failure is None and not rec["ok"]:  # the programs ended well: the output decides
        assert rec["error_kind"] == ErrorKind.NO_OUTPUT and end.output_bytes == 0
        failure = output_mismatch(end.size, end.output_bytes, None)
    if failure is not None:
        failure = with_link_story(failure, rec["final_stats"], lambda: rec["tail_missing"])
    assert (failure and failure.message, failure and failure.kind) == (rec["error"], rec["error_kind"])


@pytest.mark.parametrize(
    "name,kind,words",
    [
        ("hang", ErrorKind.TIME_LIMIT, "timed out after 1.5 s (the sender was still running"),
        ("storm", ErrorKind.NO_PROGRESS, "(the sender only repeats packets it sent before, though "),
        ("storm-time-limit", ErrorKind.TIME_LIMIT, "timed out after 3 s"),
        (
            "receiver-quits-early",
            ErrorKind.RECEIVER_LEFT,
            "receiver exited (exit 0) while the sender was still sending",
        ),
        ("sender-never-ends", ErrorKind.NO_PROGRESS, "(the sender has sent nothing for "),
        ("sender-timing-bug", ErrorKind.NO_PROGRESS, "(the sender has sent nothing for "),
        ("deaf-sender", ErrorKind.NO_PROGRESS, "(the sender only repeats packets it sent before, though "),
        ("dead-receiver", ErrorKind.NO_PROGRESS, "(the sender only repeats packets it sent before); "),
        ("engine-dies", ErrorKind.ENGINE, "engine failed: it exited during the transfer (killed by SIGKILL)"),
    ],
)
def test_each_recorded_failure_is_stopped_for_its_cause(name, kind, words):
    rec = RUNS[name]
    answers = replay(rec)
    assert all(a is None for a in answers[:-1]) and answers[-1].kind is kind
    assert rec["error_kind"] == kind and words in rec["error"]


def test_a_run_whose_answers_the_link_withholds_is_not_stopped_but_would_be_without_that_rule(monkeypatch):
    rec = RUNS["answers-withheld"]
    assert rec["ok"] and replay(rec) == [None] * len(rec["checks"])
    monkeypatch.setattr(monitor, "link_withheld", lambda before, now: False)
    assert replay(rec)[-1].kind is ErrorKind.NO_PROGRESS


def test_a_storm_of_repeats_is_stopped_at_the_first_check_past_the_window():
    """136 604 datagrams, all one payload: none is progress, however many."""
    rec = RUNS["storm"]
    assert rec["checks"][-1]["stats"]["forward"]["packets_in"] > 10_000
    stop = replay(rec)[-1]
    assert rec["no_progress_s"] <= stop.quiet_s < rec["no_progress_s"] + rec["interval_s"] + 0.1


# ---- synthetic edges ----


def counters(fwd_in=0, fwd_rep=0, fwd_del=0, rev_in=0, rev_rep=0, rev_del=0, last_in_ns=None) -> dict:
    return {
        "forward": {"packets_in": fwd_in, "repeats": fwd_rep, "delivered": fwd_del, "last_in_ns": last_in_ns},
        "reverse": {"packets_in": rev_in, "repeats": rev_rep, "delivered": rev_del},
    }


S = 1_000_000_000


def test_wait_is_the_interval_until_the_deadline_draws_near():
    m = Monitor(time_limit_s=2, no_progress_s=0, start_ns=0)
    assert m.wait_s(0) == monitor.WATCH_S and m.wait_s(int(1.8 * S)) == pytest.approx(0.2) and m.wait_s(3 * S) == 0


def test_the_engine_comes_before_the_time_limit_before_a_receiver_gone():
    m = Monitor(time_limit_s=1, no_progress_s=1, start_ns=0)
    assert m.check(2 * S, engine_exited=True, receiver_left=True).kind is ErrorKind.ENGINE
    assert m.check(2 * S, receiver_left=True).kind is ErrorKind.TIME_LIMIT
    assert m.check(S // 2, receiver_left=True).kind is ErrorKind.RECEIVER_LEFT


def test_no_engine_or_a_zero_window_never_stops_for_progress():
    assert Monitor(100, 0, 0).check(50 * S, stats=counters(fwd_in=1)) is None
    assert Monitor(100, 1, 0).check(50 * S, stats=None) is None


def test_new_payload_either_way_or_output_growth_is_progress_repeats_are_not():
    m = Monitor(100, 2, 0)
    assert m.check(1 * S, stats=counters(fwd_in=5)) is None  # first reading: progress
    assert m.check(2 * S, stats=counters(fwd_in=5, rev_in=1, rev_del=0)) is None  # a new answer
    assert m.check(4 * S, stats=counters(fwd_in=5, rev_in=1), output_bytes=10) is None  # output grew
    stop = m.check(
        6 * S, stats=counters(fwd_in=9, fwd_rep=4, fwd_del=9, rev_in=1, last_in_ns=6 * S - 1), receiver_exited=True
    )
    assert stop == Stopped(
        ErrorKind.NO_PROGRESS, quiet_s=2.0, what="the sender only repeats packets it sent before", receiver_exited=True
    )


def test_what_the_sender_was_doing():
    never = Monitor(100, 1, 0)
    never.check(S // 2, stats=counters())
    assert never.check(2 * S, stats=counters()).what == "the sender never sent a packet"
    silent = Monitor(100, 1, 0)
    silent.check(S // 2, stats=counters(fwd_in=3, last_in_ns=S // 2))
    assert (
        silent.check(2 * S, stats=counters(fwd_in=3, last_in_ns=S // 2)).what == "the sender has sent nothing for 1.5 s"
    )
    deaf = Monitor(100, 1, 0)
    deaf.check(S // 2, stats=counters(fwd_in=3, fwd_del=3, rev_in=1, rev_del=1, last_in_ns=S // 2))
    assert (
        deaf.check(
            2 * S, stats=counters(fwd_in=8, fwd_rep=5, fwd_del=8, rev_in=6, rev_rep=5, rev_del=6, last_in_ns=2 * S)
        ).what
        == "the sender only repeats packets it sent before, though 5 answers reached it"
    )


def test_the_link_withheld_the_answers_or_the_packets():
    before = counters(fwd_in=5, fwd_del=5, rev_in=2, rev_del=2)
    assert monitor.link_withheld(before, counters(fwd_in=7, fwd_del=7, rev_in=4, rev_del=2))  # answers lost
    assert monitor.link_withheld(before, counters(fwd_in=7, fwd_del=5, rev_in=2, rev_del=2))  # packets lost
    assert not monitor.link_withheld(before, counters(fwd_in=7, fwd_del=7, rev_in=2, rev_del=2))  # not answered
    assert not monitor.link_withheld(before, counters(fwd_in=7, fwd_del=7, rev_in=4, rev_del=4))  # answered: deaf
    assert not monitor.link_withheld(before, before)  # sender silent


END = RunEnd(
    stopped=None,
    sender=Exit(0, False, "exit 0"),
    receiver=Exit(0, False, "exit 0"),
    size=100,
    output_bytes=40,
    delivered_bytes=50,
    where="UDP 127.0.0.1:5001",
    time_limit_s=30,
    receiver_grace_s=5,
)


def test_the_first_cause_in_the_order_things_happen():
    assert first_failure(END) is None
    crashed_rx = replace(END, receiver=Exit(1, False, "exit 1: boom"))
    assert first_failure(crashed_rx) == Failure(ErrorKind.RECEIVER_FAILED, "receiver failed (exit 1: boom)")
    assert first_failure(replace(crashed_rx, receiver=Exit(-15, False, "killed by SIGTERM", True))) is None
    lingered = replace(crashed_rx, receiver=Exit(-15, True, "killed by SIGTERM"))
    assert (
        first_failure(lingered).message
        == "receiver did not exit within 5 s after the sender finished (it has 40 of 100 bytes in its output)"
    )
    crashed_tx = replace(lingered, sender=Exit(3, False, "exit 3: oops"))
    assert first_failure(crashed_tx) == Failure(ErrorKind.SENDER_FAILED, "sender failed (exit 3: oops)")
    timed_out = replace(crashed_tx, sender=Exit(-9, True, "killed by SIGKILL"), stopped=Stopped(ErrorKind.TIME_LIMIT))
    assert first_failure(timed_out).kind is ErrorKind.TIME_LIMIT
    left = replace(timed_out, stopped=Stopped(ErrorKind.RECEIVER_LEFT), output_bytes=0)
    assert first_failure(left).message == (
        "receiver exited (killed by SIGTERM) while the sender was still sending, "
        "and the receiver wrote nothing to its output file"
    )
    assert first_failure(replace(left, engine_exit="killed by SIGKILL")).kind is ErrorKind.ENGINE


def test_the_output_against_the_input():
    assert output_mismatch(100, None, None).kind is ErrorKind.NO_OUTPUT
    assert output_mismatch(0, 0, None) is None  # an empty file, received empty
    assert output_mismatch(100, 100, 7) == Failure(
        ErrorKind.OUTPUT_DIFFERS, "output differs from input at byte 7 (output 100 bytes, input 100)"
    )


def test_the_link_story_is_told_unless_the_engine_failed_or_nothing_crossed():
    stats = {
        "forward": {"packets_in": 10, "delivered": 7, "queue_drops": 3, "last_in_ns": 9, "last_out_ns": 8},
        "reverse": {"packets_in": 0},
    }
    assert (
        link_story(stats) == "forward 10 in, 7 delivered, 3 queue drops, including the last packet sent; reverse 0 in"
    )
    stats["forward"]["last_out_ns"] = 10
    assert link_story(stats, tail_missing=True).startswith("forward 10 in, 7 delivered, 3 queue drops, which took")

    def never():
        raise AssertionError("tail_missing asked for nothing")

    failure = Failure(ErrorKind.ENGINE, "engine failed: x")
    assert with_link_story(failure, stats, never) == failure
    quiet = Failure(ErrorKind.SENDER_FAILED, "sender failed (exit 3)")
    assert with_link_story(quiet, {"forward": {"packets_in": 0}}, never) == quiet
    told = with_link_story(quiet, stats, lambda: False)
    assert told.kind is ErrorKind.SENDER_FAILED and told.message.startswith(
        "sender failed (exit 3); link: forward 10 in"
    )


def test_the_kind_reaches_json_as_its_plain_words():
    from harness.transfer import TransferResult

    res = TransferResult(
        ok=False,
        verified=False,
        error="engine failed: x",
        error_kind=ErrorKind.ENGINE,
        backend="local",
        seed=1,
        size_bytes=1,
    )
    assert json.loads(json.dumps(res.to_dict()))["error_kind"] == "engine"
    assert ErrorKind("no progress") is ErrorKind.NO_PROGRESS  # read back from a row or a report
