"""harness.procs.BindWatch: a receiver's bind seen as soon as it happens, the socket
tables read only when the namespace's counters say a socket came or went."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from harness.procs import BindWatch, socket_counts

# binds UDP 5001 once told to on stdin's first line, then TCP 5002 (listening) on the second
BINDER = """import socket, sys, time
sys.stdin.readline(); u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('127.0.0.1', 5001))
print('udp', flush=True)
sys.stdin.readline(); t = socket.socket(); t.bind(('127.0.0.1', 5002)); t.listen()
print('tcp', flush=True)
time.sleep(30)"""


@pytest.mark.netns
def test_a_bind_is_seen_at_once_and_a_quiet_namespace_costs_no_table_reads():
    # a namespace of its own (nothing else binds there), the binder told when to bind
    binder = subprocess.Popen(
        ["unshare", "--net", sys.executable, "-c", BINDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 20
        while os.stat(f"/proc/{binder.pid}/ns/net").st_ino == os.stat("/proc/self/ns/net").st_ino:
            assert time.monotonic() < deadline, "unshare did not enter a namespace of its own"
            time.sleep(0.01)
        assert socket_counts(binder.pid) == (0, 0, 0, 0)
        udp, tcp = BindWatch(binder.pid, 5001, binder.pid), BindWatch(binder.pid, 5002, binder.pid)
        for _ in range(9):
            assert udp.sockets() == []
        assert (udp.polls, udp.reads) == (9, 1), "nine polls of a quiet namespace: one read of its tables"
        binder.stdin.write("\n"), binder.stdin.flush()
        assert binder.stdout.readline() == "udp\n"
        assert udp.sockets() == [("udp", "127.0.0.1", 5001)], "the counters moved: read and found at once"
        assert udp.reads == 2
        assert tcp.sockets() == [] and tcp.sockets() == [] and tcp.reads == 1  # UDP's bind is not 5002
        binder.stdin.write("\n"), binder.stdin.flush()
        assert binder.stdout.readline() == "tcp\n"
        assert tcp.sockets() == [("tcp", "127.0.0.1", 5002)], "a listen moves TCP's counter"
    finally:
        binder.kill()
        binder.wait()


def test_every_tenth_poll_reads_the_tables_whatever_the_counters_say(monkeypatch):
    import harness.procs as procs

    reads = []
    monkeypatch.setattr(procs, "socket_counts", lambda pid: (0, 1, 0, 0))
    monkeypatch.setattr(procs, "bound_sockets", lambda pid, pgid, port: reads.append(port) or [])
    watch = BindWatch(1234, 5001, 1234)
    for _ in range(25):
        assert watch.sockets() == []
    assert watch.reads == len(reads) == 3, "the first poll, the 10th and the 20th"


def test_unreadable_counters_read_the_tables_each_poll(monkeypatch):
    import harness.procs as procs

    monkeypatch.setattr(procs, "socket_counts", lambda pid: None)
    monkeypatch.setattr(procs, "bound_sockets", lambda pid, pgid, port: [])
    watch = BindWatch(1234, 5001, 1234)
    for _ in range(4):
        watch.sockets()
    assert watch.reads == 4


def test_counters_without_ipv6_are_still_read(monkeypatch):
    import harness.procs as procs

    real = procs._read_small

    def no_v6(path):
        if path.endswith("sockstat6"):
            raise FileNotFoundError(path)  # a kernel booted with IPv6 off
        return real(path)

    monkeypatch.setattr(procs, "_read_small", no_v6)
    counts = socket_counts(os.getpid())
    assert counts is not None and counts[0] >= 0 and counts[1] >= 0, "TCP and UDP from sockstat"
    assert counts[2:] == (-1, -1), "TCP6 and UDP6 unknown"
    monkeypatch.setattr(procs, "_read_small", lambda path: (_ for _ in ()).throw(PermissionError(path)))
    assert socket_counts(os.getpid()) is None
