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

impl UdpIo {
    pub fn open(listen: SocketAddr, to: SocketAddr) -> io::Result<UdpIo> {
        Ok(UdpIo {
            listen: new_socket(listen)?,
            to,
            clients: vec![],
            by_addr: HashMap::new(),
        })
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

    pub fn upstream_fd(&self, client: usize) -> RawFd {
        self.clients[client].upstream.as_raw_fd()
    }

    /// The client index of sender `from`, opening its upstream socket the first time
    /// (then its descriptor comes back too, to be watched). None when the client limit
    /// is reached or no socket can be opened: the datagram is dropped and counted.
    pub fn client_for(&mut self, from: SocketAddr) -> Option<(usize, Option<RawFd>)> {
        if let Some(&client) = self.by_addr.get(&from) {
            return Some((client, None));
        }
        if self.clients.len() >= MAX_CLIENTS {
            return None;
        }
        let upstream = new_socket(unspecified_like(&self.to))
            .and_then(|s| s.connect(self.to).map(|_| s))
            .ok()?;
        let fd = upstream.as_raw_fd();
        let client = self.clients.len();
        self.clients.push(Client { addr: from, upstream });
        self.by_addr.insert(from, client);
        Some((client, Some(fd)))
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
