"""How long a multi-homed transfer stalls when a path goes down, from the engine's pcap.

The receiver's in-order point (the lowest packet it still lacks) stops advancing when a
path dies with packets on it, until the sender has noticed and resent them on a live
path: that stall is the fail-over time as the receiver lives it (detection + resend +
one-way delay). Read from the wire, not from what the sender says: data messages in
the extended format (reference/PROTOCOL.md: 0xA1, type 1, u32 packet number at byte 4)
as they left the link, on every path (the `md5` format has the same first 8 bytes,
magic 0xA2). The down time is the engine schedule's `at_ms`
counted from the first packet into the engine, taken here as the first data packet out
minus one one-way delay (the pcap records departures), so it is good to a millisecond.
"""

from __future__ import annotations

from harness.experiments.pcap import datagrams

EXT_MAGICS, EXT_DATA = (0xA1, 0xA2), 1  # ext, md5


def data_arrivals(pcap: str) -> list[tuple[int, int]]:
    """(time ns, packet number) of every extended-format data message that left the link."""
    out = []
    for d in datagrams(pcap):
        p = d.payload
        if len(p) >= 12 and p[0] in EXT_MAGICS and p[1] == EXT_DATA:
            out.append((d.t_ns, int.from_bytes(p[4:8], "big")))
    return out


def in_order_stall(arrivals: list[tuple[int, int]], down_at_ms: float, one_way_s: float) -> dict:
    """After the path went down: the longest time the in-order point did not advance
    (`stall_s`), and when the down happened relative to the first data packet out."""
    if not arrivals:
        return {}
    first = arrivals[0][0]
    down = first - one_way_s * 1e9 + down_at_ms * 1e6
    held, expected = set(), 0
    advances = []  # times the in-order point moved
    for t, seq in arrivals:
        held.add(seq)
        if seq == expected:
            while expected in held:
                held.discard(expected)
                expected += 1
            advances.append(t)
    after = [t for t in advances if t > down]
    if not after:
        return {"stall_s": None}
    before = max([t for t in advances if t <= down], default=first)
    gaps = [after[0] - max(before, down)] + [b - a for a, b in zip(after, after[1:])]
    return {"stall_s": max(gaps) / 1e9, "first_stall_s": gaps[0] / 1e9}
