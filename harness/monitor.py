"""The rules that end a transfer and name why it failed, without any I/O.

harness/transfer.py runs the processes and the engine; it feeds a `Monitor` the time
and the engine's counters at every check, and hands `first_failure` the facts of how
the run ended. What comes back is typed: an `ErrorKind` for code to branch on, and the
one-line message users read (in `TransferResult.error`, CSVs and feedback), which
nothing should parse. Everything here is tested on counters recorded from real
failures (tests/harness/test_monitor.py), no processes needed.

The no-progress rule: progress is new payload into the link in either direction (the
engine counts repeats apart; a receiver's new answer says it got something new), or
growth of the receiver's output. A check interval in which the link withheld what the
programs wait for does not count towards the no-progress window (`link_withheld`): at
high loss a healthy sender may repeat its last packets for many seconds while every
answer is lost. The window itself comes from harness/time_limits.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Callable

WATCH_S = 0.5  # how often a running transfer is checked (progress, engine, receiver)


class ErrorKind(StrEnum):
    """Why a transfer failed: one per cause a user is told about."""

    ENGINE = "engine"  # the link engine failed to start or died
    NOT_FOUND = "command not found"  # the sender's or receiver's program
    NOT_BOUND = "receiver did not bind"  # exited before binding, or bound too late
    UNREACHABLE = "receiver unreachable"  # bound where the link cannot deliver
    TIME_LIMIT = "time limit"  # the sender still ran at the time limit
    NO_PROGRESS = "no progress"  # stopped by the no-progress rule
    RECEIVER_LEFT = "receiver left"  # exited, output incomplete, sender sending
    SENDER_FAILED = "sender failed"  # the sender exited non-zero
    RECEIVER_LINGERED = "receiver lingered"  # did not exit within the grace after the sender
    RECEIVER_FAILED = "receiver failed"  # the receiver exited non-zero
    NO_OUTPUT = "no output"  # the receiver wrote nothing
    OUTPUT_DIFFERS = "output differs"  # the output is not the file sent


@dataclass(frozen=True)
class Failure:
    kind: ErrorKind
    message: str  # one line, for people

    def plus(self, more: str) -> "Failure":
        return replace(self, message=self.message + more)


@dataclass(frozen=True)
class Stopped:
    """The harness stopped the run while the sender still ran."""

    kind: ErrorKind  # TIME_LIMIT, ENGINE, NO_PROGRESS or RECEIVER_LEFT
    quiet_s: float = 0.0  # NO_PROGRESS: how long nothing happened
    what: str = ""  # NO_PROGRESS: what the sender was doing
    receiver_exited: bool = False  # NO_PROGRESS: whether the receiver had already exited


def new_payloads(direction: dict) -> int:
    """Packets into the link whose payload it had not seen before in that direction."""
    return (direction.get("packets_in") or 0) - (direction.get("repeats") or 0)


def link_withheld(before: dict, now: dict) -> bool:
    """Between two readings of the engine's counters: the sender kept sending, nothing
    reached it from the receiver, and either the receiver answered (every answer was
    lost) or nothing reached the receiver (every packet was lost). The programs are
    waiting on the link then, not stuck. A hung sender that ignores answers that reach
    it, or a receiver that stops answering what reaches it, is not covered."""

    def grew(direction: str, key: str) -> bool:
        return ((now.get(direction) or {}).get(key) or 0) > ((before.get(direction) or {}).get(key) or 0)

    return (
        grew("forward", "packets_in")
        and not grew("reverse", "delivered")
        and (grew("reverse", "packets_in") or not grew("forward", "delivered"))
    )


class Monitor:
    """The time limit and the no-progress rule over one run, fed readings.

    `time_limit_s` from `start_ns`; `no_progress_s` 0 never stops for progress. Times
    are monotonic nanoseconds, the clock of the engine's `last_in_ns`."""

    def __init__(self, time_limit_s: float, no_progress_s: float, start_ns: int, interval_s: float = WATCH_S):
        self.deadline_ns = start_ns + time_limit_s * 1e9
        self.no_progress_s = no_progress_s
        self.interval_s = interval_s
        self._last_progress_ns = start_ns
        self._seen = (-1, -1, -1)
        self._before: dict | None = None  # the counters at the previous reading
        self._answered = 0  # reverse packets delivered, at the last progress

    def wait_s(self, now_ns: int) -> float:
        """How long to wait for the sender to exit before the next check."""
        return max(0.0, min((self.deadline_ns - now_ns) / 1e9, self.interval_s))

    def check(
        self,
        now_ns: int,
        *,
        engine_exited: bool = False,
        receiver_left: bool = False,
        stats: dict | None = None,
        output_bytes: int = 0,
        receiver_exited: bool = False,
    ) -> Stopped | None:
        """One check while the sender runs, in the order things matter: the engine gone,
        the time limit, a receiver gone with its output incomplete (`receiver_left`),
        then progress by the engine's counters (`stats`, None without an engine) and
        the receiver's output size. None: carry on."""
        if engine_exited:
            return Stopped(ErrorKind.ENGINE)
        if now_ns >= self.deadline_ns:
            return Stopped(ErrorKind.TIME_LIMIT)
        if receiver_left:
            return Stopped(ErrorKind.RECEIVER_LEFT)
        if stats is None or not self.no_progress_s:
            return None
        fwd, rev = stats.get("forward") or {}, stats.get("reverse") or {}
        current = (new_payloads(fwd), new_payloads(rev), output_bytes)
        withheld = self._before is not None and link_withheld(self._before, stats)
        self._before = stats
        if any(c > s for c, s in zip(current, self._seen)) or withheld:
            self._seen, self._last_progress_ns, self._answered = current, now_ns, rev.get("delivered") or 0
            return None
        quiet_s = (now_ns - self._last_progress_ns) / 1e9
        if quiet_s < self.no_progress_s:
            return None
        silent = (now_ns - fwd["last_in_ns"]) / 1e9 if fwd.get("last_in_ns") else None
        answers = (rev.get("delivered") or 0) - self._answered
        what = (
            "the sender never sent a packet"
            if not fwd.get("packets_in")
            else f"the sender has sent nothing for {silent:.1f} s"
            if silent and silent >= 2 * self.interval_s
            else "the sender only repeats packets it sent before"
            + (f", though {answers} answers reached it" if answers > 0 else "")
        )
        return Stopped(ErrorKind.NO_PROGRESS, quiet_s=quiet_s, what=what, receiver_exited=receiver_exited)


