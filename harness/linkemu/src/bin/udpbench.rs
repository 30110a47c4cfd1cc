//! Helpers for the engine benchmark (bench/engine.py), not part of the kit:
//!   udpbench relay LISTEN TO      the minimal plain relay: recv, send, nothing else;
//!                                 prints how many it forwarded on SIGTERM/SIGINT
//!   udpbench blast TO SIZE SECS   send SIZE-byte datagrams to TO as fast as possible
//!                                 (sendmmsg batches); prints how many it sent
//! The relay is the yardstick for linkemu's capacity: the same machine, the same
//! sockets, no pipeline.

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn relay(listen: &str, to: &str) {
    let sock = UdpSocket::bind(listen).expect("bind listen");
    let up = UdpSocket::bind(if to.starts_with('[') { "[::]:0" } else { "0.0.0.0:0" }).expect("bind upstream");
    up.connect(to).expect("connect");
    for fd in [sock.as_raw_fd(), up.as_raw_fd()] {
        linkemu::sys::set_socket_buffers(fd, 4 << 20);
    }
    // SAFETY: installing a handler that only stores to an atomic; no SA_RESTART, so
    // a blocked recv returns EINTR and the loop sees STOP.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
    }
    println!(
        "{{\"event\": \"ready\", \"listen\": \"{}\"}}",
        sock.local_addr().unwrap()
    );
    let mut buf = vec![0u8; 65536];
    let mut forwarded: u64 = 0;
    while !STOP.load(Ordering::Relaxed) {
        if let Ok(n) = sock.recv(&mut buf) {
            if up.send(&buf[..n]).is_ok() {
                forwarded += 1;
            }
        }
    }
    println!("{{\"forwarded\": {forwarded}}}");
}

fn blast(to: &str, size: usize, secs: f64) {
    let sock = UdpSocket::bind(if to.starts_with('[') { "[::]:0" } else { "0.0.0.0:0" }).expect("bind");
    sock.connect(to).expect("connect");
    const BATCH: usize = 32;
    let payload = vec![0x5au8; size];
    let mut iov: Vec<libc::iovec> = (0..BATCH)
        .map(|_| libc::iovec {
            iov_base: payload.as_ptr() as *mut _,
            iov_len: size,
        })
        .collect();
    let mut msgs: Vec<libc::mmsghdr> = iov
        .iter_mut()
        .map(|v| {
            // SAFETY: a zeroed msghdr is valid; we point it at one iovec.
            let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
            m.msg_hdr.msg_iov = v;
            m.msg_hdr.msg_iovlen = 1;
            m
        })
        .collect();
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut sent: u64 = 0;
    while Instant::now() < end {
        // SAFETY: msgs holds BATCH valid headers on a connected socket.
        let n = unsafe { libc::sendmmsg(sock.as_raw_fd(), msgs.as_mut_ptr(), BATCH as u32, 0) };
        if n > 0 {
            sent += n as u64;
        }
    }
    println!("{{\"sent\": {sent}}}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["relay", listen, to] => relay(listen, to),
        ["blast", to, size, secs] => blast(to, size.parse().expect("SIZE"), secs.parse().expect("SECS")),
        _ => {
            eprintln!("usage: udpbench relay LISTEN TO | udpbench blast TO SIZE SECS");
            std::process::exit(2);
        }
    }
}
