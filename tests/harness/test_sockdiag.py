"""harness.sockdiag: a namespace's listening TCP sockets from the kernel's sock_diag,
as /proc's tables list them, without walking the established hash."""

from __future__ import annotations

import os
import socket
import sys
import time

import pytest

from harness import sockdiag
from harness.procs import Processes, bound_sockets


def inode(sock: socket.socket) -> str:
    return f"socket:[{os.fstat(sock.fileno()).st_ino}]"


def test_listeners_of_our_namespace_are_listening_tcp_sockets_only():
    with (
        socket.socket() as v4,
        socket.socket(socket.AF_INET6) as v6,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
        socket.socket() as idle,
    ):
        v4.bind(("127.0.0.1", 0)), v4.listen()
        v6.bind(("::", 0)), v6.listen()
        udp.bind(("127.0.0.1", 0))
        idle.bind(("127.0.0.1", 0))  # bound, not listening
        found = sockdiag.listeners(os.getpid())
        assert found[inode(v4)] == ("tcp", "127.0.0.1", v4.getsockname()[1])
        assert found[inode(v6)] == ("tcp", "::", v6.getsockname()[1])
        assert inode(udp) not in found and inode(idle) not in found
        # and bound_sockets, polling for one port, finds the listener through it
        assert bound_sockets(os.getpid(), os.getpid(), v4.getsockname()[1]) == [
            ("tcp", "127.0.0.1", v4.getsockname()[1])
        ]


LISTEN = "import socket, time\ns = socket.socket(); s.bind(('127.0.0.1', 5001)); s.listen(); print('up', flush=True); time.sleep(30)"


@pytest.mark.netns
def test_listeners_of_another_namespace_are_its_own(tmp_path):
    with socket.socket() as ours, Processes() as procs:
        ours.bind(("127.0.0.1", 0)), ours.listen()
        lines = []
        holder = procs.start(
            "holder", [sys.executable, "-c", LISTEN], cwd=str(tmp_path), new_netns=True, on_stdout_line=lines.append
        )
        deadline = time.monotonic() + 30
        while not lines and time.monotonic() < deadline:
            time.sleep(0.02)
        found = sockdiag.listeners(holder.pid)
        assert list(found.values()) == [("tcp", "127.0.0.1", 5001)]  # not ours: another namespace
        assert inode(ours) not in found
        assert bound_sockets(holder.pid, holder.pid, 5001) == [("tcp", "127.0.0.1", 5001)]
