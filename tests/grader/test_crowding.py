"""No notebook grade from a crowded machine (grader/disturbance.py CpuPressure,
grader/notebook/autograde.py): the machine's CPU pressure read from outside every jail, and the
second grading, alone, of a student whose re-measured cell failed on disturbed figures.
The whole path with real kernels is in tests/course/test_jailed_autograde.py and
`python -m bench.notebooks` (BENCHMARKS.md); here autograde_one and the re-measurement
are scripted, since a crowded machine cannot be ordered on cue."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from grader.notebook import autograde as A
from grader.protocol.checks import Check
from grader.disturbance import (
    MACHINES,
    OWN,
    PASSED,
    Admission,
    CpuPressure,
    cpu_waiting_avg10,
    cpu_waiting_us,
    crowded_failure,
    crowding,
    unsettled,
    verdict,
)
from grader.notebook.remeasure import Verdict
from harness.monitor import ErrorKind

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

PSI = "some avg10=95.82 avg60=79.54 avg300=37.05 total={some}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"


def test_cpu_pressure_is_the_share_of_wall_time_some_task_waited(tmp_path):
    psi = tmp_path / "cpu"
    psi.write_text(PSI.format(some=1_000_000))
    assert cpu_waiting_us(str(psi)) == 1_000_000
    now = [100.0]
    pressure = CpuPressure(str(psi), clock=lambda: now[0])
    now[0] = 110.0
    psi.write_text(PSI.format(some=7_000_000))  # 6 s of waiting in 10 s
    assert pressure.share() == pytest.approx(0.6)
    psi.write_text(PSI.format(some=41_000_000))  # 40 s in 10 s (several tasks): capped
    assert pressure.share() == 1.0
    assert cpu_waiting_us(str(tmp_path / "none")) is None
    psi.write_text("garbage\n")
    assert cpu_waiting_us(str(psi)) is None and CpuPressure(str(psi)).share() is None


def runs(*kinds, sent=5, receiver_ran=True):
    """Runs that ended so (None: ok), as the grader's checks see them: `sent` packets into
    the link, and a receiver that ran until stopped or exited before it bound."""
    receiver = SimpleNamespace(exit_code=None if receiver_ran else 1, timed_out=receiver_ran)
    return [
        SimpleNamespace(ok=k is None, error_kind=k, packets={"forward": sent, "reverse": 0}, receiver=receiver)
        for k in kinds
    ]


class Fixed:
    """A CpuPressure whose share is given."""

    def __init__(self, share):
        self.value = share

    def share(self):
        return self.value


def test_crowding_is_any_pool_and_names_its_share_or_the_missing_figure(tmp_path):
    assert crowding(Fixed(0.2), 4) == "graded 4 at a time, tasks waited for a CPU 20% of the time"  # any pool
    assert crowding(Fixed(0.93), 4) == "graded 4 at a time, tasks waited for a CPU 93% of the time"
    assert crowding(Fixed(0.93), 1) == ""  # alone: its own programs may be what keeps the CPUs busy
    assert crowding(Fixed(None), 1) == ""
    assert crowding(Fixed(None), 3) == "graded 3 at a time, how busy unknown (no /proc/pressure/cpu)"


def test_a_student_graded_on_a_crowded_machine_is_graded_again_alone(tmp_path, monkeypatch):
    """In a pool of 3, bea's cell fails on disturbed figures: after the pool she is graded
    again, alone, and that second grading is hers; ann (passed) and cid (failed on quiet
    figures) are graded once. What is still disturbed alone stays not graded."""
    calls = []
    verdicts = {"ann": [False], "bea": [True, False], "cid": [False]}  # disturbed, per grading

    monkeypatch.setattr(A, "Admission", lambda: Admission(settle=0, waiting=lambda: 0.0))
    monkeypatch.setattr(A, "available", lambda: "")
    monkeypatch.setattr(A, "_create_gradebook", lambda course: None)
    monkeypatch.setattr(A, "set_cell_scores", lambda *a: None)
    monkeypatch.setattr(A, "autograde_one", lambda course, assignment, student, *rest: A.Autograded(student, True, 1.0))

    def remeasure(course, assignment, student, hidden, crowded, kernel_crowded):
        calls.append(student)
        disturbed = verdicts[student].pop(0)
        passed = student == "ann" and not disturbed
        return [
            Verdict(
                "results_sheet",
                "test_q1_remeasured",
                "q1",
                passed,
                "" if passed else "why",
                disturbed="in 1 of the grader's 4 runs the engine sent packets up to 3.0 ms late" if disturbed else "",
            )
        ]

    monkeypatch.setattr(A, "remeasure", remeasure)
    done = []
    results = A.autograde_students(str(tmp_path), "comn", ["ann", "bea", "cid"], jobs=3, done=done.append)
    assert sorted(calls[:3]) == ["ann", "bea", "cid"] and calls[3:] == ["bea"]
    by = {r.student: r for r in results}
    assert [r.student for r in results] == ["ann", "bea", "cid"]
    assert (
        by["bea"].again
        == ("graded again, alone: in 1 of the grader's 4 runs the engine sent packets up to 3.0 ms late")
        and not by["bea"].disturbed()
    )
    assert by["ann"].again == by["cid"].again == "" and len(done) == 4

    calls.clear()  # in a pool of 4, graded again 2 at a time, then alone
    verdicts.update({"ann": [True, True, False], "bea": [True, True, True], "cid": [False]})
    results = A.autograde_students(str(tmp_path), "comn", ["ann", "bea", "cid"], jobs=4)
    assert sorted(calls) == ["ann", "ann", "ann", "bea", "bea", "bea", "cid"]
    by = {r.student: r for r in results}
    assert by["ann"].again.startswith("graded again, alone: ") and not by["ann"].disturbed()
    assert by["bea"].again.startswith("graded again, alone: ") and by["bea"].disturbed()  # still: not graded

    calls.clear()  # alone from the start: graded alone once more (a host's steal passes with time)
    verdicts.update({"bea": [True, False]})
    results = A.autograde_students(str(tmp_path), "comn", ["bea"], jobs=1)
    assert calls == ["bea", "bea"] and not results[0].disturbed() and results[0].again.startswith("graded again, alone")
    assert A.regrade_rounds(1) == A.regrade_rounds(2) == A.regrade_rounds(3) == [1]
    assert A.regrade_rounds(6) == [3, 1] and A.regrade_rounds(8) == [4, 2, 1]


def test_a_pool_grows_only_while_the_machine_stays_uncrowded(tmp_path):
    """Admission: the first grading starts at once; the next waits until the last start
    is `settle` s old and the 10-second CPU wait is under the bar; ending one makes room."""
    psi = tmp_path / "cpu"
    psi.write_text(PSI.replace("avg10=95.82", "avg10=12.00").format(some=0))
    assert cpu_waiting_avg10(str(psi)) == pytest.approx(0.12)
    assert cpu_waiting_avg10(str(tmp_path / "none")) is None
    now, waiting, slept = [0.0], [0.1], []
    gate = Admission(
        settle=10.0,
        bar=0.5,
        waiting=lambda: waiting[0],
        clock=lambda: now[0],
        sleep=lambda s: (slept.append(s), now.__setitem__(0, now[0] + s)),
    )
    with gate:  # alone: at once, whatever the machine says
        assert gate.running == 1 and slept == []
        waiting[0] = 0.9
        assert not gate._admit()  # crowded (and too soon)
        now[0] = 30.0
        assert not gate._admit()  # crowded
        waiting[0] = 0.2
        with gate:  # uncrowded and settled
            assert gate.running == 2 and slept == []
            with gate:  # too soon after the last start: waits 10 s
                assert gate.running == 3 and now[0] == 40.0 and slept == [1.0] * 10
    assert gate.running == 0
    waiting[0] = 1.0
    with gate:  # none running: starts however crowded
        assert gate.running == 1
    none = Admission(waiting=lambda: None, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    with none, none:  # no PSI: only the settling time
        assert none.running == 2


def test_only_what_crowding_can_fail_is_failed_by_crowding():
    """A crowded pool can make a program resend, fall behind, give up on a starved peer or
    bind late; not write wrong bytes, bind where the link cannot deliver, or hang. Such a
    failure in a pool is confirmed alone however busy the pool looked: four gradings on
    two cores starved a correct busy-polling sender while tasks waited under half the time."""
    crowded = "graded 2 at a time, tasks waited for a CPU 90% of the time"
    timing = [Check("delivered", True, ""), Check("retransmissions", False, "12 for 0 losses")]
    assert crowded_failure(timing, runs(None), Fixed(0.9), 2) == crowded
    assert crowded_failure(timing + [Check("goodput", False, "40%")], runs(None, None), Fixed(0.9), 2) == crowded
    assert crowded_failure(timing, runs(None), Fixed(0.9), 1) == ""  # alone
    assert (
        crowded_failure(timing, runs(None), Fixed(0.2), 4)
        == "graded 4 at a time, tasks waited for a CPU 20% of the time"
    )
    assert (
        crowded_failure(timing, runs(None), Fixed(None), 3)
        == "graded 3 at a time, how busy unknown (no /proc/pressure/cpu)"
    )
    assert crowded_failure([Check("goodput", True, "")], runs(None), Fixed(0.9), 2) == ""  # a pass stands
    gave_up = [Check("delivered", False, "receiver did not exit within 5 s after the sender finished")]
    for kind in (ErrorKind.RECEIVER_LINGERED, ErrorKind.SENDER_FAILED, ErrorKind.RECEIVER_LEFT, ErrorKind.NOT_BOUND):
        assert crowded_failure(gave_up, runs(None, kind), Fixed(0.9), 2) == crowded, kind
    for kind in (
        ErrorKind.OUTPUT_DIFFERS,
        ErrorKind.TIME_LIMIT,
        ErrorKind.NO_PROGRESS,
        ErrorKind.UNREACHABLE,
        ErrorKind.NOT_FOUND,
    ):
        assert (
            crowded_failure([Check("delivered", False, "3 bytes differ")] + timing, runs(kind), Fixed(0.9), 2) == ""
        ), kind
    assert crowded_failure([Check("conventions", False, "EOF flag 255")], runs(None), Fixed(0.9), 2) == ""


def test_a_disturbed_run_counts_only_where_lag_could_not_have_decided_it():
    """A late run may meet other draws of the link, worse or luckier: a student's pass and
    a failure lag cannot cause stand; a failure beside a late reference (its bar may be
    luckier) and a pass against one (its bar may be lower) are the machine's word."""
    asked = []

    def judged(verdict):
        return lambda: asked.append(verdict) or verdict

    student, reference = "the student's run was late", "the reference's run was late"
    assert unsettled(None, None, judged(MACHINES)) is None and asked == []  # quiet: not even asked
    assert unsettled(student, None, judged(PASSED)) is None
    assert unsettled(student, None, judged(MACHINES)) == student
    assert unsettled(student, None, judged(OWN)) is None  # wrong bytes, a hang: the programs'
    assert unsettled(None, reference, judged(MACHINES)) == reference
    assert unsettled(None, reference, judged(OWN)) is None
    assert unsettled(None, reference, judged(PASSED)) == reference
    assert unsettled(student, reference, judged(PASSED)) == reference  # the bar was lowered
    assert unsettled(student, reference, judged(MACHINES)) == student
    assert unsettled(student, reference, judged(OWN)) is None
    assert len(asked) == 9


