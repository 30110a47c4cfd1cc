"""No grade from a disturbed run.

The engine knows when the machine disturbed a run: it measures how late each packet
left against its due time, and a p99 lag above a millisecond, or above 2% of the round
trip on a longer one (harness/transfer.py, lag_bar_us), means the link's timing was not
the battery's. A student's protocol graded on such a run can time out, resend or fall
behind the reference for the machine's sake, not its own; a reference run so disturbed
would skew every comparison with it.

A pass on a disturbed run of the student's stands, and so does a failure lag cannot
cause, such as wrong bytes or a hang (`unsettled`: a pass is never a lost point). Any other
disturbed run is run again with the same seed (the engine draws the same link
decisions: the replay command still reproduces what is graded), up to TRIES times. A
scenario still disturbed after that is not scored: it is marked `ungraded`, and once the
class's pool has finished, grade_all grades those scenarios again one submission at a
time (the quietest the machine can be), up to AGAIN_ALONE times, since a VM's host
steals CPU time in bursts (`rdtlab check` does the same for a student). What is still
disturbed then stays ungraded:
0 points, said as such in the feedback, the class CSV and the grader's output, for the
instructor to grade again on a quieter machine.

A scenario the course does not score (beyond the spec) only reports: its one run stands,
disturbed or not, and a failure the machine may have caused says so (grade.py).

The engine runs at a higher priority than the programs (harness/engine.py), so a
student's own busy loop does not disturb the link it is graded on.

The engine does not see a machine too crowded to run the students' programs on time
(a spurious timeout on a clean link, a notebook's figures fallen short). So a grading
that FAILS in the grader's own pool (--jobs above one) in a way crowding can cause is
not a grade there (`crowding`), however busy the pool looked: the scenario (when what
failed is what crowding can fail: `machine_can_fail`), or the student's re-measured
notebook cell (when every number it misses is one crowding could have made:
grader.notebook.remeasure.explained), is graded again with fewer at a time, down to alone, once
the pool has finished. A pass stands, and alone only the engine's lag counts: there the
student's own programs may be what keeps the CPUs busy.

A notebook's figures are measured in the student's kernel, where the grader sees no
run. So a re-measured cell that fails is graded again (its kernel run anew) also when
the kernel says the machine disturbed its own runs of that question: the engine late,
or the VM's host stealing CPU time, which PSI does not show
(grader.notebook.remeasure.disturbed_kernel: its word can only buy a second grading). The
students so disturbed are graded alone at least once.
"""

from __future__ import annotations

import threading
import time

from harness.monitor import ErrorKind

TRIES = 3
AGAIN_ALONE = 3  # gradings alone of what stayed disturbed on every try (grade.grade_again_alone)


def why(run) -> str | None:
    """The engine's word that the machine delayed the run's packets, or None."""
    return getattr(run, "lag_warning", None) if run is not None else None


# A run's verdict, as far as a disturbance goes (`verdict`).
PASSED, MACHINES, OWN = "passed", "a failure the machine can cause", "a failure of the programs' own"


def unsettled(student: str | None, reference: str | None, outcome) -> str | None:
    """The disturbance that keeps a run from counting (the engine's word), or None.
    Every check asks the student's run to do at least as well as a bar: a fixed one, or
    the reference's figures on the same link and seed. A late run may meet other draws of
    the link than a quiet one (a packet late on a shared queue, a resend more), so its
    figures can come out worse or luckier. So a pass on a disturbed student's run stands
    (a pass is never a lost point), but not one against a disturbed reference (its bar
    may be lower); a failure that a disturbed run, the student's or the reference's,
    could have made is run again; and a failure lag cannot cause (`machine_can_fail`:
    wrong bytes, a hang) is the programs' own. `outcome()` says which the run is
    (`verdict`): PASSED, MACHINES or OWN."""
    if not student and not reference:
        return None
    return {PASSED: reference, MACHINES: student or reference, OWN: None}[outcome()]


def verdict(checks, runs) -> str:
    """PASSED, MACHINES or OWN: whether `checks` (of `runs`) passed, else whether a
    disturbed machine could have failed them (`machine_can_fail`)."""
    if all(c.passed for c in checks):
        return PASSED
    return MACHINES if machine_can_fail(checks, runs) else OWN


