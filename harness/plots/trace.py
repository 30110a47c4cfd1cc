"""One transfer as the link saw it: packets decoded, retransmissions, timeouts, window.

    tr = load(result_or_path, fmt="auto", ack="auto")
    tr.counts()          # what the picture shows, as numbers (tests compare them with the engine's stats)
    tr.packets           # every copy the link handled, decoded (Packet)
    tr.window            # (t, base, top, outstanding) after every send and ACK arrival
    tr.timeouts          # times of the inferred timeouts

Formats (reference/PROTOCOL.md): "comn" (2-byte sequence number, end-of-file byte; its
byte order found from the numbers), "comn-be", "comn-le", "ext", "mh" (the multihoming
starter's: 4-byte numbers, 4-byte ACKs), "mh-be", "mh-le", or "auto" (ext when the
messages carry its magic byte, mh when the ACKs are 4 bytes, else comn). Students'
programs use either byte order.

What is inferred, and how (nothing here comes from what a program prints):
- a *retransmission* is a data message for a packet number sent before (link-made
  duplicates are not transmissions);
- ACK numbers are *cumulative* (GBN, TCP-like) or *selective* (stop-and-wait, SR), told
  apart by whether the numbers the sender received ever went down (ack="auto");
- a *fast retransmit* resends the packet after a cumulative ACK alone, soon after that
  ACK reached the sender for the fourth time (the third duplicate): within `burst_gap`
  or half the time since the packet was last sent, whichever is longer (a
  GBN receiver sends duplicates too, but its sender waits for its timer and then
  resends the whole window); every other retransmission followed a
  *timeout*, and resends in a row (no new data between them, each within `burst_gap`
  s of the previous one, or the next packet with no ACK received in between) are one
  timeout: a GBN sender resending its whole window is one timeout, an SR sender
  resending one packet another, a stop-and-wait sender resending the same packet twice
  two.
- a resend's `dups` (cumulative ACKs): when ACKs reached the sender since its previous
  send and the last came within the fast retransmit's bound above (they prompted it),
  how many duplicates had arrived in a row, or 0 when a new ACK was among them (as
  NewReno resends on a partial ACK); None when no ACK prompted it (a timer).
  `early_fast_retransmits` finds resends after fewer than k duplicates, which a sender
  with fast retransmit at k must never send;
- the *window* at a moment is the packets sent and not yet acknowledged (outstanding),
  between `base` (the lowest of them) and `top` (the highest packet sent).

Times are seconds from the first packet into the link (from a pcap: out of it).
"""

from __future__ import annotations

import heapq
import os
import struct
from dataclasses import dataclass, field

from harness.plots.capture import Capture, Copy, read
from harness.procs import UsageError
from reference.wire import unwrap

FORMATS = ("auto", "comn", "comn-be", "comn-le", "ext", "mh", "mh-be", "mh-le")
ACK_MODES = ("auto", "cumulative", "selective")
BURST_GAP_S = 0.002
FAST_SHARE = 0.5  # a fast retransmit follows the third duplicate ACK within this share of
# the packet's time since it was first sent (a timer waits far longer)
DUP_ACKS = 3
EXT_MAGIC, EXT_DATA, EXT_ACK = 0xA1, 1, 2


@dataclass
class Packet:
    """One copy on the link, decoded. `kind`: "data", "ack" or "other" (not the format)."""

    copy: Copy
    kind: str
    seq: int | None = None
    eof: bool = False
    sack: tuple = ()
    retransmission: bool = False
    cause: str | None = None  # of a retransmission: "timeout" or "fast"
    dups: int | None = None  # of a resend an ACK prompted: the duplicate ACKs in a row before it
    t_in: float | None = None  # seconds from the capture's start
    t_out: float | None = None

    @property
    def t(self) -> float:
        """When the sender (data) or the link (ACK) handed it in; from a pcap, when it left."""
        return self.t_in if self.t_in is not None else self.t_out


