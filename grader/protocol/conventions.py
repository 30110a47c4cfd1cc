"""Which of the COMN spec's valid readings a submission speaks, part by part, so the
reference programs it meets speak the same (reference/comn/conventions.py): byte
order, numbering (counting, or rdt3.0's alternating bit in stop-and-wait), the first
number (0 or 1), the end-of-file byte, and whether an ACK names the message received
or the next one expected.

The probe is passive first: the student's own pair sends a three-message file over a
clean link with the engine tracing every packet, and one run tells all of it at once
(every combination of order, numbering and first number is held against the numbers
the sender put on the wire; the last message's flag is the EOF byte; the first ACK,
read the same way, names the first message or the next). Only when that run cannot
tell (a program missing, or the pair broken before three messages went out) are the
remaining combinations tried, jointly, against the reference, the likeliest first,
with a bound on the tries. A battery may fix a convention ([conventions] in its TOML):
the reference then speaks the fixed one, and a departure is reported as wrong.
"""

from __future__ import annotations

import itertools
import os
import struct
import tempfile
from dataclasses import dataclass, field, replace

from harness import Link, Program, run_transfer
from harness.plots.capture import read_trace

from reference.comn.conventions import CHOICES, Conventions

from grader.protocol.battery import Battery
from grader.protocol.scenario import Side, isolation

PROBE_BYTES = 3000  # three messages, the last one short: 0, 1, 0 (alternating) or 0, 1, 2 (counting)
PROBE_LINK = Link("delay 1ms", shared_queue=False)
PROBE_TIME_LIMIT = 5.0
MAX_TRIES = 4  # active tries per part when the wire could not tell ...
MAX_TRIES_IN_ALL = 8  # ... and per submission: a broken submission costs seconds, not minutes
NAMES = {
    "byte_order": "byte order",
    "numbering": "numbering",
    "first_seq": "first sequence number",
    "eof_value": "end-of-file byte",
    "ack": "ACK meaning",
}


@dataclass
class Detected:
    """One part's conventions, how they were found, and departures from the battery's fixed ones."""

    conventions: Conventions
    how: str  # "wire", "tried", "default"
    why: str
    departures: list[str] = field(default_factory=list)  # one line each
    acks: bool = True  # the part has ACKs (not part 1)
    summary: str | None = None  # what was probed, in words (else COMN's conventions)

    def to_dict(self) -> dict:
        c = self.conventions
        return {
            "summary": self.summary or c.describe(self.acks),
            "byte_order": c.byte_order,
            "numbering": c.numbering,
            "first_seq": c.first_seq,
            "eof_value": c.eof_value,
            "ack": c.ack,
            "how": self.how,
            "why": self.why,
            "departures": self.departures,
        }


def fixed_conventions(battery: Battery) -> dict:
    return dict(getattr(battery, "conventions", None) or {})


def detect(battery: Battery, student: Side, reference: Side, backend: str) -> dict[int, Detected]:
    """Conventions per part that meets the reference in the battery."""
    parts = sorted({s.part for s in battery.scenarios if s.meet != "student"})
    if battery.detect == "none" or not parts:
        return {}
    if battery.detect == "byte_order":
        return detect_byte_order(battery, parts, student, reference, backend)
    fixed = fixed_conventions(battery)
    found: dict[int, Detected] = {}
    budget = [MAX_TRIES_IN_ALL]
    # Parts without ACKs last: their reference receiver keeps whatever arrives, so they
    # take another part's findings rather than a probe run of their own.
    for part in sorted(parts, key=lambda p: (battery.programs[p].model == "blast", p)):
        model = battery.programs[part].model
        # a fixed numbering is stop-and-wait's (alternating bit or counting); ACKs are not part 1's
        applies = {
            k: v
            for k, v in fixed.items()
            if (k != "numbering" or model == "stop-and-wait") and (k != "ack" or model != "blast")
        }
        told = next((k for k, d in found.items() if d.how == "wire"), None)
        if model == "blast" and told is not None:
            c = found[told].conventions
            found[part] = _against_fixed(
                Detected(
                    Conventions(c.byte_order, "count", c.first_seq, c.eof_value, "last"),
                    "wire",
                    f"as in part {told}: part {part}'s receiver checks no numbers",
                    acks=False,
                ),
                applies,
            )
            continue
        found[part] = _detect_part(battery, part, student, reference, backend, applies, budget)
        found[part].acks = battery.programs[part].model != "blast"
    return dict(sorted(found.items()))


