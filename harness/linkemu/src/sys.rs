//! Thin, safe wrappers over the Linux calls the event loop needs (epoll, timerfd,
//! signalfd, clocks). Each returns `io::Result` so callers never see raw errno.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the clock of every timestamp the engine reports
/// (the same clock as Python's `time.monotonic_ns()`).
pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Wall-clock time in nanoseconds since the epoch (pcap timestamps only).
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec; these clocks always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Ask the kernel not to coalesce our timer wake-ups (default slack is 50 µs).
pub fn set_timer_slack_1ns() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument; failure is harmless.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Run at real-time priority (SCHED_FIFO 1) when allowed, so other work on a busy
/// machine does not delay the link's departures (BENCHMARKS.md, "The engine": the lag
/// at normal priority under load). The engine sleeps whenever nothing is
/// due, so it cannot starve the machine. Set LINKEMU_SCHED=normal to opt out.
/// Returns whether real-time scheduling is on.
pub fn try_realtime() -> bool {
    if std::env::var("LINKEMU_SCHED").is_ok_and(|v| v == "normal") {
        return false;
    }
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: sched_setscheduler on ourselves with a valid parameter; EPERM is fine.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = check(libc::fcntl(fd, libc::F_GETFL))?;
        check(libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK))?;
    }
    Ok(())
}

/// Large socket buffers so a burst at 100 Mbit/s is absorbed by the kernel while the
/// engine is busy. The FORCE options pass net.core.[rw]mem_max when we are root;
/// otherwise the plain ones give what the limits allow. Failure only means smaller buffers.
pub fn set_socket_buffers(fd: RawFd, bytes: libc::c_int) {
    for (force, plain) in [
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
    ] {
        let set = |opt| {
            // SAFETY: setsockopt with a valid int option value.
            unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    opt,
                    &bytes as *const _ as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            }
        };
        if set(force) < 0 {
            set(plain);
        }
    }
}

pub struct Epoll {
    fd: OwnedFd,
}

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: epoll_create1 returns a new descriptor or -1.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Epoll {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Watch `fd` for input; `token` comes back with each event.
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: ev is a valid epoll_event.
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    pub fn remove(&self, fd: RawFd) {
        // SAFETY: removing a descriptor; an error (already gone) is harmless.
        unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut()) };
    }

    /// Wait for events (forever: the timerfd carries every deadline). Returns tokens.
    pub fn wait(&self, out: &mut Vec<u64>) -> io::Result<()> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 64];
        // SAFETY: evs has room for 64 events.
        let n = unsafe { libc::epoll_wait(self.fd.as_raw_fd(), evs.as_mut_ptr(), 64, -1) };
        out.clear();
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(e)
            };
        }
        out.extend(evs[..n as usize].iter().map(|e| e.u64));
        Ok(())
    }
}

/// A CLOCK_MONOTONIC timerfd armed at absolute deadlines (nanosecond precision).
pub struct Timer {
    fd: OwnedFd,
    armed_at: Option<u64>,
}

impl Timer {
    pub fn new() -> io::Result<Timer> {
        // SAFETY: timerfd_create returns a new descriptor or -1.
        let fd = check(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) })?;
        Ok(Timer {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            armed_at: None,
        })
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Arm at `deadline` (absolute monotonic ns), or disarm with None. Skips the
    /// syscall when nothing changed.
    pub fn arm(&mut self, deadline: Option<u64>) {
        if deadline == self.armed_at {
            return;
        }
        self.armed_at = deadline;
        // A zero it_value disarms; a deadline in the past fires at once, so use >= 1 ns.
        let ns = deadline.map_or(0, |d| d.max(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: (ns / 1_000_000_000) as _,
                tv_nsec: (ns % 1_000_000_000) as _,
            },
        };
        // SAFETY: valid itimerspec; TFD_TIMER_ABSTIME makes it an absolute deadline.
        unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
    }

    /// Consume the expiry count after the timer fired (it must be re-armed).
    pub fn acknowledge(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: reading 8 bytes into an 8-byte buffer; EAGAIN is fine.
        unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, 8) };
        self.armed_at = None;
    }
}

/// SIGTERM and SIGINT as a readable descriptor, so they are handled in the loop.
pub struct Signals {
    fd: OwnedFd,
}