@dataclass
class Transfer:
    packets: list[Packet]
    fmt: str
    ack: str
    capture: Capture
    window: list[tuple[float, int, int, int]] = field(default_factory=list)
    timeouts: list[float] = field(default_factory=list)

    @property
    def data(self) -> list[Packet]:
        return [p for p in self.packets if p.kind == "data"]

    @property
    def acks(self) -> list[Packet]:
        return [p for p in self.packets if p.kind == "ack"]

    def sent(self) -> list[Packet]:
        """Data messages the sender sent, in order (not the link's duplicates)."""
        return [p for p in self.data if not p.copy.duplicate]

    def counts(self) -> dict:
        """Per direction, the engine's counters as the capture shows them, and the
        protocol's events. From a pcap only `delivered` and the events are known."""
        by_dir = {}
        for d in ("forward", "reverse"):
            cs = [p.copy for p in self.packets if p.copy.direction == d]
            by_dir[d] = {
                "packets_in": sum(not c.duplicate for c in cs),
                "delivered": sum(c.fate == "delivered" for c in cs),
                "lost": sum(c.fate == "lost" for c in cs),
                "queue_drops": sum(c.fate == "queue_drop" for c in cs),
                "down_drops": sum(c.fate == "down_drop" for c in cs),
                "duplicated": sum(c.duplicate for c in cs),
                "corrupted": sum(c.corrupted for c in cs),
                "repeats": sum(c.repeat for c in cs),
            }
        sent = self.sent()
        return {
            **by_dir,
            "data_sent": len(sent),
            "data_packets": len({p.seq for p in sent}),
            "retransmissions": sum(p.retransmission for p in sent),
            "timeout_retransmissions": sum(p.cause == "timeout" for p in sent),
            "fast_retransmits": sum(p.cause == "fast" for p in sent),
            "timeouts": len(self.timeouts),
            "acks_sent": sum(not p.copy.duplicate for p in self.acks),
            "other": sum(p.kind == "other" for p in self.packets),
            "max_outstanding": max((w[3] for w in self.window), default=0),
        }


def load(source, fmt: str = "auto", ack: str = "auto", burst_gap: float = BURST_GAP_S) -> Transfer:
    """A transfer from a TransferResult (its trace, else its pcap), a trace or a pcap path,
    or a Capture already read."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; expected one of: {', '.join(FORMATS)}")
    if ack not in ACK_MODES:
        raise UsageError(f"unknown ACK meaning {ack!r}; expected one of: {', '.join(ACK_MODES)}")
    cap = source if isinstance(source, Capture) else read(capture_path(source))
    copies = sorted(cap.copies, key=lambda c: c.t_in if c.t_in is not None else c.t_out)
    t0 = next((c.t_in if c.t_in is not None else c.t_out for c in copies), 0.0)
    if fmt == "auto":
        fmt = detect_format(copies)
    elif fmt == "comn":
        fmt = comn_byte_order(copies)
    elif fmt == "mh":
        fmt = mh_byte_order(copies)
    packets = decode(copies, fmt, by_direction=cap.kind == "trace")
    for p in packets:
        p.t_in = None if p.copy.t_in is None else p.copy.t_in - t0
        p.t_out = None if p.copy.t_out is None else p.copy.t_out - t0
    if ack == "auto":
        ack = detect_ack_meaning(packets)
    tr = Transfer(packets, fmt, ack, cap)
    analyse(tr, burst_gap)
    return tr


def capture_path(source) -> str:
    """The file to read for `source`: a path, or a TransferResult's trace (else pcap)."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    trace, pcap = getattr(source, "trace", None), getattr(source, "pcap", None)
    if trace is None and pcap is None:
        raise UsageError(
            "this transfer kept no capture: run it with run_transfer(..., trace=PATH) "
            "(or pcap=PATH), or give a trace or pcap file"
        )
    if trace and os.path.exists(trace):
        return trace
    if pcap and os.path.exists(pcap):
        return pcap
    raise UsageError(
        f"the transfer's capture file {trace or pcap} is missing "
        f"(the {getattr(source, 'backend', '?')} backend wrote none, or it was removed)"
    )


