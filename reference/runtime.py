"""Runs a sans-IO protocol core on real UDP sockets.

One piece serves the COMN programs (reference/comn/) and the general command line
(reference/cli.py): they parse arguments, build a core, and call ``send_file`` or
``receive_file`` here. This module owns everything a core must not know about:
sockets, the clock, the wire format, files, and when to give up.

Timers are precise without a polling loop: the loop sleeps in select() exactly until
the core's next timer (or a datagram) and never spins. select() rather than epoll
because epoll rounds its timeout up to whole milliseconds.
"""

from __future__ import annotations

import errno
import os
import select
import socket
import sys
import time

from reference.core.api import Ack, Data, ReceiverCore, ReceiverStats, SenderCore, SenderStats
from reference.ending import LINGER, RETRY_INTERVALS, ReceiverEnding, ResendIntervals, SenderGiveUp  # noqa: F401

RECV_BUFFER = 4 * 1024 * 1024  # room for a full window arriving at once on loopback
MAX_DATAGRAM = 65535
BATCH = 256  # datagrams read per wake-up before timers are looked at again


class UsageError(Exception):
    """Bad arguments or inputs: one line to stderr, exit status 2."""


class TransferFailed(Exception):
    """The transfer could not finish (peer gone or silent): one line, exit status 1."""


# ---------------------------------------------------------------- inputs and outputs


def read_input(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise UsageError(f"input file {path!r} does not exist") from None
    except IsADirectoryError:
        raise UsageError(f"input file {path!r} is a directory") from None
    except OSError as e:
        raise UsageError(f"cannot read input file {path!r}: {e.strerror}") from None


# os.path, not pathlib or tempfile: every program start imports this module, and those two
# (with re, fnmatch, shutil, random) weigh heavily on a reference program's start-up CPU.


def check_output(path: str) -> str:
    """Fail early (before any traffic) if the output cannot be written there."""
    folder = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise UsageError(f"output {path!r} is a directory")
    if not os.path.isdir(folder):
        raise UsageError(f"output folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"output folder {folder!r} is not writable")
    return path


def write_atomically(path: str, data: bytes) -> None:
    """Write to a temporary file beside ``path`` and rename it: never a half-written file."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{time.monotonic_ns()}.part")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # a plain file's mode, less the umask
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------- sockets


def resolve(host: str, port: int) -> tuple[int, tuple]:
    """(address family, socket address) for a host name or literal, IPv4 or IPv6."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)
    except socket.gaierror as e:
        raise UsageError(f"cannot resolve host {host!r}: {e.strerror}") from None
    family, _, _, _, sockaddr = infos[0]
    return family, sockaddr


def connected_socket(host: str, port: int) -> socket.socket:
    """A UDP socket connected to (host, port): the kernel then delivers datagrams from
    that address only, so the sender never sees strangers."""
    family, sockaddr = resolve(host, port)
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECV_BUFFER)
    try:
        sock.connect(sockaddr)
    except OSError as e:
        sock.close()
        raise UsageError(f"cannot send to {host}:{port}: {e.strerror}") from None
    return sock


def listening_socket(port: int, bind: str | None = None) -> socket.socket:
    """A UDP socket bound to ``port``: on ``bind`` if given, else on every IPv4 and IPv6
    address (dual-stack), falling back to IPv4 where IPv6 is off."""
    if not 0 <= port <= 65535:
        raise UsageError(f"port {port} is out of range 0-65535")
    if bind is not None:
        family, sockaddr = resolve(bind, port)
        candidates = [(family, sockaddr)]
    else:
        candidates = [(socket.AF_INET6, ("::", port)), (socket.AF_INET, ("0.0.0.0", port))]
    error = None
    for family, sockaddr in candidates:
        try:
            sock = socket.socket(family, socket.SOCK_DGRAM)
        except OSError as e:  # no IPv6 in this namespace
            error = e
            continue
        try:
            if family == socket.AF_INET6 and bind is None:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECV_BUFFER)
            sock.bind(sockaddr)
            return sock
        except OSError as e:
            sock.close()
            error = e
            if e.errno == errno.EADDRINUSE:  # no point trying another family
                break
    if error is not None and error.errno == errno.EADDRINUSE:
        raise UsageError(f"port {port} is already in use")
    raise UsageError(f"cannot listen on port {port}: {getattr(error, 'strerror', error)}")


