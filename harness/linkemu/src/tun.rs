//! TUN mode: the two devices of one path, each created inside its host's network
//! namespace. Packets read from `a` (the sender's side) take the forward link and are
//! written to `b`; packets from `b` take the reverse link back to `a`.
//!
//! Creating a device in a namespace: open /run/netns/NAME, setns(CLONE_NEWNET) on this
//! (the engine's only) thread, TUNSETIFF, setns back to the namespace we started in.
//! The descriptor keeps working from any namespace. The engine leaves the devices down
//! and unaddressed (the harness configures them) and removes nothing: a TUN device
//! that is not persistent vanishes when its descriptor closes.
//!
//! Corruption rules (also in README.md, "Corruption"), chosen per path:
//! - `repair` (default): the link may flip a bit only in the transport payload of an
//!   unfragmented IPv4/IPv6 UDP or TCP packet (the bytes after the UDP/TCP header), and
//!   the engine then recomputes the UDP/TCP checksum over the pseudo-header, so the
//!   damage reaches the application instead of being dropped by the receiving kernel.
//!   Packets with nothing to damage (pure TCP ACKs, empty UDP datagrams, ICMP,
//!   fragments, other protocols) get an empty corruption range: the netem core then
//!   changes no byte and does not count the packet as corrupted.
//! - `netem`: as tc-netem, a bit anywhere in the packet (but the first byte, whose
//!   version nibble a TUN device refuses to take, where netem's packet would be dropped
//!   by the receiver: the same end), and no checksum is touched: the receiving kernel
//!   drops the packet (IPv4 header or UDP/TCP checksum) and TCP retransmits it.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

use crate::checksum;
use crate::config::{TunCorruption, TunSide};

const TUNSETIFF: libc::c_ulong = 0x400454ca;

#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Run `f` inside the network namespace at `netns` (if any), then come back.
fn in_netns<T>(netns: Option<&Path>, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let Some(target) = netns else { return f() };
    let ctx = |e: io::Error| io::Error::new(e.kind(), format!("netns {}: {e}", target.display()));
    let home = File::open("/proc/thread-self/ns/net").map_err(ctx)?;
    let there = File::open(target).map_err(ctx)?;
    // SAFETY: setns with a namespace descriptor; this thread is the only one.
    if unsafe { libc::setns(there.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
        return Err(ctx(io::Error::last_os_error()));
    }
    let result = f();
    // SAFETY: as above; failing to return home would leave the engine in the wrong
    // namespace for the next device, so it is fatal.
    if unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
        return Err(ctx(io::Error::last_os_error()));
    }
    result
}

/// Create (or attach to) TUN device `ifname` in the current namespace.
fn open_tun(ifname: &str) -> io::Result<OwnedFd> {
    let path = CString::new("/dev/net/tun").unwrap();
    // SAFETY: open with a valid C string.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    for (dst, src) in req.name.iter_mut().zip(ifname.bytes().take(libc::IFNAMSIZ - 1)) {
        *dst = src as libc::c_char;
    }
    // SAFETY: TUNSETIFF takes a struct ifreq, which IfReq lays out.
    if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

pub struct TunIo {
    a: OwnedFd,
    b: OwnedFd,
    pub names: [String; 2],
}

impl TunIo {
    pub fn open(a: &TunSide, b: &TunSide) -> Result<TunIo, String> {
        let open = |side: &TunSide, which: &str| {
            in_netns(side.netns.as_deref(), || open_tun(&side.ifname))
                .map_err(|e| format!("tun_{which} {:?}: {e}", side.ifname))
        };
        Ok(TunIo {
            a: open(a, "a")?,
            b: open(b, "b")?,
            names: [a.ifname.clone(), b.ifname.clone()],
        })
    }

    /// The device a direction reads from: forward (0) reads `a`, reverse (1) reads `b`.
    pub fn fd(&self, dir: usize) -> RawFd {
        if dir == 0 {
            self.a.as_raw_fd()
        } else {
            self.b.as_raw_fd()
        }
    }

