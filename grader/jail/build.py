"""Build a submission and find its programs, in its jail, within the build time limit,
once per submission: harness/resolver.py's rules (Name.py, Java, C, C++, Cargo, Go, a
Makefile, an executable), each build command run under the submission's uid with no
network, its output in the submission's scratch copy (.rdtlab/build).
"""

from __future__ import annotations

import os
import tempfile

from harness.resolver import BUILD_TIME_LIMIT, LAB_BUILD, Build, resolve, run_here

from grader.jail.sandbox import Sandbox, kill_uid

__all__ = ["BUILD_TIME_LIMIT", "prepare"]


def prepare(folder: str, names, sandbox: Sandbox | None, time_limit: float = BUILD_TIME_LIMIT) -> Build:
    """Each program of `names` in the submission `folder`: its argv, or why not."""
    out = os.path.join(folder, LAB_BUILD)
    if sandbox is None:
        return resolve(folder, names, out, run_here, time_limit)
    jailed = Sandbox(sandbox.uid, sandbox.scratch, sandbox.hidden, sandbox.limits, network=False)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    os.chown(os.path.dirname(out), sandbox.uid, sandbox.uid)
    # the launcher mounts its own tmpfs on the folder it starts in: an empty one of the scratch's
    here = tempfile.mkdtemp(prefix="build-", dir=os.path.dirname(folder))

    def run(argv: list[str], cwd: str, env: dict, timeout: float) -> tuple[int | None, str]:
        # `env -C`: the jail starts in its scratch folder; the build runs in the submission's
        try:
            return run_here(
                jailed.prefix() + ["env", "-C", cwd, *(f"{k}={v}" for k, v in env.items()), *argv], here, {}, timeout
            )
        finally:
            kill_uid(sandbox.uid)

    return resolve(folder, names, out, run, time_limit, owner=sandbox.uid)
