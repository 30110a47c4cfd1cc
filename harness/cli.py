"""`rdtlab run` and `rdtlab demo` (the top-level command is rdtlab/cli.py), and the
argument types the other subcommands share.

Exit status: 0 success, 1 the transfer failed, 2 bad usage (one line, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path as FsPath
from types import SimpleNamespace

from harness.backends import BACKENDS
from harness.plots import cli as tsg
from harness.procs import UsageError
from harness.transfer import OUTPUT_FORMATS, Link, Path, Program, TransferResult, run_transfer

UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kib": 1024,
    "kb": 1000,
    "m": 1 << 20,
    "mib": 1 << 20,
    "mb": 1000**2,
    "g": 1 << 30,
    "gib": 1 << 30,
    "gb": 1000**3,
}


def size_arg(text: str) -> int:
    """'1MiB', '500KB', '4096' -> bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in UNITS:
        raise argparse.ArgumentTypeError(f"expected a size like 4096, 100KiB or 1MiB, got {text!r}")
    return int(float(m.group(1)) * UNITS[m.group(2).lower()])


def param_arg(text: str) -> tuple[str, object]:
    """'window=8' -> ('window', 8); numbers become numbers, anything else stays text."""
    key, sep, value = text.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE with KEY a name, got {text!r}")
    for kind in (int, float):
        try:
            return key, kind(value)
        except ValueError:
            pass
    return key, value


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def progress_printer(as_json: bool):
    """A progress line on stderr, rewritten each second, when a person is watching."""
    if as_json or not sys.stderr.isatty():
        return None

    def show(info: dict) -> None:
        line = f"  {info['elapsed_s']:.0f} s of {info['time_limit_s']:g} s"
        if "forward_packets" in info:
            line += (
                f", {info['forward_packets']} packets sent, {info['forward_bytes_delivered'] / 1024:.0f} KiB delivered"
            )
        print(f"\r{line}\x1b[K", end="", file=sys.stderr, flush=True)

    return show


def report(result: TransferResult, as_json: bool) -> int:
    if not as_json and sys.stderr.isatty():
        print("\r\x1b[K", end="", file=sys.stderr, flush=True)  # clear the progress line
    if as_json:
        print(json.dumps(result.to_dict()))
    else:
        print(result.summary())
    return 0 if result.ok else 1


# ---- rdtlab run --------------------------------------------------------------------


def run_add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sender",
        required=True,
        metavar="CMD",
        help="sender command template, e.g. 'python3 Sender2.py {receiver_host} {receiver_port} {file} 20'",
    )
    p.add_argument(
        "--receiver",
        required=True,
        metavar="CMD",
        help="receiver command template, e.g. 'python3 Receiver2.py {listen_port} {output}'",
    )
    p.add_argument(
        "--link", default="", metavar="SPEC", help="netem spec of the forward direction (default: a perfect link)"
    )
    p.add_argument(
        "--reverse", default=None, metavar="SPEC", help="netem spec of the reverse direction (default: as --link)"
    )
    p.add_argument("--shared-queue", action="store_true", help="both directions share one queue (netem on lo, as COMN)")
    p.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="SPEC",
        help="one path of several (repeatable, instead of --link): its netem spec, or 'FORWARD / REVERSE'; "
        "the paths are p0, p1, ... and the commands get {receiver_host2} {receiver_port2} ...",
    )
    p.add_argument(
        "--down",
        action="append",
        default=[],
        type=event_arg,
        metavar="PATH[:DIR]@MS",
        help="take a path down MS milliseconds after the first packet, e.g. p0@1000, or one direction "
        "of it, e.g. p0:reverse@1000 (repeatable)",
    )
    p.add_argument(
        "--up",
        action="append",
        default=[],
        type=event_arg,
        metavar="PATH[:DIR]@MS",
        help="bring a path (or one direction) up again, e.g. p0@3000 (repeatable)",
    )
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--file", metavar="F", help="file to send")
    what.add_argument(
        "--size", type=size_arg, metavar="N", help="send N random bytes made from the seed (default 1MiB)"
    )
    p.add_argument(
        "--seed", type=int, default=None, help="seed of the link and the data (default: random, always printed)"
    )
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        default=None,
        metavar="S",
        help="time limit of the transfer (default: from the expected duration of stop-and-wait over "
        "the link, 30-900 s; see harness/time_limits.py)",
    )
    p.add_argument(
        "--stall-after",
        type=float,
        default=None,
        metavar="S",
        help="stop when nothing new has entered the link either way nor the output grown for S seconds, "
        "not counting time in which the link lost every answer (default: from the link's round "
        "trip and {timeout}, at least 10 s; 0 never)",
    )
    p.add_argument(
        "--param",
        type=param_arg,
        action="append",
        default=[],
        metavar="K=V",
        help="a value for placeholder {K} in the commands (repeatable)",
    )
    p.add_argument(
        "--output-format",
        choices=list(OUTPUT_FORMATS),
        default=None,
        help="how to read what the sender prints (comn-sw: '<retx> <KB/s>', comn: '<KB/s>', "
        "iperf3-json: iperf3 -c ... --json)",
    )
    p.add_argument(
        "--no-verify",
        action="store_true",
        help="the programs bring their own data (iperf3): no file is sent or compared",
    )
    p.add_argument("--ipv6", action="store_true", help="run over IPv6")
    p.add_argument(
        "--tcp-cc",
        default=None,
        metavar="reno|cubic|bbr",
        help="kernel TCP's congestion control in the run's namespaces (netns, kernel backends), "
        "pinned per route whatever the host's default (default cubic)",
    )
    p.add_argument("--pcap", metavar="FILE", help="write the packets crossing the link to FILE (pcap)")
    tsg.add_run_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")


