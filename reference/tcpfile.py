"""A file over kernel TCP: the baseline the sheets set beside the UDP protocols.

    python3 -m reference.tcpfile recv --port P --file OUT [--bind ADDR]
    python3 -m reference.tcpfile send --host H --port P --file IN [--json]

The receiver accepts one connection, writes what it reads to OUT and, at the
sender's end of stream, closes the file and then the connection. The sender connects,
sends the file, shuts its side down and waits for the receiver's close: so its exit
means every byte is in the receiver's file, and the harness's clock (the engine's, from
the SYN to the last packet) covers the whole download, as the UDP senders' does.
Reliability is the kernel's (checksums, retransmissions, congestion control); this
program adds nothing, so what the sheets measure is TCP itself. Standard library only.
Both sides report the congestion control their connection ran, read back from the
socket (TCP_CONGESTION), and the kernel release: the harness pins the algorithm per
route (harness/backends/tcp.py) and the rows record what actually ran.
"""

from __future__ import annotations

import argparse
import json
import platform
import socket
import sys
import time

from reference.cli import OneLineParser, port_number
from reference.runtime import TransferFailed, UsageError, check_output, main_guard, read_input

PROG = "python3 -m reference.tcpfile"
CHUNK = 1 << 16


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description="Send or receive a file over kernel TCP.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    send = commands.add_parser("send", help="send a file")
    recv = commands.add_parser("recv", help="receive a file")
    for sub in (send, recv):
        sub.add_argument("--port", required=True, type=port_number)
        sub.add_argument("--file", required=True, help="file to send / where to write")
        sub.add_argument("--json", action="store_true", help="print one JSON line of statistics at the end")
    send.add_argument("--host", required=True, help="receiver's host name or address (IPv4 or IPv6)")
    recv.add_argument("--bind", metavar="ADDR", help="address to listen on (default: every IPv4 and IPv6 one)")
    return parser


def listen(port: int, bind: str | None) -> socket.socket:
    """A listening TCP socket: on `bind`, else dual-stack on every address (IPv4 where
    the namespace has no IPv6)."""
    if bind is not None:
        try:
            family, _, _, _, sockaddr = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM)[0]
        except socket.gaierror as e:
            raise UsageError(f"--bind {bind!r}: {e.strerror}") from None
        candidates = [(family, sockaddr)]
    else:
        candidates = [(socket.AF_INET6, ("::", port)), (socket.AF_INET, ("0.0.0.0", port))]
    error: OSError | None = None
    for family, sockaddr in candidates:
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError as e:
            error = e
            continue
        try:
            if family == socket.AF_INET6 and bind is None:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(sockaddr)
            sock.listen(1)
            return sock
        except OSError as e:
            sock.close()
            error = e
    raise UsageError(f"cannot listen on TCP port {port}: {getattr(error, 'strerror', error)}")


def congestion_of(sock: socket.socket) -> str | None:
    """The congestion control a live TCP connection runs (TCP_CONGESTION), None if unknown."""
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    except (OSError, AttributeError):  # not Linux
        return None
    return raw.split(b"\0", 1)[0].decode(errors="replace") or None


def receive(port: int, filename: str, bind: str | None) -> dict:
    out = check_output(filename)
    server = listen(port, bind)
    conn, peer = server.accept()
    server.close()
    started, size = time.monotonic(), 0
    algorithm = congestion_of(conn)
    with conn, open(out, "wb") as f:
        while chunk := conn.recv(CHUNK):
            f.write(chunk)
            size += len(chunk)
        f.flush()
    # the file is closed before the connection: the sender's EOF means the bytes are written
    return {
        "bytes": size,
        "elapsed_s": time.monotonic() - started,
        "peer": peer[0],
        "congestion_control": algorithm,
        "kernel": platform.release(),
    }


def send(host: str, port: int, filename: str) -> dict:
    data = read_input(filename)
    started = time.monotonic()
    try:
        sock = socket.create_connection((host, port))
    except OSError as e:
        raise TransferFailed(f"cannot connect to {host}:{port}: {e.strerror or e}") from None
    with sock:
        algorithm = congestion_of(sock)
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(CHUNK):  # the receiver sends nothing; wait for its close
                pass
        except OSError as e:
            raise TransferFailed(f"connection to {host}:{port} failed: {e.strerror or e}") from None
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    elapsed = time.monotonic() - started
    # struct tcp_info: tcpi_total_retrans is the u32 at byte 100 (linux/tcp.h)
    retrans = int.from_bytes(info[100:104], sys.byteorder) if len(info) >= 104 else None
    return {
        "bytes": len(data),
        "elapsed_s": elapsed,
        "retransmissions": retrans,
        "throughput_kBps": len(data) / 1024 / elapsed if elapsed > 0 else None,
        "congestion_control": algorithm,
        "kernel": platform.release(),
    }


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "send":
        result = send(args.host, args.port, args.file)
        if args.json:
            print(json.dumps(result))
        else:
            print(
                f"sent {result['bytes']} bytes in {result['elapsed_s']:.3f} s: "
                f"{result['throughput_kBps'] or 0:.2f} KB/s, {result['retransmissions']} retransmissions, "
                f"{result['congestion_control'] or 'unknown'} congestion control"
            )
    else:
        result = receive(args.port, args.file, args.bind)
        if args.json:
            print(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    return main_guard(PROG, lambda: run(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