# ---- how a run ended, and its first cause of failure ---------------------------------


@dataclass(frozen=True)
class Exit:
    """How one program ended."""

    code: int | None
    timed_out: bool  # stopped by the harness (time limit, no progress, grace)
    described: str = ""  # procs.describe_exit's words for it ("exit 3: ...")
    stopped_when_done: bool = False  # the receiver, stopped once its output was complete


@dataclass(frozen=True)
class RunEnd:
    """The facts of a run's end that decide its verdict."""

    stopped: Stopped | None  # why the harness stopped the sender; None: it exited
    sender: Exit
    receiver: Exit
    size: int  # bytes sent
    output_bytes: int  # in the receiver's output at the end
    delivered_bytes: int  # forward payload the link delivered
    where: str  # where the receiver bound ("UDP 127.0.0.1:5001")
    time_limit_s: float
    receiver_grace_s: float
    engine_exit: str | None = None  # how the engine exited during the run, if it did


def first_failure(end: RunEnd) -> Failure | None:
    """The cause, in the order things happen: the engine gone, the run stopped (time
    limit, no progress, receiver gone), the sender crashed, then the receiver. None
    when both programs ended well (the output is verified apart)."""
    if end.engine_exit is not None:
        return Failure(ErrorKind.ENGINE, f"engine failed: it exited during the transfer ({end.engine_exit})")
    have = f"{end.output_bytes} of {end.size} bytes in its output"
    stopped, tx, rx = end.stopped, end.sender, end.receiver
    if stopped is not None and stopped.kind is ErrorKind.NO_PROGRESS:
        return Failure(
            ErrorKind.NO_PROGRESS,
            f"stopped: no progress for {stopped.quiet_s:.0f} s ({stopped.what}); the receiver bound "
            f"{end.where} {'had exited' if stopped.receiver_exited else 'is running'} with {have}, "
            f"{end.delivered_bytes} bytes delivered to it",
        )
    if stopped is not None and stopped.kind is ErrorKind.RECEIVER_LEFT:
        return Failure(
            ErrorKind.RECEIVER_LEFT,
            f"receiver exited ({rx.described}) while the sender was still sending, "
            + (f"with {have}" if end.output_bytes else "and the receiver wrote nothing to its output file"),
        )
    if tx.timed_out:
        return Failure(
            ErrorKind.TIME_LIMIT,
            f"timed out after {end.time_limit_s:g} s (the sender was still running; the receiver has {have})",
        )
    if tx.code != 0:
        return Failure(ErrorKind.SENDER_FAILED, f"sender failed ({tx.described})")
    if rx.timed_out:
        return Failure(
            ErrorKind.RECEIVER_LINGERED,
            f"receiver did not exit within {end.receiver_grace_s:g} s after the sender finished (it has {have})",
        )
    if rx.code != 0 and not rx.stopped_when_done:
        return Failure(ErrorKind.RECEIVER_FAILED, f"receiver failed ({rx.described})")
    return None


