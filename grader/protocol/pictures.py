"""The picture of a failed scenario: the time-sequence graph of the student's failing run
(harness/plots, from the engine's trace: sends, drops, resends, ACKs, timeouts), marked
where its symptom points, beside the reference's run on the same link and seed. Small
PNGs, embedded in feedback.html so it reads offline.
"""

from __future__ import annotations

import base64
import os

from harness.plots.trace import DUP_ACKS, early_fast_retransmits, waits_after_samples
from harness.procs import UsageError

# a page that fails every scenario stays small: ~25 KB a picture at this size
FIGSIZE, DPI = (9, 5), 56
MAX_BYTES = 8 << 20  # larger transfers are traced by their end only (the wrap's 64 MiB: 130,000 packets)
TAIL_LINES = 24_000  # the end's trace lines: about 6,000 messages and their ACKs


def tail_of(size: int) -> int | None:
    """How many trace lines to keep of a transfer of `size` bytes: all (None), or its end."""
    return TAIL_LINES if size > MAX_BYTES else None


_traces: list = []


def trace_folder() -> str:
    """This process's folder of traces kept beyond an output folder: the reference runs'
    (for the pictures), and runs a check reads (removed when it exits; named for
    sandbox.sweep_scratch, which removes it after a hard kill)."""
    if not _traces:
        import atexit
        import shutil
        import tempfile

        _traces.append(tempfile.mkdtemp(prefix=f"rdt-reftraces-{os.getpid()}-"))
        atexit.register(shutil.rmtree, _traces[0], True)
    return _traces[0]


def mark_of(kind: str | None, tr) -> tuple[float, str] | None:
    """(time in ms, label) where a symptom shows in a transfer, or None."""
    data = [p for p in tr.packets if p.kind == "data" and p.t is not None and not p.copy.duplicate]
    if not data:
        return None
    if kind in ("stall", "storm", "hang", "never-ends", "sender-left"):
        first_sends: dict = {}
        for p in data:
            first_sends.setdefault(p.seq, p.t)
        last_new = max(first_sends.values())
        return last_new * 1000, "last new data sent: nothing new after this"
    if kind in ("receiver-left", "crash", "lingered"):
        acks = [p.t for p in tr.packets if p.kind == "ack" and p.t is not None]
        if acks:
            return max(acks) * 1000, "the receiver's last ACK"
    if kind == "wrong-bytes":
        damaged = [p.t for p in data if p.copy.corrupted]
        if damaged:
            return min(damaged) * 1000, "first damaged message delivered"
    if kind == "early-resend":
        early = early_fast_retransmits(tr, DUP_ACKS)
        if early:
            return min(p.t for p in early) * 1000, "first resend after too few duplicate ACKs"
    if kind == "long-timer":
        longest = max(waits_after_samples(tr), key=lambda tw: tw[1], default=None)
        if longest:
            return longest[0] * 1000, "a long timeout after a clean round-trip sample"
    if kind in ("wasteful", "slow"):
        resent = [p.t for p in data if p.retransmission]
        if resent:
            return min(resent) * 1000, "first resend"
    return None


def draw(trace: str, png: str, title: str, kind: str | None = None) -> str | None:
    """The transfer in `trace` drawn to `png` (its name returned), marked for `kind`;
    None when there is nothing to draw (the trace is missing or unreadable)."""
    from harness.plots import tsg
    from harness.plots.trace import load

    try:
        tr = load(trace)
    except (UsageError, OSError, ValueError):
        return None
    fig = tsg.draw(tr, title=title, figsize=FIGSIZE, flight=len(tr.packets) < 3000)
    where = mark_of(kind, tr)
    if where is not None:
        ax = fig.axes[0]
        ax.axvline(where[0], color="crimson", linewidth=2.0, alpha=0.8, label=where[1])
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    fig.savefig(png, dpi=DPI)
    return os.path.basename(png)


def embedded(folder: str, name: str | None) -> str | None:
    """A PNG of `folder` as a data: URL (None if there is none)."""
    if not name:
        return None
    try:
        with open(os.path.join(folder, name), "rb") as f:
            return "data:image/png;base64," + base64.b64encode(f.read()).decode()
    except OSError:
        return None
