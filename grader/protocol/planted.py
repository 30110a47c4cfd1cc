"""Submissions made for testing the grader: a copy of the reference laid out as a
student hands it in, and variants of a solution with a planted bug (bugs.toml:
find/replace patches naming the scenario that must catch each)."""

from __future__ import annotations

import os
import shutil
import tomllib

from harness.engine import REPO

SHIM = '''# {who}
"""{name} of the reference, handed in as a student would (the package beside it)."""
import os
import sys

sys.argv[0] = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "{package}", "{name}.py")
with open(sys.argv[0]) as source:     # runpy would do, but its imports cost more than the program's own
    exec(compile(source.read(), sys.argv[0], "exec"), {{"__name__": "__main__", "__file__": sys.argv[0]}})
'''


def reference_submission(
    dest: str, names: tuple[str, ...] = (), who: str = "Reference Solution s0000000", package: str = "comn"
) -> str:
    """`dest` holding a copy of reference/ and shims of reference/`package`'s programs
    (comn's SenderN.py/ReceiverN.py by default) headed `# Forename Surname Matric`
    (copies with different headers get different seeds)."""
    os.makedirs(dest, exist_ok=True)
    shutil.copytree(
        os.path.join(REPO, "reference"),
        os.path.join(dest, "reference"),
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    for name in names or [f"{role}{k}" for role in ("Sender", "Receiver") for k in range(1, 5)]:
        with open(os.path.join(dest, f"{name}.py"), "w") as f:
            f.write(SHIM.format(name=name, who=who, package=package))
    return dest


def load_bugs(path: str, kind: str = "bug") -> list[dict]:
    """The [[bug]] tables (or, kind="valid", the variants the spec allows: [[valid]])."""
    with open(path, "rb") as f:
        return tomllib.load(f).get(kind, [])


def plant(source: str, bug: dict, dest: str, ignore=None) -> str:
    """A copy of `source` at `dest` with `bug` (or a valid variant) applied (its `old` text must occur once)."""
    shutil.copytree(source, dest, ignore=ignore)
    path = os.path.join(dest, bug["file"])
    with open(path) as f:
        text = f.read()
    if text.count(bug["old"]) != 1:
        raise ValueError(
            f"bug {bug['name']}: its old text occurs {text.count(bug['old'])} times in {bug['file']}, not once"
        )
    with open(path, "w") as f:
        f.write(text.replace(bug["old"], bug["new"]))
    return dest