def _drain(receive):
    """Yield what ``receive`` (a socket's ``recv`` or ``recvfrom``) returns until the
    socket has nothing more (or BATCH)."""
    for _ in range(BATCH):
        try:
            got = receive(MAX_DATAGRAM, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return
        except ConnectionRefusedError:  # ICMP port unreachable: the peer is not up (yet)
            continue
        yield got


def _readable(sockets: list[socket.socket], timeout: float | None) -> list[socket.socket]:
    """The sockets with a datagram waiting, after at most ``timeout`` seconds (None: for ever)."""
    return select.select(sockets, [], [], timeout)[0]


# ---------------------------------------------------------------- sender


class SenderResult:
    def __init__(self, size: int, stats: SenderStats):
        self.size = size
        self.stats = stats
        self.first_send: float | None = None  # time.monotonic() of the first data message
        self.last_ack: float | None = None  # ... of the ACK that completed the transfer
        self.bad_datagrams = 0  # malformed / corrupt / unexpected ACKs dropped
        self.send_errors = 0  # sends refused by the OS (peer not up, path down)

    @property
    def elapsed(self) -> float:
        if self.first_send is None or self.last_ack is None:
            return 0.0
        return self.last_ack - self.first_send

    @property
    def throughput_kBps(self) -> float:
        """COMN throughput: file size in KB (1024 bytes) / first send to last ACK."""
        return self.size / 1024 / self.elapsed if self.elapsed > 0 else 0.0

    def to_dict(self) -> dict:
        s = self.stats
        rtts = s.rtt_samples
        return {
            "role": "sender",
            "bytes": self.size,
            "elapsed_s": round(self.elapsed, 6),
            "throughput_kBps": round(self.throughput_kBps, 3),
            "packets_sent": s.packets_sent,
            "retransmissions": s.retransmissions,
            "timeouts": s.timeouts,
            "fast_retransmits": s.fast_retransmits,
            "acks_received": s.acks_received,
            "rtt_samples": len(rtts),
            "rtt_mean_ms": round(1000 * sum(rtts) / len(rtts), 3) if rtts else None,
            "bad_datagrams": self.bad_datagrams,
            "send_errors": self.send_errors,
        }


def run_sender(
    core: SenderCore,
    size: int,
    fmt,
    destinations: list[tuple[str, int]],
    give_up_after: float = 30.0,
    clock=time.monotonic,
) -> SenderResult:
    """Drive ``core`` until it is done; path k of the core goes to ``destinations[k]``.

    Gives up (TransferFailed) when no valid ACK has arrived for ``give_up_after``
    seconds, or when the core itself reports that it gave up (``core.failed``).
    """
    sockets = [connected_socket(host, port) for host, port in destinations]
    result = SenderResult(size, core.stats)
    highest_sent = 0  # reference for unwrapping ACK numbers
    give_up = SenderGiveUp(give_up_after)
    multipath = len(sockets) > 1
    # Looked up once: the loops below run for every message (65536 and more in a file
    # that wraps the COMN numbers), where Python's attribute lookups add up.
    decode, encode, receive = fmt.decode_ack, fmt.encode_data, core.receive
    try:
        give_up.started(clock())

        def read_acks(sock: socket.socket, path: int) -> None:
            for datagram in _drain(sock.recv):
                now = clock()
                try:
                    ack = decode(datagram, highest_sent)
                except ValueError:
                    result.bad_datagrams += 1
                    continue
                if ack.seq > highest_sent:  # acknowledges what was never sent
                    result.bad_datagrams += 1
                    continue
                if multipath:  # the socket it came in on is the path
                    ack = Ack(ack.seq, ack.sack, path)
                give_up.heard(now)
                receive(ack, now)
                if result.last_ack is None and core.done:
                    result.last_ack = now

        while True:
            now = clock()
            deadline = core.next_timer()
            if deadline is not None and deadline <= now:
                # ACKs already waiting come first: a sender that woke late (a loaded
                # machine) would otherwise resend packets whose ACKs it holds.
                for path, sock in enumerate(sockets):
                    read_acks(sock, path)
                now = clock()
                deadline = core.next_timer()
            if deadline is not None and deadline <= now:
                core.handle_timer(now)
            out = core.datagrams_to_send(now)
            if out:
                if result.first_send is None:
                    result.first_send = now
                    give_up.heard(now)  # the silence counts from the first send
                give_up.sent(len(out))
                for msg in out:
                    if msg.seq > highest_sent:
                        highest_sent = msg.seq
                    try:
                        sockets[msg.path % len(sockets)].send(encode(msg))
                    except OSError:  # refused, unreachable, path down: a lost packet
                        result.send_errors += 1
            if core.failed:  # the core's own retry limit
                raise TransferFailed("gave up: a packet was resent the maximum number of times unanswered")
            if core.done:
                return result
            quit_at = give_up.deadline()
            if quit_at is not None and now >= quit_at:
                raise TransferFailed(
                    f"no acknowledgement for {now - give_up.last_heard:.0f} s "
                    f"({give_up.unanswered} data messages unanswered); receiver gone?"
                )
            timer = core.next_timer()
            wake = quit_at if timer is None else timer if quit_at is None else min(timer, quit_at)
            # (a core not done always has a timer; the fallback only keeps the loop alive)
            for sock in _readable(sockets, give_up_after if wake is None else max(0.0, wake - clock())):
                read_acks(sock, sockets.index(sock))
    finally:
        for sock in sockets:
            sock.close()


# ---------------------------------------------------------------- receiver


class ReceiverResult:
    def __init__(self, stats: ReceiverStats):
        self.stats = stats
        self.size = 0
        self.bad_datagrams = 0  # malformed / corrupt datagrams dropped
        self.strangers = 0  # datagrams from an address that is not the sender's
        self.first_data: float | None = None
        self.complete_at: float | None = None
        self.peers: list = []

    def to_dict(self) -> dict:
        s = self.stats
        return {
            "role": "receiver",
            "bytes": self.size,
            "packets_received": s.packets_received,
            "duplicates": s.duplicates,
            "out_of_window": s.out_of_window,
            "acks_sent": s.acks_sent,
            "bad_datagrams": self.bad_datagrams,
            "strangers": self.strangers,
        }


def run_receiver(
    core: ReceiverCore,
    fmt,
    sock: socket.socket,
    output: str,
    max_peers: int = 1,
    linger: float = LINGER,
    max_linger: float = 120.0,
    idle_timeout: float = 60.0,
    retry_intervals: int = RETRY_INTERVALS,
    clock=time.monotonic,
) -> ReceiverResult:
    """Feed ``core`` the datagrams arriving on ``sock`` until the file is complete.

    The first ``max_peers`` source addresses that send a valid data message are the
    sender (one per path); anything else is a stranger and ignored. Once complete the
    file is written atomically, then the receiver lingers, re-acknowledging
    duplicates (its last ACK may have been lost), until the sender has been silent
    long enough that it cannot need it any more (reference/ending.py: ``linger`` s or
    ``retry_intervals`` of the sender's retry intervals as seen here, whichever is
    longer; at most ``max_linger`` s). Before completion, silence of ``idle_timeout`` seconds after
    the first datagram is a failure: no file is written.
    """
    result = ReceiverResult(core.stats)
    peers: list = result.peers  # accepted source addresses, first come first served
    peer_path: dict = {}  # source address -> its index in peers
    path_address: dict = {}  # path id -> the address its data came from
    highest = 0  # reference for unwrapping sequence numbers
    window_limit = 1 << (fmt.seq_bits - 2)  # the largest window the format allows
    ending = ReceiverEnding(linger, max_linger, idle_timeout, retry_intervals)
    decode, encode, receive = fmt.decode_data, fmt.encode_ack, core.receive  # looked up once
    try:
        while True:
            wake = ending.deadline()  # None before the first datagram: a server waits
            if wake is not None and clock() >= wake:
                if result.complete_at is not None:
                    return result
                raise TransferFailed(f"sender silent for {idle_timeout:g} s before the file was complete")
            if not _readable([sock], None if wake is None else max(0.0, wake - clock())):
                continue
            for datagram, source in _drain(sock.recvfrom):
                now = clock()
                peer = peer_path.get(source)
                if peer is None and len(peers) >= max_peers:
                    result.strangers += 1
                    continue
                try:
                    msg = decode(datagram, highest)
                except ValueError:
                    result.bad_datagrams += 1
                    continue
                if not 0 <= msg.seq <= highest + window_limit:  # no sender's window reaches there
                    result.bad_datagrams += 1
                    continue
                if peer is None:
                    peer = peer_path[source] = len(peers)
                    peers.append(source)
                if peer and not fmt.has_path:  # no path id on the wire: the peer tells it
                    msg = Data(msg.seq, msg.payload, msg.eof, peer)
                if msg.path not in path_address:
                    path_address[msg.path] = source
                if msg.seq > highest:
                    highest = msg.seq
                ending.heard(msg.seq, now)
                if result.first_data is None:
                    result.first_data = now
                for ack in receive(msg, now):
                    try:
                        sock.sendto(encode(ack), path_address.get(ack.path, source))
                    except OSError:
                        pass  # an ACK that cannot go out is a lost ACK
                if result.complete_at is None and core.complete:
                    data = core.output()
                    write_atomically(output, data)
                    result.size, result.complete_at = len(data), now
                    ending.completed(now)
    finally:
        sock.close()


# ---------------------------------------------------------------- the programs' entry


def main_guard(prog: str, body) -> int:
    """Run ``body()`` (returns an exit status); turn the expected failures into one line
    on stderr and the conventional exit status, never a traceback."""
    try:
        return body()
    except UsageError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    except NotImplementedError as e:  # a protocol whose core is not written yet
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    except TransferFailed as e:
        print(f"{prog}: failed: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def send_file(
    make_core, filename: str, fmt, destinations: list[tuple[str, int]], give_up_after: float = 30.0
) -> SenderResult:
    """Read ``filename``, build the core with ``make_core(data)`` and send it."""
    data = read_input(filename)
    core = make_core(data)
    return run_sender(core, len(data), fmt, destinations, give_up_after)


def receive_file(
    core: ReceiverCore, fmt, port: int, filename: str, bind: str | None = None, **options
) -> ReceiverResult:
    """Listen on ``port`` and receive into ``filename`` (options: see run_receiver)."""
    output = check_output(filename)
    sock = listening_socket(port, bind)
    return run_receiver(core, fmt, sock, output, **options)
