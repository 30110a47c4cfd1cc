"""The emulated link as the models see it (netem on `lo`, the COMN setting).

Conventions shared by every model in this package:
- `delay_s` is netem's `delay`: applied once per direction, so the propagation part of
  a round trip is 2·delay.
- `loss` is netem's `loss`: applied once per direction, independently per packet, to
  data and ACKs alike; a lost packet costs no link capacity (netem drops before the
  rate queue).
- `rate_bps` is netem's `rate`. With `shared_queue` (netem on `lo`) data and ACKs are
  serialised by ONE queue, so each delivered packet costs t_data + t_ack of link time.
- Packet sizes on the wire: payload + the COMN header (2-byte sequence number and
  1-byte end-of-file flag) + `overhead` bytes that the rate counts per packet. netem on
  `lo` counts the whole frame: Ethernet 14 + IPv4 20 + UDP 8 = 42 bytes, which makes a
  full COMN data packet 1069 bytes, as seed 004 uses.
- Throughputs are in KiB/s (bytes / 1024 / s), the unit of TransferResult.goodput_kBps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

KIB = 1024.0


@dataclass(frozen=True)
class Link:
    delay_s: float  # one-way delay, each direction
    loss: float = 0.0  # per-packet loss probability, each direction
    rate_bps: float = 10e6  # 10 Mbit/s, the COMN rate
    payload: int = 1024  # application bytes per data packet
    header: int = 3  # COMN data header
    ack_bytes: int = 2  # COMN ACK: the 2-byte sequence number
    overhead: int = 42  # bytes per packet the rate counts besides the datagram
    shared_queue: bool = True  # netem on `lo`

    def __post_init__(self) -> None:
        if not 0 <= self.loss < 1:
            raise ValueError(f"loss must be in [0, 1), got {self.loss}")
        if self.delay_s < 0 or self.rate_bps <= 0 or self.payload <= 0:
            raise ValueError("delay must be >= 0, rate and payload > 0")

    @property
    def t_data(self) -> float:
        """Seconds to serialise one full data packet."""
        return (self.payload + self.header + self.overhead) * 8 / self.rate_bps

    @property
    def t_ack(self) -> float:
        """Seconds to serialise one ACK."""
        return (self.ack_bytes + self.overhead) * 8 / self.rate_bps

    @property
    def rtt(self) -> float:
        """Round trip of one data packet and its ACK on an idle link, seconds."""
        return 2 * self.delay_s + self.t_data + self.t_ack

    @property
    def capacity_pps(self) -> float:
        """Most data packets per second the link can deliver with their ACKs."""
        per_packet = self.t_data + (self.t_ack if self.shared_queue else 0.0)
        return 1.0 / per_packet

    @property
    def round_trip_loss(self) -> float:
        """Probability that a data packet or its ACK is lost."""
        return 1 - (1 - self.loss) ** 2

    def packets(self, size_bytes: int) -> int:
        """Data packets needed for a file (at least one, which carries the EOF flag)."""
        return max(1, math.ceil(size_bytes / self.payload))

    def kBps(self, packets_per_s: float) -> float:
        """Goodput in KiB/s for a rate of delivered full data packets."""
        return packets_per_s * self.payload / KIB
