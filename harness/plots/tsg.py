"""The time-sequence graph of one transfer, drawn from what crossed the link.

    fig = draw(result_or_path, fmt="auto", focus="timeout", window=64, save="gbn.png")

Top panel: packet number against time. Data messages as the sender handed them to the
link (blue ▶, resends orange: after a timeout, or brown: fast retransmit), ACKs as the
sender received them (green ◀), a thin grey line for each packet's time in the link,
and what the link did: lost ✕, dropped at the queue limit ▼, delivered damaged ✱, copied
◇; dotted lines at the inferred timeouts; the shaded band is the window (packets sent
and not yet acknowledged). Bottom panel: how many packets were outstanding.
Returns a matplotlib Figure (not registered with pyplot: nothing leaks between calls;
Jupyter shows it when it is a cell's value).
"""

from __future__ import annotations

import os

from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from harness.plots.inline import LaidOut
from harness.plots.trace import Transfer, load
from harness.procs import UsageError

MS = 1000.0
# (label, colour, marker, hollow, size): one style per kind of mark, so the legend explains them.
STYLE = {
    "data": ("data sent", "tab:blue", ">", False, 4),
    "timeout": ("resent after a timeout", "tab:orange", ">", False, 6),
    "fast": ("fast retransmit (3 dup ACKs)", "saddlebrown", ">", False, 6),
    "ack": ("ACK received by the sender", "tab:green", "<", False, 4),
    "lost_data": ("data lost", "red", "x", False, 9),
    "lost_ack": ("ACK lost", "red", "o", True, 7),
    "qdrop_data": ("data dropped: queue full", "purple", "v", False, 7),
    "qdrop_ack": ("ACK dropped: queue full", "purple", "v", True, 7),
    "down": ("dropped: path down", "black", "x", False, 7),
    "corrupt": ("delivered corrupted", "magenta", "*", False, 10),
    "dup": ("copy made by the link", "darkcyan", "D", True, 6),
}


def draw(
    source,
    fmt: str = "auto",
    *,
    ack: str = "auto",
    focus=None,
    xlim=None,
    ylim=None,
    title: str | None = None,
    window: int | None = None,
    save: str | os.PathLike | None = None,
    flight: bool = True,
    figsize=(12, 7),
    dpi: int = 120,
) -> Figure:
    """Draw one transfer. `source`: a TransferResult run with trace= (or pcap=), a trace
    or pcap path, or a Transfer from `load`. `fmt`/`ack`: see harness.plots.trace.
    `focus`: "timeout" (the first one) or k (the k-th, from 0) zooms on a timeout, from
    the first sending of what it resent to when that was acknowledged. `xlim`: (start,
    end) in ms; `ylim`: packet numbers. `window`: the configured window, drawn as a
    line in the lower panel. `save`: write a PNG there. `flight`: the lines showing each
    packet's time in the link."""
    tr = source if isinstance(source, Transfer) else load(source, fmt=fmt, ack=ack)
    fig = LaidOut(figsize=figsize, layout="constrained")
    ax, wax = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    note = ""
    if focus is not None and xlim is None:
        xlim = focus_range(tr, focus)
        note = (
            " (no timeout to focus on)" if xlim is None else f" (zoom on timeout {0 if focus == 'timeout' else focus})"
        )
    _window_band(ax, wax, tr, window)
    if flight:
        _flight_lines(ax, tr)
    _marks(ax, tr)
    for k, t in enumerate(tr.timeouts):
        ax.axvline(t * MS, color="0.35", linestyle=":", linewidth=1.2, label="timeout (inferred)" if k == 0 else None)
    if not tr.packets:
        ax.text(0.5, 0.5, "nothing crossed the link", transform=ax.transAxes, ha="center", fontsize=14)
    if xlim is not None:
        ax.set_xlim(*xlim)
        ax.set_ylim(*(ylim or _seq_range(tr, xlim)))
    elif ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_ylabel("packet number")
    wax.set_ylabel("outstanding\npackets")
    wax.set_xlabel(
        "time since the first packet (ms)" + ("" if tr.capture.kind == "trace" else ", as packets left the link (pcap)")
    )
    for a in (ax, wax):
        a.grid(True, alpha=0.3)
        a.yaxis.set_major_locator(MaxNLocator(integer=True))
    if ax.get_legend_handles_labels()[0]:  # a transfer that sent nothing has no marks to explain
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    fig.suptitle((title or _default_title(tr)) + note + "\n" + describe(tr), fontsize=11)
    if save is not None:
        try:
            fig.savefig(save, dpi=dpi)
        except OSError as e:
            raise UsageError(f"cannot write the picture to {os.fspath(save)}: {e.strerror}") from None
    return fig


def describe(tr: Transfer) -> str:
    """One line of what the picture shows, in numbers."""
    c = tr.counts()
    f, r = c["forward"], c["reverse"]
    parts = [
        f"{_n(c['data_sent'], 'data message')} for {_n(c['data_packets'], 'packet')}",
        f"{c['retransmissions']} resent ({_n(c['timeouts'], 'timeout')}"
        + (f", {_n(c['fast_retransmits'], 'fast retransmit')})" if c["fast_retransmits"] else ")"),
        _n(c["acks_sent"], "ACK"),
    ]
    if tr.capture.kind == "trace":
        parts.append(f"lost {f['lost']} data + {r['lost']} ACKs")
        for key, what in (
            ("queue_drops", "queue drops"),
            ("corrupted", "corrupted"),
            ("duplicated", "duplicated"),
            ("down_drops", "dropped on a down path"),
        ):
            if f[key] or r[key]:
                parts.append(f"{f[key] + r[key]} {what}")
    else:
        parts.append("drops unknown (pcap: delivered packets only)")
    if c["other"]:
        parts.append(f"{c['other']} packets not in the {tr.fmt} format")
    return ", ".join(parts)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _default_title(tr: Transfer) -> str:
    seed = f"seed {tr.capture.seed}, " if tr.capture.seed is not None else ""
    return f"Time-sequence graph ({seed}{tr.fmt} format, {tr.ack} ACKs)"


