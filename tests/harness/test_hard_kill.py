"""The harness killed hard (SIGKILL, a notebook kernel dying) mid-run: its programs and
engine die with it (PDEATHSIG), and what it could not clean (its temp dir, its
namespaces) is swept by the next harness process."""

import os
import subprocess
import sys
import time

import pytest

from harness import transfer
from harness.backends.netns import sweep_stale
from tests.support.runs import REPO, our_processes


def children_of(pid: int) -> list[str]:
    """Command lines of the live children of pid."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) != pid:
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                found.append(f.read().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return found


SCRIPT = """
import tempfile
tempfile.tempdir = {tmp!r}
from harness import Link, run_transfer
from tests.support.runs import bad, sw_receiver
run_transfer(bad("hang"), sw_receiver(), Link("delay 1ms"), size=100, seed=1, backend={backend!r}, time_limit=60)
"""


@pytest.mark.parametrize("backend", ["local", pytest.param("netns", marks=pytest.mark.netns)])
def test_hard_kill_takes_children_along_and_leftovers_are_swept(clean_run, backend, monkeypatch):
    script = SCRIPT.format(tmp=str(clean_run), backend=backend)
    harness = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    try:
        deadline = time.monotonic() + 20
        while not any("badprog.py hang" in cmd for cmd in children_of(harness.pid)):
            assert time.monotonic() < deadline, "the run never started its sender"
            time.sleep(0.05)
    finally:
        harness.kill()
        harness.wait()
    deadline = time.monotonic() + 5
    while our_processes(str(clean_run)) and time.monotonic() < deadline:
        time.sleep(0.05)
    # Had PDEATHSIG not killed them, they would now be pytest's (the subreaper's) children.
    assert our_processes(str(clean_run)) == []

    left = [d for d in os.listdir(clean_run) if d.startswith(f"rdt-run-{harness.pid}-")]
    assert left, "a hard-killed harness cannot remove its own run dir"
    sockets = [n for n in os.listdir("/tmp") if n.startswith(f"rdt-{harness.pid}-")]
    assert sockets, "the run dir's path is too long for a socket: the control socket is in /tmp"
    monkeypatch.setattr(transfer, "_swept", False)
    transfer._sweep_stale_dirs_once()
    assert os.listdir(clean_run) == []
    assert [n for n in os.listdir("/tmp") if n.startswith(f"rdt-{harness.pid}-")] == []
    if backend == "netns":
        assert sorted(sweep_stale()) == [f"rdt-{harness.pid}-1-r", f"rdt-{harness.pid}-1-s"]