UNGRADED = "not graded: every try of this scenario was disturbed by the machine"


def ungraded_reason(disturbance: str) -> str:
    return f"{UNGRADED} ({disturbance}); it will be graded again on a quieter machine"


# ---- the machine's CPU pressure, seen from outside the jails ---------------------------
# Linux's pressure stall information: the time some runnable task waited for a CPU. A
# notebook's measurements run in its own kernel, whose figures the grader cannot trust,
# so whether the machine crowded them is read here, around the student's whole grading.
PRESSURE = "/proc/pressure/cpu"
# A share above this of the last 10 s with tasks waiting for a CPU: the machine is
# crowded, and the pool starts no more notebooks (`Admission`; BENCHMARKS.md,
# "Notebooks": on a machine crowded past it honest notebooks lost points). Only the rate
# rides on it: a failure in the pool is graded again however busy the pool looked
# (`crowding`). 0.65 grades a class faster than 0.5, every point still scored
# (BENCHMARKS.md, "Notebooks").
CROWDED = 0.65


def _some(path: str | None) -> dict[str, str] | None:
    """The fields of the PSI file's `some` line (avg10, avg60, avg300, total), or None."""
    try:
        with open(path or PRESSURE) as f:
            for line in f:
                if line.startswith("some "):
                    return dict(kv.split("=") for kv in line.split()[1:])
    except (OSError, ValueError):
        return None
    return None


def cpu_waiting_us(path: str | None = None) -> int | None:
    """Microseconds some task has waited for a CPU since boot, or None without PSI."""
    some = _some(path)
    try:
        return int(some["total"]) if some else None
    except (KeyError, ValueError):
        return None


def cpu_waiting_avg10(path: str | None = None) -> float | None:
    """The share of the last ~10 s that some task waited for a CPU, or None without PSI."""
    some = _some(path)
    try:
        return float(some["avg10"]) / 100 if some else None
    except (KeyError, ValueError):
        return None


class Admission:
    """When the next grading of a pool may start: at once when none runs; else when the
    last start is `settle` seconds old (the 10-second average lags what a start adds) and
    tasks waited for a CPU less than `bar` of the last 10 s. So a pool asked for more at
    once than the machine takes grows only as far as it stays uncrowded. Without PSI,
    the pool's size alone bounds it."""

    def __init__(
        self,
        settle: float = 10.0,
        bar: float = CROWDED,
        waiting=cpu_waiting_avg10,
        clock=time.monotonic,
        sleep=time.sleep,
    ):
        self.settle, self.bar, self._waiting, self._clock, self._sleep = settle, bar, waiting, clock, sleep
        self.running, self._last, self._lock = 0, None, threading.Lock()

    def _admit(self) -> bool:
        with self._lock:
            now = self._clock()
            if self.running and (now - self._last < self.settle or (self._waiting() or 0.0) >= self.bar):
                return False
            self.running, self._last = self.running + 1, now
            return True

    def __enter__(self) -> "Admission":
        while not self._admit():
            self._sleep(1.0)
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            self.running -= 1


class CpuPressure:
    """The share of wall time, from now to `share()`, that some task waited for a CPU."""

    def __init__(self, path: str | None = None, clock=time.monotonic):
        self._path, self._clock = path or PRESSURE, clock
        self._start, self._waited = clock(), cpu_waiting_us(self._path)

    def share(self) -> float | None:
        now, waited = self._clock(), cpu_waiting_us(self._path)
        if waited is None or self._waited is None or now <= self._start:
            return None
        return min(1.0, (waited - self._waited) / 1e6 / (now - self._start))


