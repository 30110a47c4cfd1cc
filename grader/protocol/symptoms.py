"""What went wrong in a failed scenario, named as a marker names it: one typed symptom
per failed scenario, with the evidence that decided it, built from what the run already
knows (the harness's ErrorKind and the programs' exits, the check that failed, the
engine's counters). Sans-IO: facts in, a Symptom out; the feedback and the class view
show it, the class view counts who shows each.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from harness.monitor import ErrorKind
from harness.procs import crash_line

# kind -> what a student reads as the headline
KINDS = {
    "missing": "a program is missing",
    "build": "a program does not build",
    "crash": "a program crashed",
    "never-bound": "the receiver never bound its port",
    "bound-elsewhere": "the receiver bound where the link cannot deliver",
    "hang": "the transfer hung until the time limit",
    "stall": "the transfer stalled: nothing new for seconds",
    "storm": "a storm of resends",
    "never-ends": "the sender never ended once its receiver had gone",
    "receiver-left": "the receiver left before the file was complete",
    "lingered": "the receiver did not exit after the transfer",
    "sender-left": "the sender ended before the whole file had arrived",
    "no-output": "the receiver wrote nothing",
    "wrong-bytes": "the output is not the file sent",
    "convention": "a convention the course fixes is not followed",
    "slow": "slower than the reference",
    "wasteful": "more resends than needed",
    "early-resend": "a fast retransmit before the k-th duplicate ACK",
    "long-timer": "the timeout stays long once the round trip is measured again",
    "printed": "the sender's last line is not the required one",
    "one-path": "a path left (nearly) unused",
    "skipped": "not run after earlier hangs",
    "failed": "the transfer failed",
}
# a storm: a no-progress stop while the sender only repeats itself, or resends this many
# times what the bar allows
STORM_FACTOR = 5.0


@dataclass(frozen=True)
class Symptom:
    kind: str
    title: str
    evidence: str

    def to_dict(self) -> dict:
        return asdict(self)


def symptom(kind: str, evidence: str) -> Symptom:
    return Symptom(kind, KINDS[kind], evidence)


def from_reason(reason: str) -> Symptom:
    """A scenario that could not run: a program missing or not built, or skipped."""
    if "does not compile" in reason or reason.startswith("the build ("):
        return symptom("build", reason)
    if reason.startswith("not run:"):
        return symptom("skipped", reason)
    return symptom("missing", reason)


def _crash_line(program) -> str:
    tail = [ln.strip() for ln in (getattr(program, "stderr_tail", "") or "").splitlines() if ln.strip()]
    return crash_line(tail) or (tail[-1] if tail else f"exit {getattr(program, 'exit_code', '?')}")


def _crashed(program) -> bool:
    return (
        program is not None
        and program.exit_code not in (None, 0)
        and not program.timed_out
        and any(
            word in (program.stderr_tail or "")
            for word in ("Traceback", "Exception", "panic", "Error", "error", "Segmentation", "core dumped")
        )
    )


def of_run(run, detail: str) -> Symptom:
    """The symptom of a run that failed `delivered` (detail: its one-line reason)."""
    kind = run.error_kind
    tx, rx = run.sender, run.receiver
    if kind == ErrorKind.NOT_FOUND:
        return symptom("missing", detail)
    if kind == ErrorKind.NOT_BOUND:
        return (
            symptom("crash", f"the receiver crashed before binding: {_crash_line(rx)}")
            if _crashed(rx)
            else symptom("never-bound", detail)
        )
    if kind == ErrorKind.UNREACHABLE:
        return symptom("bound-elsewhere", detail)
    if kind in (ErrorKind.SENDER_FAILED, ErrorKind.RECEIVER_FAILED):
        who, program = ("sender", tx) if kind == ErrorKind.SENDER_FAILED else ("receiver", rx)
        return symptom("crash", f"the {who} exited with an error: {_crash_line(program)}")
    if kind == ErrorKind.RECEIVER_LEFT:
        return (
            symptom("crash", f"the receiver crashed while the sender was sending: {_crash_line(rx)}")
            if _crashed(rx)
            else symptom("receiver-left", detail)
        )
    if kind == ErrorKind.RECEIVER_LINGERED:
        return symptom("lingered" if run.verified else "sender-left", detail)
    if kind == ErrorKind.NO_OUTPUT:
        return symptom("no-output", detail)
    if kind == ErrorKind.OUTPUT_DIFFERS:
        return symptom("wrong-bytes", detail)
    if kind == ErrorKind.TIME_LIMIT:
        if run.verified and rx is not None and rx.exit_code is not None and not rx.timed_out:
            return symptom("never-ends", detail)
        return symptom("hang", detail)
    if kind == ErrorKind.NO_PROGRESS:
        if run.verified and rx is not None and rx.exit_code is not None and not rx.timed_out:
            return symptom("never-ends", detail)
        return symptom("storm" if "only repeats packets" in detail else "stall", detail)
    return symptom("failed", detail)


def _ratio(detail: str) -> float | None:
    """`N ... (at most M allowed)` in a check's detail: N / M."""
    import re

    m = re.match(r"^(\d+)\b.*at most ([\d.]+) allowed", detail)
    if not m or float(m.group(2)) <= 0:
        return None
    return int(m.group(1)) / float(m.group(2))


def diagnose(checks, runs) -> Symptom | None:
    """The symptom of a scenario from its checks (grader/protocol/checks.py: `delivered` first)
    and its runs; None when every check passed."""
    failed = [c for c in checks if not c.passed]
    if not failed:
        return None
    first = failed[0]
    if first.name == "conventions":
        return symptom("convention", first.detail)
    if first.name == "delivered":
        bad = next((r for r in runs if not r.ok), None)
        return of_run(bad, first.detail) if bad is not None else symptom("failed", first.detail)
    if first.name == "goodput":
        return symptom("slow", first.detail)
    if first.name in ("retransmissions", "sent"):
        ratio = _ratio(first.detail)
        return symptom("storm" if ratio and ratio >= STORM_FACTOR else "wasteful", first.detail)
    if first.name == "fast retransmit":
        return symptom("early-resend", first.detail)
    if first.name == "timer":
        return symptom("long-timer", first.detail)
    if first.name == "printed":
        return symptom("printed", first.detail)
    if first.name == "paths":
        return symptom("one-path", first.detail)
    return symptom("failed", f"{first.name}: {first.detail}")
