//! A pcap file of what left the link (delivered packets), LINKTYPE_RAW (IP packets),
//! so Wireshark decodes transfers. In UDP-relay mode the engine sees only payloads,
//! so it writes them inside synthesized IPv4 (or IPv6) and UDP headers carrying the
//! real addresses and ports. The file is bounded: past `max_bytes` packets are no
//! longer written (the count of those is kept), so a long run cannot fill the disk.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use crate::checksum;

const LINKTYPE_RAW: u32 = 101;
const SNAPLEN: u32 = 65535 + 48;
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

pub struct Pcap {
    out: BufWriter<File>,
    written: u64,
    max_bytes: u64,
    pub skipped: u64,
}

impl Pcap {
    pub fn create(path: &Path, max_bytes: u64) -> io::Result<Pcap> {
        let mut out = BufWriter::new(File::create(path)?);
        // Global header: magic (microsecond timestamps), v2.4, tz 0, sigfigs 0, snaplen, link type.
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&[0; 8]);
        h.extend_from_slice(&SNAPLEN.to_le_bytes());
        h.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&h)?;
        Ok(Pcap {
            out,
            written: 24,
            max_bytes,
            skipped: 0,
        })
    }

    /// Record an IP packet seen at `wall_ns` (ns since the epoch).
    pub fn packet(&mut self, wall_ns: u64, ip: &[u8]) {
        let len = ip.len().min(SNAPLEN as usize);
        if self.written + 16 + len as u64 > self.max_bytes {
            self.skipped += 1;
            return;
        }
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((wall_ns / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((wall_ns % 1_000_000_000 / 1000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(len as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(ip.len() as u32).to_le_bytes());
        // A write error (disk full) stops the capture, never the link.
        if self
            .out
            .write_all(&rec)
            .and_then(|_| self.out.write_all(&ip[..len]))
            .is_err()
        {
            self.max_bytes = 0;
        }
        self.written += 16 + len as u64;
    }

    pub fn flush(&mut self) {
        let _ = self.out.flush();
    }
}

fn v6_of(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        IpAddr::V6(a) => a.octets(),
    }
}

/// An IP/UDP packet from `src` to `dst` around `payload`: IPv4 when both addresses
/// are IPv4, else IPv6 (IPv4 addresses mapped). Checksums are valid, so Wireshark
/// shows what the application got (a corrupted payload, not a bad checksum).
pub fn synth_udp(src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Vec<u8> {
    let udp_len = 8 + payload.len();
    let mut p = Vec::with_capacity(48 + payload.len());
    match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            // Lengths above 65535 cannot be expressed; such packets are cut by the snaplen anyway.
            let total = (20 + udp_len).min(0xffff) as u16;
            p.extend_from_slice(&[0x45, 0]);
            p.extend_from_slice(&total.to_be_bytes());
            p.extend_from_slice(&[0, 0, 0x40, 0, 64, checksum::PROTO_UDP, 0, 0]);
            p.extend_from_slice(&s.octets());
            p.extend_from_slice(&d.octets());
            let c = checksum::ipv4_header_checksum(&p);
            p[10..12].copy_from_slice(&c.to_be_bytes());
        }
        (s, d) => {
            p.extend_from_slice(&[0x60, 0, 0, 0]);
            p.extend_from_slice(&(udp_len.min(0xffff) as u16).to_be_bytes());
            p.extend_from_slice(&[checksum::PROTO_UDP, 64]);
            p.extend_from_slice(&v6_of(s));
            p.extend_from_slice(&v6_of(d));
        }
    }
    p.extend_from_slice(&src.port().to_be_bytes());
    p.extend_from_slice(&dst.port().to_be_bytes());
    p.extend_from_slice(&(udp_len.min(0xffff) as u16).to_be_bytes());
    p.extend_from_slice(&[0, 0]);
    p.extend_from_slice(payload);
    if let Some(t) = checksum::parse(&p) {
        // IPv4 checksum field is 0 here ("none"): set a non-zero placeholder so it is computed.
        let at = t.start + 6;
        p[at] = 0xff;
        checksum::fix_transport_checksum(&mut p, &t);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthesized_packets_parse_with_valid_checksums() {
        for (s, d) in [
            ("127.0.0.1:1000", "127.0.0.1:2000"),
            ("[::1]:1000", "[::1]:2000"),
            ("[::1]:1", "127.0.0.1:2"),
        ] {
            let p = synth_udp(s.parse().unwrap(), d.parse().unwrap(), b"payload!");
            let t = checksum::parse(&p).expect("parses");
            assert_eq!(&p[t.payload.clone()], b"payload!");
            assert!(checksum::transport_checksum_ok(&p, &t));
            assert_ne!(&p[t.start + 6..t.start + 8], &[0, 0]);
        }
    }

    #[test]
    fn file_is_bounded() {
        let path = std::env::temp_dir().join(format!("linkemu-pcap-test-{}", std::process::id()));
        let mut pc = Pcap::create(&path, 24 + 2 * (16 + 100)).unwrap();
        for _ in 0..5 {
            pc.packet(1, &[0x45; 100]);
        }
        pc.flush();
        assert_eq!(pc.skipped, 3);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 24 + 2 * 116);
        std::fs::remove_file(&path).unwrap();
    }
}
