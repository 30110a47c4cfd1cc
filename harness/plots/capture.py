"""Read what crossed the link: the engine's trace (JSON lines) or its pcap.

Both become a list of `Copy` records, one per copy of a packet that the link handled,
carrying the first bytes of the application payload (as it came in, before any
corruption) and what happened to it:

- the trace (`linkemu --trace`, `run_transfer(trace=...)`, harness/linkemu/src/trace.rs)
  knows everything: when each packet came in and left, losses, queue drops, link-made
  duplicates and corruptions;
- a pcap holds only what the link delivered, with the times it left: no drops, and a
  corrupted packet is seen as the receiver saw it (its bytes damaged).

Bad input raises UsageError with one line naming the file and what was wrong.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass

from harness.procs import UsageError

HEAD_BYTES = 32  # payload bytes kept per packet (the engine's trace keeps as many)
PCAP_MAGICS = {
    b"\xd4\xc3\xb2\xa1": ("<", 1e-6),
    b"\xa1\xb2\xc3\xd4": (">", 1e-6),
    b"\x4d\x3c\xb2\xa1": ("<", 1e-9),
    b"\xa1\xb2\x3c\x4d": (">", 1e-9),
}
LINKTYPE_ETHERNET, LINKTYPE_RAW = 1, 101
DROPPED = ("lost", "queue_drop", "down_drop", "io_error")


@dataclass
class Copy:
    """One copy of a packet on the link. Times in seconds on the capture's clock."""

    direction: str  # "forward" (sender -> receiver) or "reverse"
    path: int
    head: bytes  # first payload bytes, as the sender sent them (trace)
    t_in: float | None  # into the link (None from a pcap)
    t_out: float | None  # out of it (None: dropped, or still in the link at the end)
    fate: str  # delivered | lost | queue_drop | down_drop | io_error | in_link
    corrupted: bool = False  # the link flipped a bit in it (trace only)
    duplicate: bool = False  # a copy the link made (netem duplicate)
    repeat: bool = False  # the engine had seen this payload before (its `repeats`)
    length: int = 0  # payload (UDP mode) or IP packet (TUN mode) length

    @property
    def dropped(self) -> bool:
        return self.fate in DROPPED


@dataclass
class Capture:
    copies: list[Copy]
    kind: str  # "trace" or "pcap"
    source: str
    seed: int | None = None
    mode: str | None = None
    paths: tuple[str, ...] = ("p0",)
    skipped_lines: int = 0  # trace lines that could not be read (a cut last line)


def read(path: str | os.PathLike) -> Capture:
    """A trace or a pcap, told apart by its first bytes."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            start = f.read(4)
    except FileNotFoundError:
        raise UsageError(f"capture file not found: {path}") from None
    except OSError as e:
        raise UsageError(f"cannot read capture file {path}: {e.strerror}") from None
    if start in PCAP_MAGICS:
        return read_pcap(path)
    if start.startswith(b"{"):
        return read_trace(path)
    raise UsageError(f"{path} is neither an engine trace (JSON lines) nor a pcap file")


def read_trace(path: str) -> Capture:
    """The engine's JSON-lines trace: `in` lines joined with the `out` lines of their copies."""
    start, copies, skipped = None, [], 0
    pending: dict[tuple[int, int, bool], Copy] = {}  # (path, id, duplicate) -> queued copy
    with open(path, "rb") as f:
        for line in f:
            try:
                ev = json.loads(line)
                kind = ev["ev"]
            except (ValueError, KeyError, TypeError):
                skipped += 1  # e.g. a last line cut by a killed engine
                continue
            if kind == "start":
                start = ev
            elif kind == "in":
                _arrival(ev, copies, pending)
            elif kind == "out":
                c = pending.pop((ev["path"], ev["id"], ev["copy"] == "dup"), None)
                if c is not None:
                    c.t_out, c.fate = ev["t"] / 1e9, ev["fate"]
    if start is None:
        raise UsageError(f"{path} is not an engine trace: it has no start line")
    return Capture(
        copies,
        "trace",
        path,
        seed=start.get("seed"),
        mode=start.get("mode"),
        paths=tuple(start.get("paths") or ("p0",)),
        skipped_lines=skipped,
    )


def _arrival(ev: dict, copies: list[Copy], pending: dict) -> None:
    base = dict(
        direction=ev["dir"],
        path=ev["path"],
        head=bytes.fromhex(ev["head"]),
        t_in=ev["t"] / 1e9,
        t_out=None,
        repeat=ev["repeat"],
        length=ev["len"],
    )
    fate = ev["fate"]
    orig = Copy(**base, fate="in_link" if fate == "queued" else fate, corrupted=ev["corrupted"])
    copies.append(orig)
    if fate == "queued":
        pending[(ev["path"], ev["id"], False)] = orig
    dup = ev.get("dup")
    if dup:
        # The link's copy is not a transmission of the sender: never a repeat.
        copy = Copy(
            **dict(base, repeat=False),
            fate="in_link" if dup["fate"] == "queued" else dup["fate"],
            corrupted=dup["corrupted"],
            duplicate=True,
        )
        copies.append(copy)
        if dup["fate"] == "queued":
            pending[(ev["path"], ev["id"], True)] = copy


def read_pcap(path: str) -> Capture:
    """A pcap of delivered IP packets (the engine's: LINKTYPE_RAW; Ethernet also read).
    Direction: COMN and ext messages say themselves whether they are data or ACKs, so
    every UDP packet is kept as `forward`; the decoder sorts them (trace.py)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise UsageError(f"{path}: pcap file cut short in its header")
    order, unit = PCAP_MAGICS[data[:4]]
    linktype = struct.unpack_from(order + "I", data, 20)[0]
    if linktype not in (LINKTYPE_RAW, LINKTYPE_ETHERNET):
        raise UsageError(f"{path}: pcap link type {linktype}, expected raw IP (101) or Ethernet (1)")
    copies, at = [], 24
    while at + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack_from(order + "IIII", data, at)
        frame = data[at + 16 : at + 16 + caplen]
        at += 16 + caplen
        if linktype == LINKTYPE_ETHERNET:
            frame = frame[14:]
        payload = udp_payload(frame)
        if payload is None:
            continue
        t = sec + frac * unit
        copies.append(Copy("forward", 0, payload[:HEAD_BYTES], None, t, "delivered", length=len(payload)))
    return Capture(copies, "pcap", path)


def udp_payload(ip: bytes) -> bytes | None:
    """The UDP payload of an unfragmented IPv4/IPv6 packet, else None."""
    if len(ip) >= 20 and ip[0] >> 4 == 4:
        ihl = (ip[0] & 0x0F) * 4
        if ip[9] != 17 or struct.unpack_from(">H", ip, 6)[0] & 0x3FFF:  # not UDP, or a fragment
            return None
        start = ihl
    elif len(ip) >= 40 and ip[0] >> 4 == 6:
        if ip[6] != 17:
            return None
        start = 40
    else:
        return None
    if len(ip) < start + 8:
        return None
    return ip[start + 8 :]