# ---- decoding ----------------------------------------------------------------------


def _comn_fields(head: bytes, order: str) -> tuple[str, int, bool] | None:
    """(kind, 16-bit number, eof) of a COMN message's head, or None if it is not one."""
    if len(head) == 2:
        return "ack", struct.unpack(order + "H", head)[0], False
    if len(head) >= 3 and head[2] in (0, 1):
        return "data", struct.unpack_from(order + "H", head)[0], bool(head[2])
    return None


def _ext_fields(head: bytes) -> tuple[str, int, bool, tuple] | None:
    if len(head) < 12 or head[0] != EXT_MAGIC or head[1] not in (EXT_DATA, EXT_ACK):
        return None
    seq = struct.unpack_from(">I", head, 4)[0]
    if head[1] == EXT_DATA:
        return "data", seq, bool(head[2] & 1), ()
    ranges = []
    if len(head) > 12:
        for i in range(head[12]):
            at = 13 + 8 * i
            if at + 8 > len(head):
                break  # the trace keeps the first ranges only
            ranges.append(struct.unpack_from(">II", head, at))
    return "ack", seq, False, tuple(ranges)


def _mh_fields(head: bytes, order: str) -> tuple[str, int, bool] | None:
    """(kind, 32-bit number, eof) of a multihoming starter's message (reference/wire.py's
    "mh": seq u32, flags, length u16, MD5, payload; a 4-byte ACK), or None."""
    if len(head) == 4:
        return "ack", struct.unpack(order + "I", head)[0], False
    if len(head) >= 7 and head[4] in (0, 1):
        return "data", struct.unpack_from(order + "I", head)[0], bool(head[4])
    return None


def detect_format(copies: list[Copy]) -> str:
    """ext if most messages carry its magic byte; the multihoming starter's format if the
    answers are 4-byte ACKs; else COMN; each in the byte order it uses."""
    heads = [c.head for c in copies if c.head and not c.duplicate]
    if heads and sum(_ext_fields(h) is not None for h in heads) > len(heads) / 2:
        return "ext"
    answers = [c.head for c in copies if c.head and not c.duplicate and c.direction == "reverse"]
    if answers and sum(len(h) == 4 for h in answers) > len(answers) / 2:
        return mh_byte_order(copies)
    return comn_byte_order(copies)


def mh_byte_order(copies: list[Copy]) -> str:
    """The multihoming format's byte order under which the data numbers run smoothly."""
    heads = [c.head for c in copies if c.head and not c.duplicate]

    def roughness(order: str) -> int:
        seqs = [f[1] for h in heads if (f := _mh_fields(h, order)) and f[0] == "data"]
        return sum(min(abs(b - a), 1024) for a, b in zip(seqs, seqs[1:]))

    return "mh-le" if roughness("<") < roughness(">") else "mh-be"


def comn_byte_order(copies: list[Copy]) -> str:
    """The COMN byte order under which the data messages' numbers run most smoothly
    (packet 1 reads as 256 the wrong way round); big-endian when they can't tell."""
    heads = [c.head for c in copies if c.head and not c.duplicate]

    def roughness(order: str) -> int:
        seqs = [f[1] for h in heads if (f := _comn_fields(h, order)) and f[0] == "data"]
        return sum(min(abs(unwrap(b, a, 16) - a), 1024) for a, b in zip(seqs, seqs[1:]))

    return "comn-le" if roughness("<") < roughness(">") else "comn-be"


