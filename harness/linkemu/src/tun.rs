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
//! Corruption rule (also in README.md, "Corruption"): the link may flip a bit only in
//! the transport payload of an unfragmented IPv4/IPv6 UDP or TCP packet (the bytes
//! after the UDP/TCP header), and the engine then recomputes the UDP/TCP checksum over
//! the pseudo-header, so the damage reaches the application instead of being dropped
//! by the receiving kernel. Packets with nothing to damage (pure TCP ACKs, empty UDP
//! datagrams, ICMP, fragments, other protocols) get an empty corruption range: the
//! netem core then changes no byte and does not count the packet as corrupted.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

use crate::checksum;
use crate::config::TunSide;

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
    let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short, _pad: [0; 22] };
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
        Ok(TunIo { a: open(a, "a")?, b: open(b, "b")?, names: [a.ifname.clone(), b.ifname.clone()] })
    }

    /// The device a direction reads from: forward (0) reads `a`, reverse (1) reads `b`.
    pub fn fd(&self, dir: usize) -> RawFd {
        if dir == 0 { self.a.as_raw_fd() } else { self.b.as_raw_fd() }
    }

    /// Read one IP packet arriving for direction `dir`; Ok(None) when there is none.
    pub fn read(&self, dir: usize, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: reading into a buffer of buf.len() bytes.
        let n = unsafe { libc::read(self.fd(dir), buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::WouldBlock { Ok(None) } else { Err(e) };
        }
        Ok(Some(n as usize))
    }

    /// Write a packet leaving in direction `dir` (forward writes `b`, reverse `a`).
    pub fn write(&self, dir: usize, pkt: &[u8]) -> io::Result<()> {
        let fd = self.fd(1 - dir);
        // SAFETY: writing pkt.len() bytes from pkt.
        let n = unsafe { libc::write(fd, pkt.as_ptr() as *const libc::c_void, pkt.len()) };
        if n < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }
}

/// Where corruption may land in an IP packet: its transport payload, or nothing.
pub fn corrupt_range(pkt: &[u8]) -> std::ops::Range<usize> {
    checksum::parse(pkt).map_or(0..0, |t| t.payload)
}

/// Key for counting repeats: the transport ports, TCP sequence number and payload.
/// None for packets without payload (pure ACKs) and non-UDP/TCP packets.
pub fn repeat_key(pkt: &[u8]) -> Option<u64> {
    let t = checksum::parse(pkt)?;
    if t.payload.is_empty() {
        return None;
    }
    let seq = t.seq.unwrap_or(0).to_be_bytes();
    Some(crate::stats::payload_hash(&[&[t.proto], &pkt[t.start..t.start + 4], &seq, &pkt[t.payload]]))
}

/// After the link: if a bit flip broke the UDP/TCP checksum, make it valid again so
/// the receiving kernel hands the damaged data to the application.
pub fn repair_checksum(pkt: &mut [u8]) {
    if let Some(t) = checksum::parse(pkt) {
        if !checksum::transport_checksum_ok(pkt, &t) {
            checksum::fix_transport_checksum(pkt, &t);
        }
    }
}