def _detect_part(
    battery: Battery, part: int, student: Side, reference: Side, backend: str, fixed: dict, budget: list[int]
) -> Detected:
    programs = battery.programs[part]
    sender, receiver = programs.name("sender"), programs.name("receiver")
    has_tx, has_rx = not student.missing(sender), not student.missing(receiver)
    alternating = programs.model == "stop-and-wait"
    acks = programs.model != "blast"
    candidates = _space(alternating, acks)
    evidence = None
    if has_tx:
        # The student's own pair if it has one, else its sender with the reference
        # receiver: either way the sender's numbers are on the wire.
        rx = student if has_rx else reference
        evidence = _sniff(programs, student, rx, backend)
        candidates, eof, why = _read_wire(evidence, candidates, student_acks=rx is student and acks)
    else:
        eof, why = None, f"no {sender} to read the numbers from"
    if len(candidates) == 1 and eof is not None:
        conv = candidates[0]._replace(eof_value=eof)
        return _against_fixed(Detected(conv, "wire", why), fixed)
    # Not told by the wire alone: try what is left, jointly, the likeliest first.
    eofs = [eof] if eof is not None else [1, 255]
    tries = [c._replace(eof_value=e) for c in candidates for e in eofs]
    tries.sort(key=_likelihood)
    for conv in tries[:MAX_TRIES]:
        for tx, rx in ((student, reference), (reference, student)):
            name = sender if tx is student else receiver
            if student.missing(name) or budget[0] <= 0:
                continue
            budget[0] -= 1
            if _works(programs, tx, rx, conv, reference, backend):
                whose = (
                    f"your {sender} with the reference {receiver}"
                    if tx is student
                    else f"the reference {sender} with your {receiver}"
                )
                return _against_fixed(Detected(conv, "tried", f"{why}; {whose} worked with {conv.describe()}"), fixed)
            break  # one direction per try: the sender's if there is one
    default = Conventions(**{k: v for k, v in fixed.items()})
    return _against_fixed(
        Detected(default, "default", f"{why}; nothing worked, so the default ({default.describe()})"), fixed
    )


def _space(alternating: bool, acks: bool) -> list[Conventions]:
    return [
        Conventions(byte_order=o, numbering=n, first_seq=f, ack=a)
        for o, n, f, a in itertools.product(
            CHOICES["byte_order"],
            CHOICES["numbering"] if alternating else ("count",),
            CHOICES["first_seq"],
            CHOICES["ack"] if acks else ("last",),
        )
    ]


def _likelihood(c: Conventions) -> tuple:
    """Defaults first, then one departure at a time, ..."""
    default = Conventions()
    return (
        sum(getattr(c, k) != getattr(default, k) for k in NAMES),
        c.byte_order != "big",
        c.numbering,
        c.eof_value != 1,
        c.first_seq,
        c.ack,
    )


def _sniff(programs, tx: Side, rx: Side, backend: str):
    """One probe run with the engine's trace: the copies in the order they entered the link."""
    with tempfile.TemporaryDirectory(prefix="rdt-probe-") as tmp:
        trace = os.path.join(tmp, "trace.jsonl")
        sender = Program(tx.template(programs.sender), env=tx.env)
        receiver = Program(rx.template(programs.receiver), env=rx.env)
        run_transfer(
            sender,
            receiver,
            PROBE_LINK,
            params=programs.params,
            size=PROBE_BYTES,
            seed=1,
            backend=backend,
            time_limit=PROBE_TIME_LIMIT,
            trace=trace,
            isolate=isolation(tx, rx),
        )
        try:
            copies = read_trace(trace).copies if os.path.exists(trace) else []
        except Exception:  # a cut or missing trace tells nothing
            copies = []
    return sorted((c for c in copies if not c.duplicate and c.t_in is not None), key=lambda c: c.t_in)


def _read_wire(copies, candidates: list[Conventions], student_acks: bool):
    """(candidates consistent with the sender's numbers and the first ACK, EOF byte or
    None, why in words)."""
    data = [c for c in copies if c.direction == "forward" and not c.repeat and len(c.head) >= 3]
    if not data:
        return candidates, None, "the sender put no data message on the wire"
    heads = [c.head[:3] for c in data]
    shown = ", ".join(h[:2].hex(" ") for h in heads[:4])
    kept = [c for c in candidates if all(_seq(h, c) == _expected(k, c) for k, h in enumerate(heads))]
    flags = [h[2] for h in heads]
    eof = flags[-1] if flags[-1] and not any(flags[:-1]) and len(heads) >= 3 else None
    why = f"your sender's first data messages began {shown}"
    if eof is not None:
        why += f", the last with end-of-file byte {eof}"
    ack = next((c for c in copies if c.direction == "reverse" and len(c.head) == 2), None)
    if student_acks and ack is not None:
        by_ack = [c for c in kept if _seq(ack.head, c) == _expected(0 if c.ack == "last" else 1, c)]
        if by_ack:
            kept = by_ack
            why += f"; your receiver answered the first with {ack.head[:2].hex(' ')}"
    if len(heads) < 3:
        why += f" (only {len(heads)} distinct message{'s' if len(heads) > 1 else ''}: not enough to tell)"
        return kept, None, why
    return kept, eof, why