    /// Read one IP packet arriving for direction `dir`; Ok(None) when there is none.
    pub fn read(&self, dir: usize, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: reading into a buffer of buf.len() bytes.
        let n = unsafe { libc::read(self.fd(dir), buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::WouldBlock {
                Ok(None)
            } else {
                Err(e)
            };
        }
        Ok(Some(n as usize))
    }

    /// Write a packet leaving in direction `dir` (forward writes `b`, reverse `a`).
    pub fn write(&self, dir: usize, pkt: &[u8]) -> io::Result<()> {
        let fd = self.fd(1 - dir);
        // SAFETY: writing pkt.len() bytes from pkt.
        let n = unsafe { libc::write(fd, pkt.as_ptr() as *const libc::c_void, pkt.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

/// Where corruption may land in an IP packet (rule `repair`): its transport payload, or nothing.
pub fn corrupt_range(pkt: &[u8]) -> std::ops::Range<usize> {
    checksum::parse(pkt).map_or(0..0, |t| t.payload)
}

/// Where corruption may land in an IP packet under `rule`: `repair`, as `corrupt_range`;
/// `netem`, the whole packet but its first byte.
pub fn corruption_range(pkt: &[u8], rule: TunCorruption) -> std::ops::Range<usize> {
    match rule {
        TunCorruption::Repair => corrupt_range(pkt),
        TunCorruption::Netem => 1.min(pkt.len())..pkt.len(),
    }
}

/// Key for counting repeats: the transport ports, TCP sequence number and payload.
/// A UDP datagram larger than the MTU crosses as IP fragments: its first fragment
/// (ports and the payload's first bytes) stands for it, the others count no repeat,
/// so `repeats` stays in datagrams. None for packets without payload (pure ACKs),
/// later fragments and non-UDP/TCP packets.
pub fn repeat_key(pkt: &[u8]) -> Option<u64> {
    let (proto, start, payload, seq) = match checksum::parse(pkt) {
        Some(t) => (t.proto, t.start, t.payload, t.seq.unwrap_or(0)),
        None => {
            let (start, payload) = first_fragment_udp(pkt)?;
            (checksum::PROTO_UDP, start, payload, 0)
        }
    };
    if payload.is_empty() {
        return None;
    }
    Some(crate::stats::payload_hash(&[
        &[proto],
        &pkt[start..start + 4],
        &seq.to_be_bytes(),
        &pkt[payload],
    ]))
}

/// Key for a packet's own draws on the link (`Link::enqueue_keyed`). A UDP datagram's
/// is `datagram_draw_key` of its payload, as in UDP-relay mode, so a seed makes the same
/// decisions on both; a fragment's, its payload bytes (and a later one's offset). None
/// for TCP, which draws in arrival order: the kernel picks a connection's ports and
/// first sequence number anew for each run, so a key of them would give every run of a
/// seed other draws.
pub fn draw_key(pkt: &[u8]) -> Option<u64> {
    match checksum::parse(pkt) {
        Some(t) if t.proto == checksum::PROTO_UDP => Some(datagram_draw_key(&pkt[t.payload])),
        Some(_) => None,
        None => match first_fragment_udp(pkt) {
            Some((_, payload)) => Some(crate::stats::payload_hash(&[b"first", &pkt[payload]])),
            None => {
                let (offset, body) = later_fragment(pkt)?;
                Some(crate::stats::payload_hash(&[&offset.to_be_bytes(), body]))
            }
        },
    }
}

/// The draw key of a UDP datagram's payload.
pub fn datagram_draw_key(payload: &[u8]) -> u64 {
    crate::stats::payload_hash(&[payload])
}

/// A fragment past the first (IPv4: offset not 0; IPv6: a Fragment header right after
/// the fixed header, offset not 0): its offset field and the bytes it carries.
fn later_fragment(pkt: &[u8]) -> Option<(u16, &[u8])> {
    match pkt.first()? >> 4 {
        4 if pkt.len() >= 20 => {
            let ihl = (pkt[0] & 0x0f) as usize * 4;
            let total = (u16::from_be_bytes([pkt[2], pkt[3]]) as usize).min(pkt.len());
            let offset = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x1fff;
            (ihl >= 20 && ihl <= total && offset != 0).then(|| (offset, &pkt[ihl..total]))
        }
        6 if pkt.len() >= 48 && pkt[6] == 44 => {
            let total = (40 + u16::from_be_bytes([pkt[4], pkt[5]]) as usize).min(pkt.len());
            let offset = u16::from_be_bytes([pkt[42], pkt[43]]) >> 3;
            (offset != 0).then(|| (offset, &pkt[48..total.max(48)]))
        }
        _ => None,
    }
}

/// Whether an IP packet is ICMP (IPv4 protocol 1, or IPv6 next header 58 right after
/// the fixed header): a kernel's error report such as "port unreachable".
pub fn is_icmp(pkt: &[u8]) -> bool {
    match pkt.first().map(|b| b >> 4) {
        Some(4) => pkt.get(9) == Some(&1),
        Some(6) => pkt.get(6) == Some(&58),
        _ => false,
    }
}

/// The application bytes the trace's `head` shows: the transport payload, or for the
/// first fragment of a UDP datagram the payload bytes it carries (so a fragmented
/// datagram's sequence number can still be read from the trace). Never corrupted:
/// corruption keeps to `corrupt_range`.
pub fn head_range(pkt: &[u8]) -> std::ops::Range<usize> {
    checksum::parse(pkt)
        .map(|t| t.payload)
        .or_else(|| first_fragment_udp(pkt).map(|(_, p)| p))
        .unwrap_or(0..0)
}

/// The first fragment of a fragmented UDP datagram (IPv4: MF set, offset 0; IPv6: a
/// Fragment header right after the fixed header, offset 0, M set): where its UDP
/// header starts and the payload bytes this fragment carries. None for anything else.
pub fn first_fragment_udp(pkt: &[u8]) -> Option<(usize, std::ops::Range<usize>)> {
    let (start, end) = match pkt.first()? >> 4 {
        4 if pkt.len() >= 20 => {
            let ihl = (pkt[0] & 0x0f) as usize * 4;
            let total = u16::from_be_bytes([pkt[2], pkt[3]]) as usize;
            let frag = u16::from_be_bytes([pkt[6], pkt[7]]);
            if ihl < 20 || total > pkt.len() || frag & 0x3fff != 0x2000 || pkt[9] != checksum::PROTO_UDP {
                return None;
            }
            (ihl, total)
        }
        6 if pkt.len() >= 48 => {
            const FRAGMENT_HEADER: u8 = 44;
            let total = 40 + u16::from_be_bytes([pkt[4], pkt[5]]) as usize;
            let frag = u16::from_be_bytes([pkt[42], pkt[43]]);
            if pkt[6] != FRAGMENT_HEADER
                || total > pkt.len()
                || frag & 0xfff9 != 0x0001
                || pkt[40] != checksum::PROTO_UDP
            {
                return None;
            }
            (48, total)
        }
        _ => return None,
    };
    (start + 8 <= end).then_some((start, start + 8..end))
}

/// After the link (rule `repair`): if a bit flip broke the UDP/TCP checksum, make it
/// valid again so the receiving kernel hands the damaged data to the application.
pub fn repair_checksum(pkt: &mut [u8]) {
    if let Some(t) = checksum::parse(pkt) {
        if !checksum::transport_checksum_ok(pkt, &t) {
            checksum::fix_transport_checksum(pkt, &t);
        }
    }
}

#[cfg(test)]
mod fragment_tests {
    use super::*;

    /// The first and a later fragment of an IPv4 UDP datagram (ports 1000 -> 2000),
    /// as a sender's kernel splits it, with IP identification `ident`.
    fn fragments4(ident: u16, payload: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let ip = |frag: u16, body: &[u8]| {
            let total = (20 + body.len()) as u16;
            let mut p = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
            p[2..4].copy_from_slice(&total.to_be_bytes());
            p[4..6].copy_from_slice(&ident.to_be_bytes());
            p[6..8].copy_from_slice(&frag.to_be_bytes());
            p.extend_from_slice(body);
            p
        };
        let mut first = vec![0x03, 0xe8, 0x07, 0xd0, 0, 0, 0x12, 0x34]; // UDP header (length unused here)
        first.extend_from_slice(&payload[..16]);
        (ip(0x2000, &first), ip(3, &payload[16..])) // MF, offset 0 / offset 24 bytes, last
    }

    fn fragment6(ident: u32, frag: u16, body: &[u8]) -> Vec<u8> {
        let mut p = vec![0x60, 0, 0, 0, 0, 0, 44, 64];
        p[4..6].copy_from_slice(&((8 + body.len()) as u16).to_be_bytes());
        p.extend_from_slice(&[0xfd; 16]);
        p.extend_from_slice(&[0xfe; 16]);
        p.extend_from_slice(&[17, 0]);
        p.extend_from_slice(&frag.to_be_bytes());
        p.extend_from_slice(&ident.to_be_bytes());
        p.extend_from_slice(body);
        p
    }

    #[test]
    fn a_resent_fragmented_datagram_repeats_once_by_its_first_fragment() {
        let payload: Vec<u8> = (0..40).collect();
        let (first, later) = fragments4(7, &payload);
        let (again, later_again) = fragments4(8, &payload); // the resend: new IP identification
        assert!(repeat_key(&first).is_some());
        assert_eq!(repeat_key(&first), repeat_key(&again));
        assert_eq!((repeat_key(&later), repeat_key(&later_again)), (None, None));
        let (other, _) = fragments4(9, &[1u8; 40]);
        assert_ne!(repeat_key(&first), repeat_key(&other));
    }

    #[test]
    fn every_fragment_of_a_resent_datagram_draws_as_its_first_copy_did() {
        let (first, later) = fragments4(7, b"a datagram larger than the MTU, in two pieces");
        let (first_again, later_again) = fragments4(8, b"a datagram larger than the MTU, in two pieces");
        let (_, other_later) = fragments4(7, b"a datagram larger than the MTU, in two places");
        assert_eq!(draw_key(&first), draw_key(&first_again));
        assert_eq!(draw_key(&later), draw_key(&later_again));
        assert!(draw_key(&later).is_some());
        assert_ne!(draw_key(&later), draw_key(&other_later));
        assert_ne!(draw_key(&later), draw_key(&first));
        let later6 = fragment6(5, 0x0008, b"later bytes");
        assert!(draw_key(&later6).is_some());
        assert_ne!(draw_key(&later6), draw_key(&fragment6(5, 0x0008, b"other bytes")));
    }

    #[test]
    fn a_whole_datagram_draws_by_its_payload_alone_as_in_udp_mode() {
        let udp = |ident: u16, port: u16, payload: &[u8]| {
            let total = (28 + payload.len()) as u16;
            let mut p = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
            p[2..4].copy_from_slice(&total.to_be_bytes());
            p[4..6].copy_from_slice(&ident.to_be_bytes());
            p.extend_from_slice(&port.to_be_bytes());
            p.extend_from_slice(&[0x07, 0xd0]);
            p.extend_from_slice(&(8 + payload.len() as u16).to_be_bytes());
            p.extend_from_slice(&[0, 0]);
            p.extend_from_slice(payload);
            p
        };
        let (a, b) = (udp(1, 1000, b"hello"), udp(9, 4000, b"hello"));
        assert_eq!(checksum::parse(&a).map(|t| t.payload.len()), Some(5));
        assert_eq!(draw_key(&a), Some(datagram_draw_key(b"hello")));
        assert_eq!(draw_key(&a), draw_key(&b));
        assert_ne!(draw_key(&a), draw_key(&udp(1, 1000, b"hellp")));
    }

    #[test]
    fn a_tcp_segment_draws_in_arrival_order() {
        let mut p = vec![0x45, 0, 0, 45, 0, 1, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        p.extend_from_slice(&[
            0x9c, 0x40, 0x14, 0x51, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0x20, 0, 0, 0, 0, 0,
        ]);
        p.extend_from_slice(b"hello");
        assert_eq!(checksum::parse(&p).map(|t| t.proto), Some(checksum::PROTO_TCP));
        assert_eq!(draw_key(&p), None);
    }

    #[test]
    fn first_fragments_show_their_payload_but_are_never_corrupted() {
        let payload: Vec<u8> = (0..40).collect();
        let (first, later) = fragments4(7, &payload);
        assert_eq!(&first[head_range(&first)], &payload[..16]);
        assert_eq!((checksum::parse(&first), head_range(&later)), (None, 0..0)); // no repair range
        let mut udp = vec![0x03, 0xe8, 0x07, 0xd0, 0, 0, 0, 0];
        udp.extend_from_slice(b"seq!");
        let first6 = fragment6(5, 0x0001, &udp);
        assert_eq!(&first6[head_range(&first6)], b"seq!");
        assert_eq!(checksum::parse(&first6), None);
        assert!(repeat_key(&first6).is_some());
        assert_eq!(repeat_key(&first6), repeat_key(&fragment6(6, 0x0001, &udp)));
        assert_eq!(repeat_key(&fragment6(5, 0x0008, b"later bytes")), None); // offset 8 bytes
        assert_eq!(first_fragment_udp(&first6[..47]), None);
    }
}

#[cfg(test)]
mod icmp_tests {
    use super::*;

    #[test]
    fn icmp_is_told_from_transport_packets_in_both_ip_versions() {
        let mut v4 = vec![
            0x45, 0, 0, 28, 0, 0, 0, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, 3, 3, 0, 0, 0, 0, 0, 0,
        ];
        assert!(is_icmp(&v4));
        v4[9] = checksum::PROTO_UDP;
        assert!(!is_icmp(&v4));
        let mut v6 = vec![0u8; 48];
        v6[0] = 0x60;
        v6[6] = 58;
        assert!(is_icmp(&v6));
        v6[6] = checksum::PROTO_TCP;
        assert!(!is_icmp(&v6));
        assert!(!is_icmp(&[]) && !is_icmp(&[0x45]));
    }
}

#[cfg(test)]
mod corruption_rules {
    use super::*;

    /// An IPv4 TCP segment with `payload`, checksums valid.
    fn tcp4(payload: &[u8]) -> Vec<u8> {
        let mut p = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 6, 0, 0, 198, 18, 1, 1, 198, 18, 1, 2];
        p.extend_from_slice(&[
            0x13, 0x89, 0xc0, 0x00, 0, 0, 0, 7, 0, 0, 0, 1, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0,
        ]);
        p.extend_from_slice(payload);
        let total = p.len() as u16;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        let h = checksum::ipv4_header_checksum(&p[..20]);
        p[10..12].copy_from_slice(&h.to_be_bytes());
        let t = checksum::parse(&p).unwrap();
        checksum::fix_transport_checksum(&mut p, &t);
        p
    }

    #[test]
    fn repair_rule_damages_only_the_payload_netem_rule_the_whole_packet() {
        let seg = tcp4(b"hello world");
        assert_eq!(corruption_range(&seg, TunCorruption::Repair), 40..seg.len());
        assert_eq!(corruption_range(&seg, TunCorruption::Netem), 1..seg.len());
        let ack = tcp4(b"");
        assert!(
            corruption_range(&ack, TunCorruption::Repair).is_empty(),
            "a pure ACK has nothing to damage"
        );
        assert_eq!(
            corruption_range(&ack, TunCorruption::Netem),
            1..ack.len(),
            "netem damages ACKs too"
        );
        assert!(corruption_range(&[], TunCorruption::Netem).is_empty());
    }

    #[test]
    fn under_the_netem_rule_every_flipped_bit_leaves_a_checksum_wrong() {
        // The receiving kernel checks the IPv4 header checksum and the TCP checksum:
        // whichever bit (after the first byte) flips, one of them no longer holds.
        let seg = tcp4(b"0123456789abcdef");
        for i in 1..seg.len() {
            for bit in 0..8 {
                let mut p = seg.clone();
                p[i] ^= 1 << bit;
                let header_ok = checksum::ipv4_header_checksum(&p[..20]) == 0; // sums to 0xffff
                let transport_ok = checksum::parse(&p).is_some_and(|t| checksum::transport_checksum_ok(&p, &t));
                assert!(
                    !(header_ok && transport_ok),
                    "byte {i} bit {bit}: both checksums still hold"
                );
            }
        }
    }
}