def decode(copies: list[Copy], fmt: str, by_direction: bool) -> list[Packet]:
    """Decode every copy, unwrapping numbers against the highest data number so far.
    by_direction: forward copies must be data and reverse ones ACKs (the trace knows
    directions; a pcap's packets are sorted by what they decode as)."""
    order = "<" if fmt in ("comn-le", "mh-le") else ">"
    bits = 32 if fmt == "ext" or fmt.startswith("mh") else 16

    def fields(c: Copy):
        if fmt == "ext":
            return _ext_fields(c.head)
        f = _mh_fields(c.head, order) if fmt.startswith("mh") else _comn_fields(c.head, order)
        return f and (*f, ())

    # numbers unwrap from the first data message's (0 from a whole transfer; a trace's
    # tail begins where the transfer was)
    highest = next((f[1] for c in copies if (f := fields(c)) and f[0] == "data"), 0)
    out = []
    for c in copies:
        f = fields(c)
        want = None if not by_direction else ("data" if c.direction == "forward" else "ack")
        if f is None or (want and f[0] != want):
            out.append(Packet(c, "other"))
            continue
        kind, raw, eof, sack = f
        seq = unwrap(raw, highest, bits)
        if kind == "data":
            if seq < 0:
                out.append(Packet(c, "other"))
                continue
            highest = max(highest, seq)
        sack = tuple((unwrap(a, highest, bits), unwrap(b, highest, bits)) for a, b in sack)
        out.append(Packet(c, kind, seq, eof, sack))
    return out


def detect_ack_meaning(packets: list[Packet]) -> str:
    """selective if the ACK numbers the sender received went down now and then (an SR or
    stop-and-wait receiver acknowledging a resent packet), else cumulative."""
    got = [
        p.seq for p in sorted((p for p in packets if p.kind == "ack" and p.t_out is not None), key=lambda p: p.t_out)
    ]
    drops = sum(b < a for a, b in zip(got, got[1:]))
    return "selective" if drops >= 2 and drops > 0.01 * len(got) else "cumulative"


# ---- the protocol's events -----------------------------------------------------------


def waits_after_samples(tr: Transfer) -> list[tuple[float, float]]:
    """(when, how long) for each timeout that is the first since an ACK every RTO
    estimator samples (a cumulative ACK newly covering only data sent once): how long
    the sender had been quiet before it (since its last send or ACK arrival), at most
    its RTO, which then follows that sample, not an earlier back-off. (A resend an ACK
    prompted, taken for a timeout, had next to no quiet before it.)"""
    if tr.ack != "cumulative":
        return []
    starts = set(tr.timeouts)
    events = [(p.t, 1, p) for p in tr.sent() if p.t is not None]
    events += [(p.t_out, 0, p) for p in tr.acks if p.t_out is not None and p.copy.fate == "delivered"]
    events.sort(key=lambda e: (e[0], e[1]))
    times_sent: dict[int, int] = {}
    cum, sampled, last, waits = -1, False, None, []
    for t, is_data, p in events:
        if is_data:
            if p.cause == "timeout" and p.t in starts:
                if sampled and last is not None:
                    waits.append((t, t - last))
                sampled = False  # the next one may be backed off, as it should
            times_sent[p.seq] = times_sent.get(p.seq, 0) + 1
        elif p.seq > cum:
            covered = [times_sent[s] for s in range(cum + 1, p.seq + 1) if s in times_sent]
            sampled = sampled or bool(covered) and all(n == 1 for n in covered)
            cum = p.seq
        last = t
    return waits


def early_fast_retransmits(tr: Transfer, k: int) -> list[Packet]:
    """Resends a cumulative ACK's duplicates prompted before the k-th in a row: a sender
    with fast retransmit at k duplicate ACKs resends on the k-th, never on fewer."""
    return [p for p in tr.sent() if p.retransmission and p.dups is not None and 0 < p.dups < k]


def fast_retransmit_use(tr: Transfer, k: int) -> tuple[int, int]:
    """(how many times k duplicate ACKs in a row reached the sender, how many resends
    they prompted): a sender with fast retransmit resends on them; one that waits for
    its timer never does."""
    if tr.ack != "cumulative":
        return 0, 0
    got = sorted((p.t_out, p.seq) for p in tr.acks if p.t_out is not None and p.copy.fate == "delivered")
    signalled, last, dups = 0, None, 0
    for _, seq in got:
        if seq == last:
            dups += 1
            signalled += dups == k
        elif last is None or seq > last:
            last, dups = seq, 0
    resent = sum(1 for p in tr.sent() if p.retransmission and p.dups is not None and p.dups >= k)
    return signalled, resent


