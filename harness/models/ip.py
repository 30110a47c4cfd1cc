"""IP packets of one UDP datagram over IPv4 or IPv6: fragmentation, and its cost.

Assumptions: the sender's kernel fragments a datagram larger than the MTU (Linux does
for UDP, over both families), no IP options or extension headers besides IPv6's
8-byte Fragment header, and the link's `rate` counts whole IP packets (the engine in
TUN mode: no Ethernet framing). Every fragment but the last carries a multiple of 8
bytes, as many as fit: 1480 over IPv4 (1500 − 20), 1448 over IPv6 (1500 − 40 − 8).
A datagram is lost when any of its fragments is: the receiver's kernel drops what it
cannot reassemble, and the sender must resend every fragment.
"""

from __future__ import annotations

import math

UDP_HEADER = 8
IPV4_HEADER, IPV6_HEADER, IPV6_FRAGMENT_HEADER = 20, 40, 8
MTU = 1500
MAX_UDP_PAYLOAD = {
    False: 65535 - IPV4_HEADER - UDP_HEADER,  # 65507: IPv4's total length is 16 bits
    True: 65535 - UDP_HEADER,
}  # 65527: IPv6's payload length excludes its header


def ip_packets(udp_payload: int, ipv6: bool, mtu: int = MTU) -> list[int]:
    """Sizes (bytes, IP headers included) of the IP packets that carry one datagram."""
    if not 0 <= udp_payload <= MAX_UDP_PAYLOAD[ipv6]:
        raise ValueError(
            f"a UDP payload of {udp_payload} bytes does not fit IPv{6 if ipv6 else 4} (at most {MAX_UDP_PAYLOAD[ipv6]})"
        )
    header = IPV6_HEADER if ipv6 else IPV4_HEADER
    body = udp_payload + UDP_HEADER
    if header + body <= mtu:
        return [header + body]
    header += IPV6_FRAGMENT_HEADER if ipv6 else 0
    per_fragment = (mtu - header) // 8 * 8
    n = math.ceil(body / per_fragment)
    return [header + per_fragment] * (n - 1) + [header + body - per_fragment * (n - 1)]


def wire_bytes(udp_payload: int, ipv6: bool, mtu: int = MTU) -> int:
    """Bytes the link's rate counts for one datagram."""
    return sum(ip_packets(udp_payload, ipv6, mtu))


def datagram_delivered(udp_payload: int, ipv6: bool, loss: float, mtu: int = MTU) -> float:
    """Probability that every fragment of the datagram survives a link losing `loss` of packets."""
    return (1 - loss) ** len(ip_packets(udp_payload, ipv6, mtu))
