"""What the COMN programs share: their argument checks, the COMN settings, and the
calls into the socket runtime (reference/runtime.py).

The programs take exactly the COMN assignment's arguments. What the assignment
leaves open is settled here (see reference/PROTOCOL.md):
  - the wire's conventions: byte order, numbering (counting or the alternating bit),
    the first number, the end-of-file byte and what an ACK names; the defaults
    (big-endian, counting from 0, EOF 1, ACK = the message received) unless the
    environment says otherwise (RDT_BYTE_ORDER, ...: reference/comn/conventions.py);
    a receiver takes any non-zero end-of-file byte;
  - ending: a sender gives up (exit status 1) after GIVE_UP_AFTER seconds, or 20
    retry timeouts if longer, without any ACK and with at least 64 data messages
    unanswered; a receiver writes the file once complete, then lingers,
    re-acknowledging, in case its last ACK was lost: until 10 s (RDT_LINGER, if set),
    or 20 of the sender's retry intervals as it saw them, pass without a datagram
    (reference/PROTOCOL.md, "How a transfer ends"). RDT_ENDING=leave makes the
    receiver leave as soon as the file is complete (valid: the spec puts ending on the
    sender), RDT_ENDING=leave-unacked also withholds the ACK of the message that
    completed it: a receiver gone while its sender still waits, for grading the
    sender's termination.
"""

from __future__ import annotations

import os

from reference.comn.conventions import ConventionError, ConventionFormat, Conventions
from reference.core import CoreConfig, make_receiver, make_sender
from reference.ending import LINGER
from reference.runtime import UsageError, receive_file, send_file

PAYLOAD = 1024  # bytes of the file in each data message
GIVE_UP_AFTER = 10.0  # seconds without any ACK before the sender stops (at least)
GIVE_UP_TIMEOUTS = 20  # ... or this many retry timeouts, if longer
MAX_WINDOW = 1 << 14  # 16-bit sequence numbers; see PROTOCOL.md "Sequence numbers"
# Sender4's refinements (reference/core/sr.py): pace new packets, a window per round
# trip, and send a packet that later ACKs show lost twice. Within the contract:
# at most <WindowSize> packets in flight, each resent when <RetryTimeout> passes
# without its ACK. Why: BENCHMARKS.md, "The references".
# RDT_SR_REFINEMENTS=off gives the textbook SR instead: the grader's baseline, since a
# student's Sender4 is asked for the textbook protocol, not for these refinements.
SR_REFINEMENTS = {"pace": True, "repair_copies": 2}


def sr_refinements() -> dict:
    """SR_REFINEMENTS, or none when RDT_SR_REFINEMENTS=off."""
    value = os.environ.get("RDT_SR_REFINEMENTS", "on")
    if value not in ("on", "off"):
        raise UsageError(f"RDT_SR_REFINEMENTS must be 'on' or 'off', got {value!r}")
    return SR_REFINEMENTS if value == "on" else {}


def parse(argv: list[str], names: list[str]) -> list[str]:
    """The positional arguments, exactly as many as ``names``."""
    if len(argv) != len(names):
        raise UsageError(f"expected {len(names)} arguments <{'> <'.join(names)}>, got {len(argv)}")
    return argv


def port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise UsageError(f"Port must be a number from 1 to 65535, got {text!r}")
    return int(text)


def timeout_ms(text: str) -> float:
    """RetryTimeout in milliseconds -> seconds."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise UsageError(f"RetryTimeout must be a positive number of milliseconds, got {text!r}")
    return value / 1000


def window(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_WINDOW:
        raise UsageError(f"WindowSize must be a whole number from 1 to {MAX_WINDOW}, got {text!r}")
    return int(text)


def wire_format() -> ConventionFormat:
    """The COMN format under the conventions the environment gives (RDT_BYTE_ORDER, ...)."""
    try:
        return ConventionFormat(Conventions.from_env())
    except ConventionError as e:
        raise UsageError(str(e)) from None


ENDINGS = ("linger", "leave", "leave-unacked")


def ending() -> str:
    value = os.environ.get("RDT_ENDING", "linger")
    if value not in ENDINGS:
        raise UsageError(f"RDT_ENDING must be one of {', '.join(ENDINGS)}, got {value!r}")
    return value


class WithholdLastAck:
    """A receiver core that sends no ACK once the file is complete (the message that
    completed it included): with RDT_ENDING=leave-unacked its sender is left waiting."""

    def __init__(self, core):
        self.core = core

    def __getattr__(self, name):
        return getattr(self.core, name)

    def receive(self, msg, now):
        acks = self.core.receive(msg, now)
        return [] if self.core.complete else acks


def linger() -> float:
    """The receiver's least quiet time before it leaves: LINGER, or RDT_LINGER seconds."""
    text = os.environ.get("RDT_LINGER")
    if text is None:
        return LINGER
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value < float("inf"):
        raise UsageError(f"RDT_LINGER must be a number of seconds, 0 or more, got {text!r}")
    return value


def config(timeout: float = 0.1, window: int = 1, **refinements) -> CoreConfig:
    return CoreConfig(payload_size=PAYLOAD, timeout=timeout, window=window, seq_modulus=1 << 16, **refinements)


def send(protocol: str, host: str, port: int, filename: str, settings: CoreConfig):
    """Send ``filename`` with ``protocol``; returns the runtime's SenderResult."""
    give_up_after = max(GIVE_UP_AFTER, GIVE_UP_TIMEOUTS * settings.timeout)
    return send_file(
        lambda data: make_sender(protocol, data, settings),
        filename,
        wire_format(),
        [(host, port)],
        give_up_after=give_up_after,
    )


def receive(protocol: str, port: int, filename: str, settings: CoreConfig):
    """Receive into ``filename`` with ``protocol``; returns the ReceiverResult."""
    how = ending()
    core = make_receiver(protocol, settings)
    if how == "linger":
        return receive_file(core, wire_format(), port, filename, linger=linger())
    return receive_file(
        WithholdLastAck(core) if how == "leave-unacked" else core,
        wire_format(),
        port,
        filename,
        linger=0,
        retry_intervals=0,
    )
