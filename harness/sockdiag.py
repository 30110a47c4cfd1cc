"""The listening TCP sockets of a process's network namespace, asked of the kernel's
sock_diag netlink interface (what `ss -ltn` uses) rather than read from /proc.

Reading /proc/PID/net/tcp walks the kernel's whole established-connections hash,
which every namespace shares and which is sized by the machine's memory: milliseconds
of CPU a read on a large machine, where a receiver's bind is polled every 10 ms. A
sock_diag dump asked for listeners only walks the small listening hash.
`listeners` returns None when it cannot ask (no netlink, no right to enter the
namespace): the caller then reads /proc.
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import threading

from harness.linux import CLONE_NEWNET, libc

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
TCP_LISTEN = 10
_NLMSGHDR = struct.Struct("=IHHII")  # len, type, flags, seq, pid
_REQ_V2 = struct.Struct("=BBBxI48x")  # family, protocol, ext, states, an empty inet_diag_sockid
_DIAG_MSG = struct.Struct(
    "=BBBB2s2s16s16sI8xIIIII"
)  # family, state, timer, retrans, sport, dport, src, dst, if, cookie; expires, rqueue, wqueue, uid, inode


def _dump(sock: socket.socket, family: int) -> list[tuple[str, int, int]]:
    """(address, port, inode) of each TCP listener of `family` in the socket's namespace."""
    request = _REQ_V2.pack(family, socket.IPPROTO_TCP, 0, 1 << TCP_LISTEN)
    sock.send(
        _NLMSGHDR.pack(_NLMSGHDR.size + len(request), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + request
    )
    found = []
    while True:
        data = sock.recv(1 << 16)
        offset = 0
        while offset + _NLMSGHDR.size <= len(data):
            length, kind, _, _, _ = _NLMSGHDR.unpack_from(data, offset)
            if kind == NLMSG_DONE:
                return found
            if kind == NLMSG_ERROR or length < _NLMSGHDR.size:
                raise OSError("sock_diag refused the dump")
            msg_family, state, _, _, sport, _, src, _, _, _, _, _, _, inode = _DIAG_MSG.unpack_from(
                data, offset + _NLMSGHDR.size
            )
            if state == TCP_LISTEN:
                address = socket.inet_ntop(msg_family, src[:4] if msg_family == socket.AF_INET else src)
                found.append((address, int.from_bytes(sport, "big"), inode))
            offset += (length + 3) & ~3
        if not data:
            return found


def _netlink_in(pid: int) -> socket.socket:
    """A sock_diag socket in PID's network namespace: ours when it is the same; else
    made by a thread that enters PID's namespace (a socket stays in the namespace it was
    made in; setns moves only that thread, which then ends)."""
    if os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat("/proc/self/ns/net").st_ino:
        return socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
    made: list = []

    def enter() -> None:
        try:
            fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns")
            finally:
                os.close(fd)
            made.append(socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG))
        except OSError as e:
            made.append(e)

    thread = threading.Thread(target=enter, name="rdtlab-sockdiag")
    thread.start()
    thread.join()
    if isinstance(made[0], OSError):
        raise made[0]
    return made[0]


def listeners(pid: int) -> dict[str, tuple[str, str, int]] | None:
    """{"socket:[INODE]": ("tcp", address, port)} for every listening TCP socket (IPv4 and
    IPv6) in PID's network namespace, keyed as /proc/PID/fd links name sockets; None
    when the kernel cannot be asked."""
    try:
        with _netlink_in(pid) as sock:
            sock.settimeout(2.0)
            return {
                f"socket:[{inode}]": ("tcp", address, port)
                for family in (socket.AF_INET, socket.AF_INET6)
                for address, port, inode in _dump(sock, family)
            }
    except OSError:
        return None