def test_which_failures_a_disturbed_machine_can_cause():
    failed = [Check("delivered", False, "why")]
    assert verdict([Check("delivered", True, ""), Check("goodput", True, "")], runs(None)) == PASSED
    assert verdict([Check("delivered", True, ""), Check("goodput", False, "40%")], runs(None)) == MACHINES
    assert verdict([Check("retransmissions", False, "12 for 0 losses")], runs(None)) == MACHINES
    for kind in (
        ErrorKind.RECEIVER_LINGERED,
        ErrorKind.RECEIVER_LEFT,
        ErrorKind.SENDER_FAILED,
        ErrorKind.RECEIVER_FAILED,
        ErrorKind.NOT_BOUND,
        ErrorKind.NO_OUTPUT,
        ErrorKind.ENGINE,
    ):
        assert verdict(failed, runs(kind)) == MACHINES, kind
    for kind in (
        ErrorKind.OUTPUT_DIFFERS,
        ErrorKind.TIME_LIMIT,
        ErrorKind.NO_PROGRESS,
        ErrorKind.UNREACHABLE,
        ErrorKind.NOT_FOUND,
    ):
        assert verdict(failed, runs(kind)) == OWN, kind
        assert verdict(failed + [Check("goodput", False, "40%")], runs(None, kind)) == OWN, kind
    assert verdict([Check("printed", False, "no statistics line")], runs(None)) == OWN
    # a crash before the link carried anything (a syntax error): the program's, not the machine's
    assert verdict(failed, runs(ErrorKind.SENDER_FAILED, sent=0)) == OWN
    assert verdict(failed, runs(ErrorKind.NOT_BOUND, receiver_ran=False)) == OWN
    assert verdict(failed, runs(ErrorKind.SENDER_FAILED, sent=None)) == MACHINES  # no counters: not known
    assert verdict(failed, runs(ErrorKind.RECEIVER_FAILED, sent=0)) == MACHINES  # a receiver's timer