def _scatter(ax, key: str, xs: list, ys: list) -> None:
    if not xs:
        return
    label, colour, marker, hollow, size = STYLE[key]
    ax.plot(
        [x * MS for x in xs],
        ys,
        linestyle="none",
        marker=marker,
        markersize=size,
        label=label,
        color=colour,
        markerfacecolor="none" if hollow else colour,
        markeredgewidth=1.5 if hollow or marker == "x" else 0.6,
        zorder=3 if key in ("data", "ack") else 4,
    )


def _marks(ax, tr: Transfer) -> None:
    groups: dict[str, tuple[list, list]] = {k: ([], []) for k in STYLE}

    def put(key, t, seq):
        if t is not None:
            groups[key][0].append(t)
            groups[key][1].append(seq)

    for p in tr.packets:
        if p.kind not in ("data", "ack"):
            continue
        c = p.copy
        if p.kind == "data" and not c.duplicate:
            put(p.cause or "data", p.t, p.seq)
        if p.kind == "ack" and c.fate == "delivered":
            put("ack", p.t_out, p.seq)
        kind = "data" if p.kind == "data" else "ack"
        if c.fate == "lost":
            put(f"lost_{kind}", p.t_in, p.seq)
        elif c.fate == "queue_drop":
            put(f"qdrop_{kind}", p.t_in, p.seq)
        elif c.fate == "down_drop":
            put("down", p.t_out if p.t_out is not None else p.t_in, p.seq)
        if c.corrupted and c.fate == "delivered":
            put("corrupt", p.t_out, p.seq)
        if c.duplicate and c.fate == "delivered":
            put("dup", p.t_out, p.seq)
    for key, (xs, ys) in groups.items():
        _scatter(ax, key, xs, ys)


def _flight_lines(ax, tr: Transfer) -> None:
    """A packet's time in the link: from into it to out of it (trace only)."""
    segs = [
        [(p.t_in * MS, p.seq), (p.t_out * MS, p.seq)]
        for p in tr.packets
        if p.kind in ("data", "ack") and p.t_in is not None and p.t_out is not None
    ]
    if segs:
        ax.add_collection(
            LineCollection(segs, colors="0.55", linewidths=0.8, alpha=0.6, zorder=2, label="time in the link")
        )


def _window_band(ax, wax, tr: Transfer, window: int | None) -> None:
    if tr.window:
        ts = [w[0] * MS for w in tr.window]
        low = [w[1] - 0.5 for w in tr.window]
        high = [max(w[2], w[1] - 1) + 0.5 for w in tr.window]
        ax.fill_between(
            ts,
            low,
            high,
            step="post",
            color="tab:blue",
            alpha=0.12,
            linewidth=0,
            label="window: sent, not yet ACKed",
            zorder=1,
        )
        wax.step(ts, [w[3] for w in tr.window], where="post", color="tab:blue", linewidth=1.2)
    if window is not None:
        wax.axhline(window, color="0.3", linestyle="--", linewidth=1)
        wax.text(1.0, window, f" W = {window}", transform=wax.get_yaxis_transform(), va="center", fontsize=9)
    wax.set_ylim(bottom=0)


def focus_range(tr: Transfer, focus) -> tuple[float, float] | None:
    """(start, end) in ms around a timeout: from the first sending of the packets it
    resent to when the first of them was acknowledged (a GBN sender's cumulative ACKs
    then stream in), with a margin."""
    k = 0 if focus == "timeout" else focus
    if not isinstance(k, int) or isinstance(k, bool):
        raise UsageError(f'focus must be "timeout" or the number of a timeout (0, 1, ...), not {focus!r}')
    if not 0 <= k < len(tr.timeouts):
        return None
    t = tr.timeouts[k]
    t_next = tr.timeouts[k + 1] if k + 1 < len(tr.timeouts) else float("inf")
    burst = [p for p in tr.sent() if p.cause == "timeout" and t <= p.t < t_next]
    seqs = {p.seq for p in burst}
    first = min(p.t for p in tr.sent() if p.seq in seqs)
    done = next((w[0] for w in tr.window if w[0] > t and w[1] > min(seqs)), None)
    done = max(done if done is not None else t + (t - first), max(p.t for p in burst))
    margin = 0.12 * (done - first)
    return ((first - margin) * MS, (done + margin) * MS)


def _seq_range(tr: Transfer, xlim: tuple[float, float]) -> tuple[float, float]:
    lo, hi = xlim[0] / MS, xlim[1] / MS
    seqs = [
        p.seq
        for p in tr.packets
        if p.kind in ("data", "ack") and any(t is not None and lo <= t <= hi for t in (p.t_in, p.t_out))
    ]
    seqs += [v for w in tr.window if lo <= w[0] <= hi for v in (w[1], w[2])]
    if not seqs:
        return (-1, 1)
    pad = max(1.0, 0.04 * (max(seqs) - min(seqs)))
    return (min(seqs) - pad, max(seqs) + pad)