# What a disturbed machine (a crowded one, or a late engine) can fail on its own.
# Checks: a program held off the CPU, or whose packets came late, times out and resends,
# or falls behind the reference. Runs (the "delivered" check's): a sender gives up on a
# starved peer (its tries run out) and the receiver is left waiting, or gone; a
# program's own timer exception ends it; a receiver binds late; the engine fails.
# Wrong bytes, a missing program, a bind where the link cannot deliver and a convention
# are the program's, and so are hangs (the time limit, no progress): their limits are
# generous (seconds, against milliseconds of lag), and grading them again would cost
# each its whole limit a second time, unless the receiver's own timer ended it first
# (`own_failure`). So is a program that crashed before the link carried anything for it
# (`crashed_first`).
TIMING_CHECKS = frozenset({"retransmissions", "goodput", "sent", "paths"})
OWN_RUN_FAILURES = frozenset(
    {ErrorKind.OUTPUT_DIFFERS, ErrorKind.NOT_FOUND, ErrorKind.UNREACHABLE, ErrorKind.TIME_LIMIT, ErrorKind.NO_PROGRESS}
)


def crashed_first(run) -> bool:
    """A failed `run` whose program exited with an error before any timer of its could
    matter: a sender that put no packet into the link (a syntax error, a bad argument, a
    missing import), or a receiver that exited before it bound. Crowding slows a program;
    it does not make one crash before its first packet. (The engine takes in what is
    waiting when it is stopped, so a packet sent just before a crash is counted.)"""
    if run.error_kind == ErrorKind.SENDER_FAILED:
        return (run.packets or {}).get("forward") == 0
    if run.error_kind == ErrorKind.NOT_BOUND:
        return run.receiver is not None and run.receiver.exit_code is not None and not run.receiver.timed_out
    return False


# What a program's own timer says when it fires unhandled: Python's (socket.timeout is
# TimeoutError), Java's, and the words a C, Rust or Go program prints for EAGAIN.
TIMER_EXCEPTIONS = (
    "TimeoutError",
    "socket.timeout",
    "SocketTimeoutException",
    "timed out",
    "Resource temporarily unavailable",
    "WouldBlock",
    "i/o timeout",
)


def timer_exit(program) -> bool:
    """A program that exited on its own with an error its own timer raised (a receiver
    that gives up after seconds of silence): a starved peer can cause that."""
    return (
        program is not None
        and not program.timed_out
        and program.exit_code not in (None, 0)
        and any(word in (program.stderr_tail or "") for word in TIMER_EXCEPTIONS)
    )


def own_failure(run) -> bool:
    """A failed run the programs caused whatever the machine did: wrong bytes, a hang and
    the rest of OWN_RUN_FAILURES, or a crash before the first packet. Not a hang that
    began when the receiver's own timer ended it: its sender, starved while the receiver
    waited, was left sending to nobody until the limit (a receiver that gives up after
    5 s of silence, graded beside five others)."""
    if crashed_first(run):
        return True
    if run.error_kind in (ErrorKind.TIME_LIMIT, ErrorKind.NO_PROGRESS) and timer_exit(run.receiver):
        return False
    return run.error_kind in OWN_RUN_FAILURES


def machine_can_fail(checks, runs) -> bool:
    """Whether every failed check of `checks` (of `runs`) is one a disturbed machine can
    fail on its own."""
    for c in checks:
        if c.passed:
            continue
        if c.name == "delivered":
            if any(own_failure(r) for r in runs if not r.ok):
                return False
        elif c.name not in TIMING_CHECKS:
            return False
    return True


def crowded_failure(checks, runs, pressure: CpuPressure, at_once: int) -> str:
    """Why a scenario's failed `checks` (of `runs`) are not a grade yet (`crowding`), or ''."""
    if verdict(checks, runs) != MACHINES:
        return ""
    return crowding(pressure, at_once)


def crowding(pressure: CpuPressure, at_once: int) -> str:
    """Why a failure in the grader's own pool (`at_once` gradings at a time) may be the
    machine's, or '': in a pool, always. The pool's CPU pressure is no bar: four gradings
    on two cores starved a correct busy-polling program into spurious resends while tasks
    waited for a CPU under half the time (BENCHMARKS.md, "Grading"); it is said for the
    record. Alone there is nobody to make room for:
    the student's own programs may keep the CPUs busy (busy polling), and the engine's lag
    still speaks for the link."""
    if at_once <= 1:
        return ""
    share = pressure.share()
    busy = (
        f"tasks waited for a CPU {share:.0%} of the time" if share is not None else f"how busy unknown (no {PRESSURE})"
    )
    return f"graded {at_once} at a time, {busy}"