def test_when_only_the_graders_runs_were_disturbed_only_the_remeasurement_is_done_again(tmp_path, monkeypatch):
    """The kernel's table stands when only the grader's own runs were late: the second
    round re-measures (tens of seconds saved a student: no notebook run again); a kernel
    the machine may have disturbed (crowded, or late as it says) runs again whole."""
    kernels, remeasured = [], []
    ours = "in 3 of the grader's 8 runs the engine sent packets up to 2.5 ms late"
    plan = {"eve": [(ours, True), ("", False)], "fay": [("tasks waited for a CPU 70% of the time", False), ("", False)]}
    monkeypatch.setattr(A, "Admission", lambda: Admission(settle=0, waiting=lambda: 0.0))
    monkeypatch.setattr(A, "available", lambda: "")
    monkeypatch.setattr(A, "_create_gradebook", lambda course: None)
    monkeypatch.setattr(A, "set_cell_scores", lambda *a: None)

    def autograde_one(course, assignment, student, *rest):
        kernels.append(student)
        return A.Autograded(student, True, 1.0)

    monkeypatch.setattr(A, "autograde_one", autograde_one)

    def remeasure(course, assignment, student, hidden, crowded, kernel_crowded):
        remeasured.append(student)
        disturbed, ours_only = plan[student].pop(0)
        return [
            Verdict("results_sheet", "test_q1_remeasured", "q1", False, "why", disturbed=disturbed, ours_only=ours_only)
        ]

    monkeypatch.setattr(A, "remeasure", remeasure)
    results = A.autograde_students(str(tmp_path), "comn", ["eve", "fay"], jobs=2)
    assert sorted(kernels) == ["eve", "fay", "fay"] and sorted(remeasured) == ["eve", "eve", "fay", "fay"]
    by = {r.student: r for r in results}
    assert by["eve"].again == f"re-measured again, alone: {ours}" and not by["eve"].disturbed()
    assert by["fay"].again == "graded again, alone: tasks waited for a CPU 70% of the time"


