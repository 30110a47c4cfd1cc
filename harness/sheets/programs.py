"""Which programs fill a sheet: the reference (`python3 -m reference ...`, any protocol
and option) or a directory of a student's programs with the sheet's own contract."""
from __future__ import annotations

import os
import shlex

from harness.transfer import Program


def script(impl: str, name: str, args: str, output_format: str | None = None) -> Program:
    """`python3 <impl>/<name> <args>`; braces in the path are kept literally."""
    path = os.path.join(impl, name).replace("{", "{{").replace("}", "}}")
    return Program(f"python3 {shlex.quote(path)} {args}", output_format=output_format)


def reference(role: str, protocol: str, args: str) -> Program:
    """The reference's general command line (reference/cli.py), send or recv."""
    return Program(f"python3 -m reference {role} --protocol {protocol} {args}")


def missing(impl: str | None, names: tuple[str, ...]) -> list[str]:
    """Files of `names` that `impl` lacks (none for the reference, impl None)."""
    return [] if impl is None else [n for n in names if not os.path.isfile(os.path.join(impl, n))]
