"""Symptoms (grader/protocol/symptoms.py): each failure kind a run can end in, as the harness
records it, named as a marker names it, with its evidence; the checks after
`delivered` name slowness, waste, storms, the printed line and an unused path."""

import pytest
from types import SimpleNamespace

from grader.protocol.checks import Check
from grader.protocol.symptoms import diagnose, from_reason
from harness.monitor import ErrorKind

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

TRACE = 'Traceback (most recent call last):\n  File "Receiver2.py", line 9\nIndexError: list index out of range\n'
JAVA = 'Exception in thread "main" java.lang.NullPointerException: x\n\tat Sender2.main(Sender2.java:31)\n'


def program(code=0, timed_out=False, stderr=""):
    return SimpleNamespace(exit_code=code, timed_out=timed_out, stderr_tail=stderr)


def run(kind, verified=False, tx=None, rx=None):
    return SimpleNamespace(
        ok=False, error_kind=kind, verified=verified, sender=tx or program(), receiver=rx or program(None, True)
    )


def kind_of(r, detail="why") -> str:
    return diagnose([Check("delivered", False, detail)], [r]).kind


def test_each_way_a_run_ends_badly_has_its_symptom():
    assert kind_of(run(ErrorKind.TIME_LIMIT)) == "hang"
    assert kind_of(run(ErrorKind.TIME_LIMIT, verified=True, rx=program(0))) == "never-ends"
    assert (
        kind_of(
            run(ErrorKind.NO_PROGRESS), "stopped: no progress for 5 s (the sender only repeats packets it sent before)"
        )
        == "storm"
    )
    assert kind_of(run(ErrorKind.NO_PROGRESS), "stopped: no progress for 5 s (the sender has sent nothing)") == "stall"
    assert kind_of(run(ErrorKind.RECEIVER_LEFT, rx=program(0))) == "receiver-left"
    crash = diagnose([Check("delivered", False, "x")], [run(ErrorKind.RECEIVER_LEFT, rx=program(1, stderr=TRACE))])
    assert crash.kind == "crash" and crash.evidence.endswith("IndexError: list index out of range")
    java = diagnose([Check("delivered", False, "x")], [run(ErrorKind.SENDER_FAILED, tx=program(1, stderr=JAVA))])
    assert java.kind == "crash" and "NullPointerException: x (Sender2.java:31)" in java.evidence
    assert kind_of(run(ErrorKind.NOT_BOUND, rx=program(2))) == "never-bound"
    assert kind_of(run(ErrorKind.NOT_BOUND, rx=program(1, stderr=TRACE))) == "crash"
    assert kind_of(run(ErrorKind.UNREACHABLE)) == "bound-elsewhere"
    assert kind_of(run(ErrorKind.OUTPUT_DIFFERS)) == "wrong-bytes"
    assert kind_of(run(ErrorKind.NO_OUTPUT)) == "no-output"
    assert kind_of(run(ErrorKind.RECEIVER_LINGERED, verified=True)) == "lingered"
    assert kind_of(run(ErrorKind.RECEIVER_LINGERED)) == "sender-left"  # the receiver still waits for data
    assert kind_of(run(ErrorKind.NOT_FOUND)) == "missing"


def test_the_checks_after_delivery_and_scenarios_that_could_not_run():
    ok = SimpleNamespace(ok=True)

    def first_failing(check):
        return diagnose([Check("delivered", True, "fine"), check], [ok])

    assert first_failing(Check("goodput", False, "goodput 10 KB/s, 20% of ...")).kind == "slow"
    assert (
        first_failing(Check("retransmissions", False, "30 retransmissions on the wire, ... (at most 24 allowed)")).kind
        == "wasteful"
    )
    assert (
        first_failing(Check("sent", False, "900 data messages into the link, ... (at most 150 allowed)")).kind
        == "storm"
    )
    assert first_failing(Check("fast retransmit", False, "packet 9 resent ... after only 2")).kind == "early-resend"
    assert first_failing(Check("timer", False, "after a clean round-trip sample ...")).kind == "long-timer"
    assert first_failing(Check("printed", False, "x")).kind == "printed"
    assert first_failing(Check("paths", False, "x")).kind == "one-path"
    assert (
        diagnose([Check("conventions", False, "the battery fixes ..."), Check("delivered", True, "")], [ok]).kind
        == "convention"
    )
    assert diagnose([Check("delivered", True, "fine")], [ok]) is None
    assert from_reason("Sender3 does not compile: Sender3.java:2: error: ';' expected").kind == "build"
    assert from_reason("Sender2 is missing from the submission (expected ...)").kind == "missing"
    assert from_reason("not run: part 2's programs timed out or stalled in 2 scenarios already").kind == "skipped"