def test_a_hang_after_the_receivers_own_timer_fired_is_the_machines_to_cause():
    """A receiver that gives up after seconds of silence exits with its timer's exception
    while its sender, starved in a crowded pool, paused; the sender then sends to nobody
    until the no-progress rule or the limit stops it. That failure is graded again alone;
    a hang with the receiver still running, or gone without a timer's exception, is not."""
    from grader.disturbance import machine_can_fail, timer_exit

    failed = [Check("delivered", False, "stopped: no progress")]

    def hung(kind, code, stderr, timed_out=False):
        receiver = SimpleNamespace(exit_code=code, timed_out=timed_out, stderr_tail=stderr)
        return [SimpleNamespace(ok=False, error_kind=kind, packets={"forward": 40, "reverse": 20}, receiver=receiver)]

    trace = "Traceback (most recent call last):\n  ...\nTimeoutError: timed out\n"
    for kind in (ErrorKind.NO_PROGRESS, ErrorKind.TIME_LIMIT):
        assert machine_can_fail(failed, hung(kind, 1, trace))
        assert machine_can_fail(failed, hung(kind, 1, "java.net.SocketTimeoutException: Receive timed out"))
        assert not machine_can_fail(failed, hung(kind, None, "", timed_out=True))  # still running: a hang
        assert not machine_can_fail(failed, hung(kind, 1, "IndexError: list index out of range"))
        assert not machine_can_fail(failed, hung(kind, 0, ""))
    assert not machine_can_fail(failed, hung(ErrorKind.OUTPUT_DIFFERS, 1, trace))  # wrong bytes stay wrong
    assert not timer_exit(None) and not timer_exit(SimpleNamespace(exit_code=1, timed_out=True, stderr_tail=trace))


def test_what_went_into_an_outage_and_each_paths_share_are_judged_from_the_engines_counters():
    """sent_vs_ref counts the data messages into the link, those dropped on a down path
    too (which no retransmission count sees); path_share each path's share of them."""
    from grader.protocol.checks import path_share, sent

    def run(into, paths=None, ok=True):
        link = {"paths": {name: {"forward": {"packets_in": n}} for name, n in (paths or {}).items()}}
        return SimpleNamespace(ok=ok, packets={"forward": into}, link=link)

    ref = run(139)
    assert sent([run(150)], [ref], 1.15, 10).passed
    storm = sent([run(224)], [ref], 1.15, 10)
    assert not storm.passed and "224 data messages" in storm.detail and "169.85" in storm.detail
    assert sent([run(900, ok=False)], [ref], 1.15, 10).passed  # a failed run is `delivered`'s to judge
    assert path_share([run(0, {"p0": 128, "p1": 128})], 0.2).passed
    one = path_share([run(0, {"p0": 19, "p1": 81})], 0.24)
    assert not one.passed and "path p0 carried 19 of the 100" in one.detail
    assert path_share([run(0, {"p0": 5})], 0.2).passed  # one path: nothing to share
