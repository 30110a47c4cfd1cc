//! Internet checksums and the little IP parsing TUN mode needs: where the transport
//! payload of an IPv4/IPv6 UDP or TCP packet is (the bytes corruption may touch), and
//! recomputing the UDP/TCP checksum over the IPv4 or IPv6 pseudo-header after a bit
//! was flipped, so the damaged packet still reaches the application.

use std::ops::Range;

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// One's-complement sum of 16-bit big-endian words, added to `acc` (not folded).
pub fn sum16(data: &[u8], mut acc: u64) -> u64 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u64) << 8;
    }
    acc
}

/// Fold a sum to 16 bits and complement it: the checksum field's value.
pub fn finish(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The transport segment inside an IP packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transport {
    pub proto: u8,
    /// Where the UDP/TCP header starts.
    pub start: usize,
    /// The application bytes (after the UDP/TCP header), within the packet.
    pub payload: Range<usize>,
    /// TCP sequence number (None for UDP).
    pub seq: Option<u32>,
    pub ipv6: bool,
}

/// Find the UDP or TCP segment of an IPv4/IPv6 packet. None for other protocols,
/// IPv4 fragments (the checksum covers bytes we don't have), IPv6 extension headers
/// and anything malformed: those packets are forwarded untouched.
pub fn parse(pkt: &[u8]) -> Option<Transport> {
    let (proto, start, end, ipv6) = match pkt.first()? >> 4 {
        4 => {
            if pkt.len() < 20 {
                return None;
            }
            let ihl = (pkt[0] & 0x0f) as usize * 4;
            let total = u16::from_be_bytes([pkt[2], pkt[3]]) as usize;
            let frag = u16::from_be_bytes([pkt[6], pkt[7]]);
            if ihl < 20 || total < ihl || total > pkt.len() || frag & 0x3fff != 0 {
                return None; // malformed, or a fragment (MF set or offset > 0)
            }
            (pkt[9], ihl, total, false)
        }
        6 => {
            if pkt.len() < 40 {
                return None;
            }
            let total = 40 + u16::from_be_bytes([pkt[4], pkt[5]]) as usize;
            if total > pkt.len() {
                return None;
            }
            (pkt[6], 40, total, true)
        }
        _ => return None,
    };
    let (hdr_len, seq) = match proto {
        PROTO_UDP => (8, None),
        PROTO_TCP => {
            let off = *pkt.get(start + 12)? as usize >> 4;
            let seq = u32::from_be_bytes(pkt.get(start + 4..start + 8)?.try_into().ok()?);
            (off * 4, Some(seq))
        }
        _ => return None,
    };
    if hdr_len < 8 || start + hdr_len > end {
        return None;
    }
    Some(Transport {
        proto,
        start,
        payload: start + hdr_len..end,
        seq,
        ipv6,
    })
}

/// Sum of the pseudo-header for a transport segment of `len` bytes.
fn pseudo_header_sum(pkt: &[u8], t: &Transport, len: usize) -> u64 {
    let addrs = if t.ipv6 { &pkt[8..40] } else { &pkt[12..20] };
    sum16(addrs, t.proto as u64 + len as u64)
}

fn checksum_offset(t: &Transport) -> usize {
    t.start + if t.proto == PROTO_UDP { 6 } else { 16 }
}

/// True when the packet's UDP/TCP checksum is right (or absent: IPv4 UDP with 0).
pub fn transport_checksum_ok(pkt: &[u8], t: &Transport) -> bool {
    let at = checksum_offset(t);
    if t.proto == PROTO_UDP && !t.ipv6 && pkt[at] == 0 && pkt[at + 1] == 0 {
        return true;
    }
    let seg = &pkt[t.start..t.payload.end];
    finish(sum16(seg, pseudo_header_sum(pkt, t, seg.len()))) == 0
}

/// Recompute the UDP/TCP checksum in place. IPv4 UDP without a checksum keeps none.
pub fn fix_transport_checksum(pkt: &mut [u8], t: &Transport) {
    let at = checksum_offset(t);
    if t.proto == PROTO_UDP && !t.ipv6 && pkt[at] == 0 && pkt[at + 1] == 0 {
        return;
    }
    pkt[at] = 0;
    pkt[at + 1] = 0;
    let len = t.payload.end - t.start;
    let mut c = finish(sum16(&pkt[t.start..t.payload.end], pseudo_header_sum(pkt, t, len)));
    if c == 0 && t.proto == PROTO_UDP {
        c = 0xffff; // 0 means "no checksum" in UDP
    }
    pkt[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

/// The IPv4 header checksum for a header we build ourselves (pcap synthesis).
pub fn ipv4_header_checksum(hdr: &[u8]) -> u16 {
    finish(sum16(hdr, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4/UDP packet 10.0.0.1:1000 -> 10.0.0.2:2000 carrying "hello", with the
    /// checksum computed independently (by hand from RFC 768's definition).
    fn udp4() -> Vec<u8> {
        let payload = b"hello";
        let total = 20 + 8 + payload.len();
        let mut p = vec![
            0x45,
            0,
            0,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            17,
            0,
            0,
            10,
            0,
            0,
            1,
            10,
            0,
            0,
            2,
        ];
        let c = ipv4_header_checksum(&p);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p.extend_from_slice(&[0x03, 0xe8, 0x07, 0xd0, 0, 13, 0, 0]);
        p.extend_from_slice(payload);
        // Hand sum: pseudo (0a00+0001+0a00+0002+0011+000d) + udp (03e8+07d0+000d)
        // + "he" "ll" "o\0" = 0x6865+0x6c6c+0x6f00.
        let words: u64 =
            0x0a00 + 0x0001 + 0x0a00 + 0x0002 + 0x0011 + 0x000d + 0x03e8 + 0x07d0 + 0x000d + 0x6865 + 0x6c6c + 0x6f00;
        let c = finish(words);
        p[26..28].copy_from_slice(&c.to_be_bytes());
        p
    }

    #[test]
    fn internet_checksum_of_rfc1071_example() {
        // RFC 1071 section 3: words 0001 f203 f4f5 f6f7 sum to ddf2 (folded).
        assert_eq!(
            finish(sum16(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7], 0)),
            !0xddf2
        );
    }

    #[test]
    fn parses_udp4_and_verifies_checksum() {
        let p = udp4();
        let t = parse(&p).unwrap();
        assert_eq!(t.proto, PROTO_UDP);
        assert_eq!(&p[t.payload.clone()], b"hello");
        assert!(transport_checksum_ok(&p, &t));
    }

    #[test]
    fn flipped_bit_detected_then_fixed() {
        let mut p = udp4();
        let t = parse(&p).unwrap();
        p[t.payload.start + 2] ^= 0x10;
        assert!(!transport_checksum_ok(&p, &t));
        fix_transport_checksum(&mut p, &t);
        assert!(transport_checksum_ok(&p, &t));
        assert_eq!(&p[t.payload.clone()], b"he|lo");
    }

    #[test]
    fn tcp6_checksum_roundtrip_and_seq() {
        // IPv6 fd00::1 -> fd00::2, TCP 1->2, seq 0x01020304, data offset 5, payload "abc".
        let mut p = vec![0x60, 0, 0, 0, 0, 23, 6, 64];
        let mut src = [0u8; 16];
        src[0] = 0xfd;
        src[15] = 1;
        let mut dst = src;
        dst[15] = 2;
        p.extend_from_slice(&src);
        p.extend_from_slice(&dst);
        p.extend_from_slice(&[0, 1, 0, 2, 1, 2, 3, 4, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
        p.extend_from_slice(b"abc");
        let t = parse(&p).unwrap();
        assert_eq!(t.seq, Some(0x01020304));
        assert_eq!(&p[t.payload.clone()], b"abc");
        fix_transport_checksum(&mut p, &t);
        assert!(transport_checksum_ok(&p, &t));
        p[t.payload.start] ^= 1;
        assert!(!transport_checksum_ok(&p, &t));
    }

    #[test]
    fn fragments_truncated_and_other_protocols_are_not_parsed() {
        let mut p = udp4();
        p[6] = 0x20; // MF set
        assert_eq!(parse(&p), None);
        let mut p = udp4();
        p[9] = 1; // ICMP
        assert_eq!(parse(&p), None);
        let p = udp4();
        assert_eq!(parse(&p[..24]), None);
        assert_eq!(parse(&[]), None);
        assert_eq!(parse(&[0x45; 19]), None);
    }

    #[test]
    fn ipv4_udp_without_checksum_stays_without() {
        let mut p = udp4();
        let t = parse(&p).unwrap();
        p[26] = 0;
        p[27] = 0;
        p[t.payload.start] ^= 1;
        assert!(transport_checksum_ok(&p, &t));
        fix_transport_checksum(&mut p, &t);
        assert_eq!(&p[26..28], &[0, 0]);
    }

    mod fuzz {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            /// Whatever bytes arrive on a TUN device, parsing never panics and every
            /// range it gives lies inside the packet.
            #[test]
            fn parse_never_panics(pkt in proptest::collection::vec(any::<u8>(), 0..200)) {
                if let Some(t) = parse(&pkt) {
                    prop_assert!(t.start <= t.payload.start && t.payload.end <= pkt.len());
                    let _ = transport_checksum_ok(&pkt, &t);
                }
            }

            /// Any one-bit flip in the payload of a valid UDP packet is repaired.
            #[test]
            fn any_payload_flip_is_repaired(payload in proptest::collection::vec(any::<u8>(), 1..100),
                                            pick in any::<usize>(), bit in 0u8..8) {
                let mut p = crate::pcap::synth_udp("10.0.0.1:5".parse().unwrap(), "10.0.0.2:6".parse().unwrap(), &payload);
                let t = parse(&p).unwrap();
                let i = t.payload.start + pick % t.payload.len();
                p[i] ^= 1 << bit;
                fix_transport_checksum(&mut p, &t);
                prop_assert!(transport_checksum_ok(&p, &t));
            }
        }
    }
}