def output_mismatch(size: int, output_bytes: int | None, first_difference: int | None) -> Failure | None:
    """The output against the input: `output_bytes` None when there is no output file,
    `first_difference` the offset of the first differing byte (None: identical)."""
    if output_bytes is None or (output_bytes == 0 and size > 0):
        return Failure(ErrorKind.NO_OUTPUT, "receiver wrote nothing to its output file")
    if first_difference is None:
        return None
    return Failure(
        ErrorKind.OUTPUT_DIFFERS,
        f"output differs from input at byte {first_difference} (output {output_bytes} bytes, input {size})",
    )


def with_link_story(failure: Failure, stats: dict | None, tail_missing: Callable[[], bool]) -> Failure:
    """A failure's line ends with what the link did, when it carried anything (not for
    the engine's own failures). `tail_missing` is asked only then."""
    if (
        failure.kind is ErrorKind.ENGINE
        or not stats
        or not any((stats.get(d) or {}).get("packets_in") for d in ("forward", "reverse"))
    ):
        return failure
    return failure.plus(f"; link: {link_story(stats, tail_missing())}")


def link_story(stats: dict, tail_missing: bool = False) -> str:
    """What the link did, for a failure line: 'forward 102 in, 79 delivered, 23 queue
    drops, including the last packet sent; reverse 0 in'. The last packet counts as
    dropped when the counters show it (it came in after the last one left); with
    `tail_missing` (the output lacks only the file's end) the drops are said to have
    taken the end of the file."""
    parts = []
    for d in ("forward", "reverse"):
        c = stats.get(d) or {}
        words = [f"{c.get('packets_in', 0)} in"]
        if c.get("packets_in"):
            words.append(f"{c.get('delivered', 0)} delivered")
        for key, name in (
            ("lost", "lost"),
            ("queue_drops", "queue drops"),
            ("down_drops", "dropped on a down path"),
            ("corrupted", "corrupted"),
            ("io_errors", "not deliverable"),
        ):
            if c.get(key):
                words.append(f"{c[key]} {name}")
        last_in, last_out = c.get("last_in_ns"), c.get("last_out_ns")
        dropped = c.get("lost") or c.get("queue_drops") or c.get("down_drops")
        if last_in and (last_out is None or last_in > last_out) and dropped:
            words[-1] += ", including the last packet sent"
        elif d == "forward" and tail_missing and dropped:
            words[-1] += ", which took the end of the file"
        parts.append(f"{d} " + ", ".join(words))
    return "; ".join(parts)
