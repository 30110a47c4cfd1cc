"""The general command line for every reference protocol and option.

    python3 -m reference send --protocol sr --host H --port P --file F [options]
    python3 -m reference recv --protocol sr --port P --file F [options]

Standard library only, like the COMN programs, and built on the same runtime
(reference/runtime.py). Bad arguments get one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from reference.core import PROTOCOLS, CoreConfig, make_receiver, make_sender
from reference.core.config import TAIL_COPIES
from reference.ending import LINGER
from reference.runtime import UsageError, main_guard, receive_file, send_file
from reference.wire import FORMATS, get_format

PROG = "python3 -m reference"


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the problem."""

    def error(self, message):
        raise UsageError(f"{message} (see {self.prog} --help)")


def _number(kind, minimum, what):
    def convert(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not value >= minimum or value == float("inf"):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return convert


positive_int = _number(int, 1, "a whole number of at least 1")
count = _number(int, 0, "a whole number of at least 0")
positive_ms = _number(float, 1e-3, "a positive number of milliseconds")
seconds = _number(float, 0.0, "a number of seconds, 0 or more")


def port_number(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {text!r}")
    return int(text)


def host_port(text: str) -> tuple[str, int]:
    """HOST:PORT, with an IPv6 literal in brackets: [::1]:5000."""
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]"), port_number(port)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description="Send or receive a file with a reference protocol over UDP.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    send = commands.add_parser("send", help="send a file")
    recv = commands.add_parser("recv", help="receive a file")
    for sub in (send, recv):
        sub.add_argument("--protocol", required=True, choices=PROTOCOLS)
        sub.add_argument("--port", required=True, type=port_number)
        sub.add_argument("--file", required=True, help="file to send / where to write")
        sub.add_argument(
            "--format", choices=list(FORMATS), help="wire format (default: comn; ext for mh); see reference/PROTOCOL.md"
        )
        sub.add_argument("--payload", type=positive_int, default=1024, help="file bytes per packet (default 1024)")
        windows = sub.add_mutually_exclusive_group()
        windows.add_argument("--window", type=positive_int, help="window in packets (default 1)")
        windows.add_argument("--window-bytes", type=positive_int, help="window in bytes instead (tcp)")
        sub.add_argument("--json", action="store_true", help="print one JSON line of statistics at the end")
    send.add_argument("--host", required=True, help="receiver's host name or address (IPv4 or IPv6)")
    send.add_argument(
        "--timeout",
        type=positive_ms,
        help="retransmission timeout in ms (default 100); with --adaptive, the initial RTO",
    )
    send.add_argument("--adaptive", action="store_true", help="adaptive RTO (RFC 6298, Karn's rule)")
    send.add_argument(
        "--backoff",
        action=argparse.BooleanOptionalAction,
        help="double a packet's timeout at each resend (default: on with --adaptive)",
    )
    send.add_argument(
        "--backoff-until-sample",
        action="store_true",
        help="with --adaptive: keep the back-off until the first RTT sample (RFC 6298 5.7)",
    )
    send.add_argument(
        "--fast-retransmit", type=count, metavar="K", help="resend after K duplicate ACKs (0 = off; default 3)"
    )
    send.add_argument(
        "--max-in-flight",
        type=positive_int,
        metavar="N",
        help="at most N packets in flight even if the window is larger (SR, mh)",
    )
    send.add_argument(
        "--pace", action="store_true", help="SR: spread new packets out, a window per round trip (as Sender4 does)"
    )
    send.add_argument(
        "--repair-copies",
        type=positive_int,
        metavar="N",
        help="SR, mh: send a packet that later ACKs show lost N times at once (default 1; Sender4: 2)",
    )
    send.add_argument(
        "--tail-copies",
        type=positive_int,
        metavar="N",
        help="SR: once every packet has been sent, send each resend (and the last "
        "packet) N times at once (default 3; 1 = off)",
    )
    send.add_argument(
        "--path",
        type=host_port,
        action="append",
        default=[],
        metavar="HOST:PORT",
        help="mh: a further path to the receiver (repeat for each)",
    )
    send.add_argument(
        "--dead-path-timeouts",
        type=positive_int,
        metavar="N",
        help="mh: mark a path dead when it has heard no ACK for N of its RTOs "
        "while packets were in flight on it (default 5)",
    )
    send.add_argument("--max-retries", type=count, metavar="N", help="give up after N resends of one packet")
    send.add_argument(
        "--give-up",
        type=_number(float, 1e-3, "a positive number of seconds"),
        metavar="S",
        help="give up after S seconds without any ACK (default 30, or 20 timeouts if longer)",
    )
    recv.add_argument("--bind", metavar="ADDR", help="address to listen on (default: every IPv4 and IPv6 one)")
    recv.add_argument(
        "--paths", type=positive_int, help="mh: number of paths (senders' addresses) to accept (default 2)"
    )
    recv.add_argument(
        "--linger",
        type=seconds,
        default=LINGER,
        metavar="S",
        help=f"once complete, exit after S seconds without a datagram, or 20 of the sender's "
        f"retry intervals if longer (default {LINGER:g}; reference/PROTOCOL.md)",
    )
    recv.add_argument(
        "--idle-timeout",
        type=_number(float, 1e-3, "a positive number of seconds"),
        default=60.0,
        metavar="S",
        help="fail if the sender is silent S seconds mid-transfer (default 60)",
    )
    # `--help` at the top shows every option of both commands
    parser.epilog = (
        "\n".join(sub.format_usage() for sub in (send, recv))
        + "\nWire formats, ending and exit statuses: reference/PROTOCOL.md"
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def byte_order_format(big: str) -> str:
    """`big` or its little-endian twin ("comn" / "comn-le", "mh" / "mh-le"), as
    RDT_BYTE_ORDER says: the byte order a student's programs chose, which the grader
    detects and gives the reference programs of assignments that leave it open."""
    order = os.environ.get("RDT_BYTE_ORDER", "big")
    if order not in ("big", "little"):
        raise UsageError(f"RDT_BYTE_ORDER must be big or little, got {order!r}")
    return big if order == "big" else f"{big}-le"


def settings(args) -> tuple[CoreConfig, object]:
    """The core's configuration and the wire format, checked against each other."""
    fmt = get_format(args.format or ("ext" if args.protocol == "mh" else "comn"))
    if args.payload > fmt.max_payload:
        raise UsageError(
            f"--payload {args.payload} is too large for the {fmt.name} format (at most {fmt.max_payload} bytes)"
        )
    paths = 1
    if args.command == "send":
        if args.path and args.protocol != "mh":
            raise UsageError("--path is for --protocol mh only")
        paths = 1 + len(args.path)
    elif args.paths is not None:
        if args.protocol != "mh":
            raise UsageError("--paths is for --protocol mh only")
        paths = args.paths
    elif args.protocol == "mh":
        paths = 2
    options = dict(
        payload_size=args.payload,
        window=args.window or 1,
        window_bytes=args.window_bytes,
        paths=paths,
        sack=fmt.has_sack,
        seq_modulus=1 << fmt.seq_bits,
    )
    if args.command == "send":
        options.update(
            adaptive=args.adaptive, backoff=args.backoff, pace=args.pace, backoff_until_sample=args.backoff_until_sample
        )
        if args.protocol == "sr":
            options["tail_copies"] = TAIL_COPIES if args.tail_copies is None else args.tail_copies
        elif args.tail_copies is not None:
            raise UsageError("--tail-copies is for --protocol sr only (mh sends its own, over its other paths)")
        if args.timeout is not None:
            options["initial_rto" if args.adaptive else "timeout"] = args.timeout / 1000
        for name, field in (
            ("fast_retransmit", "dup_ack_threshold"),
            ("dead_path_timeouts", "dead_path_timeouts"),
            ("max_retries", "max_retries"),
            ("max_in_flight", "max_in_flight"),
            ("repair_copies", "repair_copies"),
        ):
            if getattr(args, name) is not None:
                options[field] = getattr(args, name)
    config = CoreConfig(**options)
    # Unwrapping a 16-bit number is safe while the window spans under a quarter of the
    # sequence space (PROTOCOL.md, "Sequence numbers").
    limit = 1 << (fmt.seq_bits - 2)
    if args.protocol != "sw" and config.window_packets() > limit:
        raise UsageError(
            f"window of {config.window_packets()} packets is too large for the "
            f"{fmt.seq_bits}-bit sequence space of the {fmt.name} format (at most {limit})"
        )
    try:
        config.validate(args.protocol)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return config, fmt


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    config, fmt = settings(args)
    if args.command == "send":
        destinations = [(args.host, args.port), *args.path]
        result = send_file(
            lambda data: make_sender(args.protocol, data, config),
            args.file,
            fmt,
            destinations,
            give_up_after=args.give_up or max(30.0, 20 * config.timeout),
        )
        if args.json:
            print(json.dumps({"protocol": args.protocol, "format": fmt.name, **result.to_dict()}))
        else:
            print(
                f"sent {result.size} bytes in {result.elapsed:.3f} s: {result.throughput_kBps:.2f} KB/s, "
                f"{result.stats.retransmissions} retransmissions"
            )
    else:
        result = receive_file(
            make_receiver(args.protocol, config),
            fmt,
            args.port,
            args.file,
            bind=args.bind,
            max_peers=config.paths,
            linger=args.linger,
            idle_timeout=args.idle_timeout,
        )
        if args.json:
            print(json.dumps({"protocol": args.protocol, "format": fmt.name, **result.to_dict()}))
    return 0


def main(argv: list[str] | None = None) -> int:
    return main_guard(PROG, lambda: run(sys.argv[1:] if argv is None else argv))
