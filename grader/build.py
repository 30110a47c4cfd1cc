"""Build a submission with its own Makefile (C, C++, Java, Rust, Go...), in its jail,
with a time limit; then find each program: `Sender2.py` runs with python3, an
executable `Sender2` (what `make` built, or a script with a #! line) runs as it is.
"""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile

from grader.sandbox import Sandbox, kill_uid

BUILD_TIME_LIMIT = 120.0


def build(folder: str, sandbox: Sandbox | None, time_limit: float = BUILD_TIME_LIMIT) -> str | None:
    """Run `make` if there is a Makefile; None on success, else a one-line reason."""
    if not os.path.exists(os.path.join(folder, "Makefile")):
        return None
    if sandbox is not None:
        jailed = Sandbox(sandbox.uid, sandbox.scratch, sandbox.hidden, sandbox.limits, network=False)
        cwd = tempfile.mkdtemp(prefix="build-", dir=os.path.dirname(folder))
        argv = jailed.prefix() + ["make", "-s"]
    else:
        cwd, argv = folder, ["make", "-s", "-C", folder]
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=time_limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return f"the build (make) did not finish within {time_limit:g} s"
    finally:
        if sandbox is not None:
            kill_uid(sandbox.uid)
    if proc.returncode != 0:
        lines = [ln.strip() for ln in err.decode(errors="replace").splitlines() if ln.strip()]
        return f"the build (make) failed with exit {proc.returncode}" + (f": {lines[-1][:200]}" if lines else "")
    return None


def find_program(folder: str, name: str) -> list[str] | str:
    """The argv that starts program `name` (e.g. Sender2), or a one-line reason why not."""
    script = os.path.join(folder, f"{name}.py")
    if os.path.isfile(script):
        return ["python3", script]
    binary = os.path.join(folder, name)
    if os.path.isfile(binary):
        if not os.access(binary, os.X_OK):
            return f"{name} is not executable (chmod +x it, or hand in {name}.py)"
        return [binary]
    return f"{name}.py (or an executable {name}) is missing from the submission"
