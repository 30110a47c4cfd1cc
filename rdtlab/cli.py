"""The `rdtlab` command line: one subcommand per entry of COMMANDS, each an object with
`add_arguments(parser)` and `main(args) -> int`, imported here by name (a module that
fails to load stops the command, loudly). It sits above both layers it runs (harness/,
grader/), so neither reaches up to it. An installation without the grader package (the
students' lab image) has no `grade` or `check`, and `rdtlab --help` says so.

Exit status: 0 success, 1 the transfer (or job) failed, 2 bad usage (one line, never
a traceback), 130 interrupted, 143 terminated.
"""

from __future__ import annotations

import argparse
import sys

from harness import cli as harness_cli
from harness.plots import cli as tsg_cli
from harness.procs import Terminated, UsageError, terminate_as_interrupt
from harness.sheets import cli as sheet_cli

try:
    from grader import cli as grader_cli
except ModuleNotFoundError as e:
    if e.name != "grader":  # the grader is there but broken: say so, loudly
        raise
    grader_cli = None  # an installation without it (the students' lab image)

PROG = "rdtlab"
NO_GRADER = "grade, check: not in this installation (it has no grader: the students' lab image leaves it out)"

COMMANDS = {
    "run": ("run a sender/receiver pair over an emulated link; verify and measure", harness_cli.RUN),
    "demo": ("a COMN stop-and-wait transfer over the COMN link, with its summary", harness_cli.DEMO),
    "prog": ("run a program of a folder by name, built first if it is Java, C, C++, Rust or Go", harness_cli.PROG),
    "sheet": ("regenerate a results sheet", sheet_cli),
    "tsg": ("draw the time-sequence graph of a transfer from its trace or pcap", tsg_cli),
    **(
        {}
        if grader_cli is None
        else {
            "grade": ("grade a class's submissions on a scenario battery (sandboxed, in parallel)", grader_cli.GRADE),
            "check": ("check your programs on the public scenarios of the battery before you submit", grader_cli.CHECK),
        }
    ),
}


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the problem, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=PROG,
        description="rdtlab: reliable data transfer lab kit",
        epilog=NO_GRADER if grader_cli is None else None,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=OneLineParser)
    for name, (help_, command) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        command.add_arguments(p)
        p.set_defaults(_main=command.main)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with terminate_as_interrupt():  # SIGTERM (timeout, docker stop) cleans up as Ctrl-C does
            return args._main(args)
    except UsageError as e:
        print(f"{PROG} {args.command}: {e}", file=sys.stderr)
        return 2
    except Terminated:
        print(f"{PROG} {args.command}: terminated (everything it started has been stopped)", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print(f"{PROG} {args.command}: interrupted (everything it started has been stopped)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
