"""`rdtlab tsg CAPTURE -o PNG`: the time-sequence graph of a transfer already run
(a trace from `rdtlab run --trace FILE`, or a pcap from `--pcap FILE`).
`rdtlab run ... --tsg PNG` runs a transfer and draws it in one go (harness/cli.py, the `run` subcommand)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile

from harness.plots.trace import ACK_MODES, FORMATS


def ms_range(text: str) -> tuple[float, float]:
    """'100:250' -> (100.0, 250.0) milliseconds."""
    try:
        a, b = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected START:END in ms, like 100:250, got {text!r}") from None
    if not b > a:
        raise argparse.ArgumentTypeError(f"END must be after START, got {text!r}")
    return a, b


def focus_arg(text: str):
    if text == "timeout":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'timeout' or a timeout's number (0, 1, ...), got {text!r}"
        ) from None


def add_drawing_arguments(p: argparse.ArgumentParser) -> None:
    """The drawing options, shared by `rdtlab tsg` and `rdtlab run --tsg`."""
    p.add_argument(
        "--fmt",
        choices=FORMATS,
        default="auto",
        help="wire format of the messages (default: detected; comn detects its byte order)",
    )
    p.add_argument("--ack", choices=ACK_MODES, default="auto", help="what ACK numbers mean (default: detected)")
    p.add_argument(
        "--focus", type=focus_arg, default=None, metavar="timeout|K", help="zoom on the first (or K-th) timeout"
    )
    p.add_argument("--xlim", type=ms_range, default=None, metavar="START:END", help="time range in ms")
    p.add_argument("--window", type=int, default=None, metavar="W", help="mark the configured window W")
    p.add_argument("--title", default=None)


def draw_from_args(source, png: str, args: argparse.Namespace) -> str:
    """Draw `source` to `png` with the options above; the line to print."""
    from harness.plots.tsg import draw, describe  # matplotlib only when drawing
    from harness.plots.trace import load

    tr = load(source, fmt=args.fmt, ack=args.ack)
    draw(tr, focus=args.focus, xlim=args.xlim, window=args.window, title=args.title, save=png)
    return f"time-sequence graph written to {png}: {describe(tr)}"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("capture", help="the engine's trace (rdtlab run --trace FILE) or a pcap (--pcap FILE)")
    p.add_argument("-o", "--output", required=True, metavar="PNG", help="where to write the picture")
    add_drawing_arguments(p)


def main(args: argparse.Namespace) -> int:
    print(draw_from_args(args.capture, args.output, args))
    return 0


# ---- rdtlab run --trace FILE --tsg PNG (harness/cli.py calls these) ------------------


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--trace", metavar="FILE", help="write the engine's trace of every packet's fate to FILE (JSON lines)"
    )
    p.add_argument(
        "--tsg",
        metavar="PNG",
        help="draw the transfer's time-sequence graph to PNG (rdtlab tsg draws it again with zoom and options)",
    )


@contextlib.contextmanager
def run_trace(args: argparse.Namespace):
    """The trace file for `rdtlab run`: --trace, or a temporary one when only --tsg is asked."""
    if args.trace or not args.tsg:
        yield args.trace
        return
    fd, path = tempfile.mkstemp(prefix="rdt-tsg-", suffix=".trace")
    os.close(fd)
    try:
        yield path
    finally:
        os.unlink(path)


def after_run(result, args: argparse.Namespace) -> None:
    """Draw the transfer when --tsg was given (a line on stderr: stdout may be --json)."""
    if args.tsg:
        defaults = argparse.Namespace(fmt="auto", ack="auto", focus=None, xlim=None, window=None, title=None)
        print(draw_from_args(result, args.tsg, defaults), file=sys.stderr)