def analyse(tr: Transfer, burst_gap: float) -> None:
    """Mark retransmissions and their cause, find timeouts, follow the window, in one
    sweep over sends (data in) and ACK arrivals (ACKs out), in time order."""
    events = [(p.t, 1, i) for i, p in enumerate(tr.packets) if p.kind == "data" and not p.copy.duplicate]
    events += [(p.t_out, 0, i) for i, p in enumerate(tr.packets) if p.kind == "ack" and p.t_out is not None]
    events.sort()
    last_sent: dict[int, float] = {}  # when each packet was last sent
    acked: set[int] = set()  # selective ACKs (and SACK ranges) received
    unacked: set[int] = set()
    lows: list[int] = []  # heap over unacked, stale entries skipped
    cum, top = -1, -1  # highest cumulative ACK, highest packet sent
    last_ack, dups, fast_done, third_dup_t = None, 0, None, None
    new_since = False  # a new cumulative ACK reached the sender since its last send
    last_ack_t = 0.0  # when the last ACK reached the sender
    prev_resend = None  # the last send, if a resend after a timeout
    fast = None  # the last send, if a fast retransmit (so far)
    acks_since = 0  # ACKs the sender received since its last send

    def continues(prev: Packet, p: Packet) -> bool:
        # the next packet of one burst: right behind it, or (a slow sender) with no ACK between
        return p.t - prev.t <= burst_gap or (acks_since == 0 and p.seq == prev.seq + 1)

    for t, is_data, i in events:
        p = tr.packets[i]
        if is_data:
            resend = p.seq in last_sent
            if fast is not None and resend and continues(fast, p):
                # it was the start of a timeout's burst after all
                fast.cause, prev_resend, fast_done = "timeout", fast, None
                tr.timeouts.append(fast.t)
            fast = None
            if resend:
                p.retransmission = True
                prompt = max(burst_gap, FAST_SHARE * (t - last_sent[p.seq]))
                if tr.ack == "cumulative" and acks_since and t - last_ack_t <= prompt:
                    p.dups = 0 if new_since else dups
                if (
                    tr.ack == "cumulative"
                    and last_ack is not None
                    and p.seq == last_ack + 1
                    and dups >= DUP_ACKS
                    and fast_done != last_ack
                    and t - third_dup_t <= max(burst_gap, FAST_SHARE * (t - last_sent[p.seq]))
                ):
                    p.cause, fast_done, fast = "fast", last_ack, p
                    prev_resend = None
                else:
                    p.cause = "timeout"
                    if prev_resend is None or not continues(prev_resend, p):
                        tr.timeouts.append(t)
                    prev_resend = p
            else:
                prev_resend = None
            last_sent[p.seq] = t
            acks_since, new_since = 0, False
            top = max(top, p.seq)
            if p.seq > cum and p.seq not in acked and p.seq not in unacked:
                unacked.add(p.seq)
                heapq.heappush(lows, p.seq)
        else:
            acks_since += 1
            last_ack_t = t
            if p.seq == last_ack:
                dups += 1
                if dups == DUP_ACKS:
                    third_dup_t = t
            elif last_ack is None or p.seq > last_ack:
                last_ack, dups, new_since = p.seq, 0, True
            covered = list(p.sack)
            if tr.ack == "cumulative" and p.seq > cum:
                covered.append((cum + 1, p.seq))
                cum = p.seq
            elif tr.ack == "selective":
                covered.append((p.seq, p.seq))
            for a, b in covered:
                span = range(a, b + 1) if b - a < len(unacked) else [s for s in unacked if a <= s <= b]
                gone = [s for s in span if s in unacked]
                unacked.difference_update(gone)
                acked.update(gone)
        while lows and lows[0] not in unacked:
            heapq.heappop(lows)
        base = lows[0] if lows else top + 1
        tr.window.append((t, base, top, len(unacked)))
