"""Which programs fill a sheet: the reference (`python3 -m reference ...`, any protocol
and option), kernel TCP (`python3 -m reference.tcpfile`), or a directory of a student's
programs with the sheet's own contract. The kit's programs run with the kit's own
interpreter: `python3` on PATH may be a version manager's shim (a shell script run at
every start, and a sheet starts thousands)."""

from __future__ import annotations

import hashlib
import os
import shlex
import sys

from harness import resolver
from harness.transfer import Program

PYTHON = shlex.quote(sys.executable or "python3")


def is_program(name: str) -> bool:
    """A file of an assignment's PROGRAMS that is a program (Sender2.py), not a helper
    only Python programs need (rdt.py)."""
    return name.startswith(("Sender", "Receiver"))


def _stem(name: str) -> str:
    return name[:-3] if name.endswith(".py") else name


def script(impl: str, name: str, args: str, output_format: str | None = None) -> Program:
    """The student's program `name` (Sender2.py: in whatever language it is written,
    harness/resolver.py, built first if need be) with `args`; braces in paths are kept
    literally. Python's runs as `python3 <impl>/<name>`."""
    path = os.path.join(impl, name)
    if (
        name.endswith(".py")
        and os.path.isfile(path)
        or not is_program(name)
        or resolver.locate(impl, _stem(name)) is None
    ):
        argv = ["python3", path]  # a missing program is the sheet's to report (missing())
    else:
        argv = resolver.prepare(impl, [_stem(name)]).programs[_stem(name)]
        if isinstance(argv, str):  # it does not build: its runs fail with that one line
            argv = [sys.executable, "-c", f"import sys; sys.exit({argv!r})"]
    words = " ".join(shlex.quote(w.replace("{", "{{").replace("}", "}}")) for w in argv)
    return Program(f"{words} {args}", output_format=output_format)


def reference(role: str, protocol: str, args: str) -> Program:
    """The reference's general command line (reference/cli.py), send or recv."""
    return Program(f"{PYTHON} -m reference {role} --protocol {protocol} {args}")


def kernel_tcp() -> tuple[Program, Program]:
    """Sender and receiver of a file over kernel TCP (reference/tcpfile.py): the TCP
    baseline of the sheets (netns backend). The sender's JSON line names the congestion
    control its connection ran and the kernel: the rows' `tcp_cc` and `kernel`."""
    return (
        Program(
            f"{PYTHON} -m reference.tcpfile send --host {{receiver_host}} --port {{receiver_port}} "
            "--file {file} --json",
            output_format="json",
        ),
        Program(f"{PYTHON} -m reference.tcpfile recv --port {{listen_port}} --file {{output}}"),
    )


def missing(impl: str | None, names: tuple[str, ...]) -> list[str]:
    """Of `names` (an assignment's PROGRAMS: Sender2.py, rdt.py), what `impl` lacks (none
    for the reference, impl None): a program in no language the resolver takes, and a
    helper module only where a program that needs it is in Python."""
    if impl is None:
        return []
    programs = [n for n in names if is_program(n)]
    lacking = [n for n in programs if resolver.locate(impl, _stem(n)) is None]
    python = not programs or any(os.path.isfile(os.path.join(impl, n)) for n in programs if n.endswith(".py"))
    return lacking + [n for n in names if not is_program(n) and python and not os.path.isfile(os.path.join(impl, n))]


def digest_of(impl: str, names) -> bytes:
    """What the programs `names` of `impl` are made of: a Python program's file, else
    every source of the folder (harness/resolver.py's digest), so an edited program is
    measured afresh."""
    h = hashlib.sha256()
    for name in names:
        path = os.path.join(impl, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                h.update(f.read())
        else:
            h.update(resolver.sources_digest(impl).encode())
    return h.digest()