def _expected(k: int, c: Conventions) -> int:
    return (k + c.first_seq) % (2 if c.numbering == "alt" else 65536)


def _seq(head: bytes, c: Conventions) -> int:
    return struct.unpack(">H" if c.byte_order == "big" else "<H", head[:2])[0]


def _works(programs, tx: Side, rx: Side, conv: Conventions, reference: Side, backend: str) -> bool:
    env = {**(reference.env or {}), **conv.env()}
    tx = replace(tx, env=env) if tx is reference else tx
    rx = replace(rx, env=env) if rx is reference else rx
    sender = Program(tx.template(programs.sender), env=tx.env)
    receiver = Program(rx.template(programs.receiver), env=rx.env)
    result = run_transfer(
        sender,
        receiver,
        PROBE_LINK,
        params=programs.params,
        size=PROBE_BYTES,
        seed=1,
        backend=backend,
        time_limit=PROBE_TIME_LIMIT,
        isolate=isolation(tx, rx),
    )
    return result.ok


def _against_fixed(found: Detected, fixed: dict) -> Detected:
    """The battery's fixed conventions win; a detected departure from one is recorded."""
    if not fixed:
        return found
    conv = found.conventions
    for name, value in fixed.items():
        mine = getattr(conv, name)
        if mine != value and found.how != "default":
            found.departures.append(f"the battery fixes the {NAMES[name]} as {value}, your programs use {mine}")
    found.conventions = conv._replace(**fixed)
    return found


# ---- formats whose only open choice is the byte order (tcp-like, multihoming) ----------


def detect_byte_order(
    battery: Battery, parts: list[int], student: Side, reference: Side, backend: str
) -> dict[int, Detected]:
    """The byte order of the sequence number a data message starts with (the battery's
    `seq_bytes` wide), read off the wire of one probe run, or else tried against the
    reference; one finding for every part (the programs share their format)."""
    fixed = fixed_conventions(battery).get("byte_order")
    part = parts[0]
    programs = battery.programs[part]
    sender, receiver = programs.name("sender"), programs.name("receiver")
    order, how, why = None, "default", ""
    if not student.missing(sender):
        rx = student if not student.missing(receiver) else reference
        copies = _sniff(programs, student, rx, backend)
        order, why = _order_on_wire(copies, battery.seq_bytes)
        how = "wire"
    else:
        why = f"no {sender} to read the numbers from"
    if order is None and not student.missing(receiver):
        for guess in ("big", "little"):
            if _works(programs, reference, student, Conventions(byte_order=guess), reference, backend):
                order, how = guess, "tried"
                why += f"; the reference {sender} with your {receiver} worked {guess}-endian"
                break
    if order is None:
        order = fixed or "big"
        why += f"; nothing told, so {order}-endian"
    found = Detected(Conventions(byte_order=order), how, why.lstrip("; "), summary=f"{order}-endian sequence numbers")
    if fixed and order != fixed and how != "default":
        found.departures.append(f"the battery fixes the byte order as {fixed}, your programs use {order}")
        found.conventions = Conventions(byte_order=fixed)
    return {p: found for p in parts}


def _order_on_wire(copies, width: int) -> tuple[str | None, str]:
    """('big' | 'little' | None, why): the first distinct data messages' numbers read
    both ways; the order in which they count 0, 1, 2 (or n, n+1, ...)."""
    heads = [c.head[:width] for c in copies if c.direction == "forward" and not c.repeat and len(c.head) >= width]
    if len(heads) < 2:
        return None, f"your sender put {len(heads)} distinct data message(s) on the wire: not enough to tell"
    shown = ", ".join(h.hex(" ") for h in heads[:4])
    fits = [
        order
        for order in ("big", "little")
        if all(int.from_bytes(b, order) - int.from_bytes(a, order) == 1 for a, b in zip(heads, heads[1:4]))
    ]
    if len(fits) != 1:
        return None, f"your sender's first data messages began {shown}: neither byte order counts up by one"
    return fits[0], f"your sender's first data messages began {shown}"
