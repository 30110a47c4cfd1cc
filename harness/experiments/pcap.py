"""Read the engine's pcap (LINKTYPE_RAW: IPv4 or IPv6 packets, UDP in relay mode) as
(time, source port, destination port, UDP payload), for measurements that need the
order and timing of single packets on the wire (a fail-over's stall, for instance),
which the engine's counters sum away. Standard library only; other packets are skipped."""

from __future__ import annotations

import struct
from typing import Iterator, NamedTuple

UDP = 17


class Datagram(NamedTuple):
    t_ns: int  # when the packet left the link (wall clock, ns since the epoch)
    sport: int
    dport: int
    payload: bytes


def datagrams(path: str) -> Iterator[Datagram]:
    """Every UDP datagram in a pcap file, in file order (= the order they left the link)."""
    with open(path, "rb") as f:
        header = f.read(24)
        if len(header) < 24:
            return
        magic = struct.unpack("<I", header[:4])[0]
        if magic not in (0xA1B2C3D4, 0xA1B23C4D):
            raise ValueError(f"{path}: not a little-endian pcap file (magic 0x{magic:08x})")
        nano = magic == 0xA1B23C4D
        while True:
            record = f.read(16)
            if len(record) < 16:
                return
            sec, frac, caplen, _ = struct.unpack("<IIII", record)
            packet = f.read(caplen)
            if len(packet) < caplen:
                return
            udp = _udp(packet)
            if udp is not None:
                t_ns = sec * 1_000_000_000 + (frac if nano else frac * 1000)
                yield Datagram(t_ns, *udp)


def _udp(packet: bytes) -> tuple[int, int, bytes] | None:
    if not packet:
        return None
    version = packet[0] >> 4
    if version == 4 and len(packet) >= 20:
        ihl = (packet[0] & 0x0F) * 4
        proto, offset = packet[9], ihl
    elif version == 6 and len(packet) >= 40:
        proto, offset = packet[6], 40
    else:
        return None
    if proto != UDP or len(packet) < offset + 8:
        return None
    sport, dport, length = struct.unpack_from(">HHH", packet, offset)
    return sport, dport, bytes(packet[offset + 8 : offset + max(8, length)])
