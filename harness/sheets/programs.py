"""Which programs fill a sheet: the reference (`python3 -m reference ...`, any protocol
and option), kernel TCP (`python3 -m reference.tcpfile`), or a directory of a student's
programs with the sheet's own contract. The kit's programs run with the kit's own
interpreter: `python3` on PATH may be a version manager's shim (pyenv's costs ~0.1 CPU-s
and up to 0.4 s a start on a loaded machine, and a sheet starts thousands)."""
from __future__ import annotations

import os
import shlex
import sys

from harness.transfer import Program

PYTHON = shlex.quote(sys.executable or "python3")


def script(impl: str, name: str, args: str, output_format: str | None = None) -> Program:
    """`python3 <impl>/<name> <args>`; braces in the path are kept literally."""
    path = os.path.join(impl, name).replace("{", "{{").replace("}", "}}")
    return Program(f"python3 {shlex.quote(path)} {args}", output_format=output_format)


def reference(role: str, protocol: str, args: str) -> Program:
    """The reference's general command line (reference/cli.py), send or recv."""
    return Program(f"{PYTHON} -m reference {role} --protocol {protocol} {args}")


def kernel_tcp() -> tuple[Program, Program]:
    """Sender and receiver of a file over kernel TCP (reference/tcpfile.py): the TCP
    baseline of the sheets (netns backend). The sender's JSON line names the congestion
    control its connection ran and the kernel: the rows' `tcp_cc` and `kernel`."""
    return (Program(f"{PYTHON} -m reference.tcpfile send --host {{receiver_host}} --port {{receiver_port}} "
                    "--file {file} --json", output_format="json"),
            Program(f"{PYTHON} -m reference.tcpfile recv --port {{listen_port}} --file {{output}}"))


def missing(impl: str | None, names: tuple[str, ...]) -> list[str]:
    """Files of `names` that `impl` lacks (none for the reference, impl None)."""
    return [] if impl is None else [n for n in names if not os.path.isfile(os.path.join(impl, n))]