impl Signals {
    pub fn new() -> io::Result<Signals> {
        // SAFETY: building and installing a signal mask; signalfd returns a new fd.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::sigaddset(&mut set, libc::SIGINT);
            check(libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()))?;
            // A peer that vanished must not kill us when we write to it.
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            let fd = check(libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC))?;
            Ok(Signals {
                fd: OwnedFd::from_raw_fd(fd),
            })
        }
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// True when a termination signal is pending (consumes it).
    pub fn take(&self) -> bool {
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        // SAFETY: reading one siginfo into a buffer of its size.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), &mut info as *mut _ as *mut libc::c_void, size) };
        n == size as isize
    }
}

/// Datagrams taken per recvmmsg call.
pub const RECV_BATCH: usize = 32;
/// Room for each: the largest UDP payload or IP packet.
pub const RECV_SIZE: usize = 65536;

/// Buffers for receiving up to RECV_BATCH datagrams with one recvmmsg call: one
/// syscall for a burst instead of one per datagram (the engine's I/O is syscall-bound).
pub struct RecvBatch {
    buf: Vec<u8>,
    addrs: Vec<libc::sockaddr_storage>,
    lens: Vec<usize>,
    truncated: Vec<bool>,
}

impl Default for RecvBatch {
    fn default() -> Self {
        RecvBatch {
            buf: vec![0; RECV_BATCH * RECV_SIZE],
            // SAFETY: all-zero is a valid sockaddr_storage.
            addrs: vec![unsafe { std::mem::zeroed() }; RECV_BATCH],
            lens: vec![0; RECV_BATCH],
            truncated: vec![false; RECV_BATCH],
        }
    }
}

impl RecvBatch {
    /// Receive what is waiting on `fd`, without blocking: Ok(0) when nothing is.
    pub fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        let mut iovs: Vec<libc::iovec> = self
            .buf
            .chunks_mut(RECV_SIZE)
            .map(|c| libc::iovec {
                iov_base: c.as_mut_ptr() as *mut libc::c_void,
                iov_len: RECV_SIZE,
            })
            .collect();
        let mut msgs: Vec<libc::mmsghdr> = iovs
            .iter_mut()
            .zip(self.addrs.iter_mut())
            .map(|(iov, addr)| {
                // SAFETY: a zeroed mmsghdr is valid; we point it at our buffers.
                let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
                m.msg_hdr.msg_name = addr as *mut _ as *mut libc::c_void;
                m.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
                m.msg_hdr.msg_iov = iov;
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        // SAFETY: msgs holds RECV_BATCH headers pointing into buffers that outlive the call.
        let n = unsafe {
            libc::recvmmsg(
                fd,
                msgs.as_mut_ptr(),
                RECV_BATCH as u32,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::WouldBlock {
                Ok(0)
            } else {
                Err(e)
            };
        }
        for (i, m) in msgs[..n as usize].iter().enumerate() {
            self.lens[i] = m.msg_len as usize;
            self.truncated[i] = m.msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
        }
        Ok(n as usize)
    }

    /// Datagram `i` of the last `recv`: its bytes, its sender and whether it was cut.
    pub fn get(&self, i: usize) -> (&[u8], Option<std::net::SocketAddr>, bool) {
        let start = i * RECV_SIZE;
        (
            &self.buf[start..start + self.lens[i]],
            sockaddr_to_std(&self.addrs[i]),
            self.truncated[i],
        )
    }
}

fn sockaddr_to_std(a: &libc::sockaddr_storage) -> Option<std::net::SocketAddr> {
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};
    match a.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: the family says this storage holds a sockaddr_in.
            let s = unsafe { &*(a as *const _ as *const libc::sockaddr_in) };
            let ip = Ipv4Addr::from(u32::from_be(s.sin_addr.s_addr));
            Some(SocketAddrV4::new(ip, u16::from_be(s.sin_port)).into())
        }
        libc::AF_INET6 => {
            // SAFETY: the family says this storage holds a sockaddr_in6.
            let s = unsafe { &*(a as *const _ as *const libc::sockaddr_in6) };
            let ip = Ipv6Addr::from(s.sin6_addr.s6_addr);
            Some(SocketAddrV6::new(ip, u16::from_be(s.sin6_port), s.sin6_flowinfo, s.sin6_scope_id).into())
        }
        _ => None,
    }
}