DIRECTIONS = ("forward", "reverse")


def event_arg(text: str) -> dict:
    """PATH[:DIRECTION]@MS: a path (or one direction of it) and a time in milliseconds,
    as a schedule event without its cmd."""
    where, sep, ms = text.partition("@")
    path, _, direction = where.partition(":")
    if not sep or not path or not ms.isdigit() or (direction and direction not in DIRECTIONS):
        raise argparse.ArgumentTypeError(
            f"expected PATH@MS or PATH:forward|reverse@MS such as p0@1000 or p0:reverse@1000, got {text!r}"
        )
    return {"at_ms": int(ms), "path": path} | ({"direction": direction} if direction else {})


def event_words(event: dict) -> list[str]:
    """A schedule event as the command-line words event_arg reads back."""
    where = event["path"] + (f":{event['direction']}" if "direction" in event else "")
    return [f"--{event['cmd']}", f"{where}@{event['at_ms']}"]


def topology(args: argparse.Namespace) -> dict:
    """run_transfer's link= or paths= and schedule= from --link/--path/--down/--up."""
    if args.path and (args.link or args.reverse is not None or args.shared_queue):
        raise UsageError("give --link (with --reverse, --shared-queue) or --path, not both")
    schedule = sorted(
        ({"cmd": cmd} | event for cmd in ("down", "up") for event in getattr(args, cmd)),
        key=lambda e: e["at_ms"],
    )
    if not args.path:
        return {"link": Link(args.link, args.reverse, args.shared_queue), "schedule": schedule}
    paths = []
    for spec in args.path:
        forward, sep, reverse = spec.partition(" / ")
        paths.append(Path(Link(forward.strip(), reverse.strip() if sep else None)))
    return {"paths": paths, "schedule": schedule}


def run_main(args: argparse.Namespace) -> int:
    size = args.size if args.size is not None or args.file else (0 if args.no_verify else 1 << 20)
    with tsg.run_trace(args) as trace:
        result = run_transfer(
            Program(args.sender, output_format=args.output_format),
            Program(args.receiver),
            **topology(args),
            params=dict(args.param),
            file=args.file,
            size=None if args.file else size,
            seed=args.seed,
            verify=not args.no_verify,
            backend=args.backend,
            time_limit=args.timeout,
            no_progress=args.stall_after,
            ipv6=args.ipv6,
            pcap=args.pcap,
            trace=trace,
            progress=progress_printer(args.json),
            tcp_cc=args.tcp_cc,
        )
        status = report(result, args.json)
        tsg.after_run(result, args)
    return status


# ---- rdtlab prog -------------------------------------------------------------------


def prog_add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", help="the program, e.g. Sender2: Sender2.py, Sender2.java, Sender2.c, ...")
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="its command-line arguments")
    p.add_argument("--dir", default=".", metavar="DIR", help="the folder holding it (default: here)")


def prog_main(args: argparse.Namespace) -> int:
    """Find program NAME in the folder (harness/resolver.py), build it if it is not built
    or a source changed, and run it in this process's place: what the replay lines of the
    grader's feedback start, whatever language the program is written in."""
    import os
    from harness.resolver import prepare

    argv = prepare(args.dir, [args.name]).programs[args.name]
    if isinstance(argv, str):
        raise UsageError(argv)
    sys.stdout.flush()
    os.execvp(argv[0], argv + list(args.args))


PROG = SimpleNamespace(add_arguments=prog_add_arguments, main=prog_main)


# ---- rdtlab demo -------------------------------------------------------------------

COMN_LINK = Link("delay 5ms loss 5% rate 10mbit", shared_queue=True)  # COMN part 2


def demo_programs() -> tuple[Program, Program, str]:
    """COMN stop-and-wait: the reference programs (the reference package ships with the kit)."""
    import reference.comn

    ref = FsPath(reference.comn.__file__).resolve().parent
    return (
        Program(
            f"python3 {ref}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} {{timeout}}",
            output_format="comn-sw",
        ),
        Program(f"python3 {ref}/Receiver2.py {{listen_port}} {{output}}"),
        "reference/comn Sender2/Receiver2",
    )


def demo_add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    p.add_argument("--size", type=size_arg, default=256 << 10, metavar="N", help="bytes to send (default 256KiB)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--json", action="store_true")


def demo_main(args: argparse.Namespace) -> int:
    sender, receiver, which = demo_programs()
    if not args.json:
        print(
            f"COMN stop-and-wait ({which}), RetryTimeout 20 ms, over "
            f"'{COMN_LINK.forward}' with a shared queue (netem on lo), {args.size} bytes",
            flush=True,
        )
    result = run_transfer(
        sender,
        receiver,
        COMN_LINK,
        params={"timeout": 20},
        size=args.size,
        seed=args.seed,
        backend=args.backend,
        time_limit=300,
        progress=progress_printer(args.json),
    )
    return report(result, args.json)


# ---- the subcommands this module gives `rdtlab` (rdtlab/cli.py) ---------------------

RUN = SimpleNamespace(add_arguments=run_add_arguments, main=run_main)
DEMO = SimpleNamespace(add_arguments=demo_add_arguments, main=demo_main)
