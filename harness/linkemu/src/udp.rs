//! UDP-relay mode: the sockets of one path.
//!
//! Programs send to the `listen` socket. Each client address gets its own upstream
//! socket connected to `to`, so the target sees one peer per client and its replies
//! arrive on that socket; they go back to the client from the `listen` socket.
//! The number of clients is bounded (`MAX_CLIENTS`); datagrams from more are dropped
//! and counted.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};

use crate::sys;

pub const MAX_CLIENTS: usize = 64;
/// Kernel socket buffers: a few hundred milliseconds of a 100 Mbit/s burst.
const SOCKET_BUFFER: i32 = 4 << 20;

struct Client {
    addr: SocketAddr,
    upstream: UdpSocket,
}

pub struct UdpIo {
    listen: UdpSocket,
    to: SocketAddr,
    clients: Vec<Client>,
    by_addr: HashMap<SocketAddr, usize>,
}

/// What one read gave.
pub enum Read {
    /// `len` bytes from `client` in the buffer; `new_fd` is set when this datagram
    /// opened a new client, whose upstream socket must be watched.
    Packet { client: usize, len: usize, new_fd: Option<RawFd> },
    /// A datagram that cannot be relayed (too many clients) or a socket error
    /// (e.g. ECONNREFUSED from the target): count it and go on.
    Dropped,
    /// Nothing more to read now.
    Empty,
}

fn new_socket(bind: SocketAddr) -> io::Result<UdpSocket> {
    let s = UdpSocket::bind(bind)?;
    s.set_nonblocking(true)?;
    sys::set_socket_buffers(s.as_raw_fd(), SOCKET_BUFFER);
    Ok(s)
}

fn unspecified_like(a: &SocketAddr) -> SocketAddr {
    match a {
        SocketAddr::V4(_) => SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
        SocketAddr::V6(_) => SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)),
    }
}

fn classify<T>(r: io::Result<T>, ok: impl FnOnce(T) -> Read) -> Read {
    match r {
        Ok(v) => ok(v),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Read::Empty,
        Err(_) => Read::Dropped,
    }
}

impl UdpIo {
    pub fn open(listen: SocketAddr, to: SocketAddr) -> io::Result<UdpIo> {
        Ok(UdpIo { listen: new_socket(listen)?, to, clients: vec![], by_addr: HashMap::new() })
    }

    pub fn listen_fd(&self) -> RawFd {
        self.listen.as_raw_fd()
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listen.local_addr().expect("bound socket has an address")
    }

    pub fn target(&self) -> SocketAddr {
        self.to
    }

    pub fn client_addr(&self, client: usize) -> SocketAddr {
        self.clients[client].addr
    }

    /// Read one datagram sent to the listen socket (forward direction).
    pub fn read_listen(&mut self, buf: &mut [u8]) -> Read {
        let (len, from) = match self.listen.recv_from(buf) {
            Ok(v) => v,
            Err(e) => return classify::<()>(Err(e), |_| Read::Empty),
        };
        if let Some(&client) = self.by_addr.get(&from) {
            return Read::Packet { client, len, new_fd: None };
        }
        if self.clients.len() >= MAX_CLIENTS {
            return Read::Dropped;
        }
        let upstream = match new_socket(unspecified_like(&self.to)).and_then(|s| s.connect(self.to).map(|_| s)) {
            Ok(s) => s,
            Err(_) => return Read::Dropped,
        };
        let fd = upstream.as_raw_fd();
        let client = self.clients.len();
        self.clients.push(Client { addr: from, upstream });
        self.by_addr.insert(from, client);
        Read::Packet { client, len, new_fd: Some(fd) }
    }

    /// Read one reply that arrived on a client's upstream socket (reverse direction).
    pub fn read_upstream(&mut self, client: usize, buf: &mut [u8]) -> Read {
        classify(self.clients[client].upstream.recv(buf), |len| Read::Packet { client, len, new_fd: None })
    }

    /// Forward: from the client's upstream socket to the target.
    pub fn send_forward(&self, client: usize, data: &[u8]) -> io::Result<()> {
        self.clients[client].upstream.send(data).map(|_| ())
    }

    /// Reverse: from the listen socket back to the client.
    pub fn send_reverse(&self, client: usize, data: &[u8]) -> io::Result<()> {
        self.listen.send_to(data, self.clients[client].addr).map(|_| ())
    }
}
