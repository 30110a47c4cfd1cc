"""A jail's control group (grader/cgroups.py) caps what all its processes use together:
CPU time, memory and tasks, with real bubblewrap jails and real cgroup v1 controllers;
nothing of the group is left afterwards."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile

import pytest

from grader import cgroups
from grader.cgroups import GroupLimits
from grader.grade import allocate_uid
from grader.sandbox import Limits, Sandbox, available, kill_uid, mount_scratch, unmount_scratch

pytestmark = pytest.mark.skipif(available() is not None or cgroups.available() is not None,
                                reason=str(available() or cgroups.available()))

PYTHON = "/usr/bin/python3"      # the system's: in the jail's /usr


def jailed(code: str, group: GroupLimits, processes: int = 64) -> tuple[dict, int]:
    """Run `code` in a fresh jail with `group`; its JSON line, and the OOM kills."""
    uid = allocate_uid()
    scratch = tempfile.mkdtemp(prefix="rdt-cg-")
    mount_scratch(scratch, 16 << 20)
    try:
        os.chown(scratch, uid, uid)
        sandbox = Sandbox(uid, scratch, limits=Limits(processes=processes, group=group), network=False,
                          run_dir=False)
        done = subprocess.run(sandbox.prefix() + [PYTHON, "-c", code], cwd=scratch, capture_output=True,
                              text=True, timeout=60)
        kills = cgroups.oom_kills(uid)
    finally:
        kill_uid(uid)
        unmount_scratch(scratch)
        os.rmdir(scratch)
    assert cgroups.members(uid) == [] and not any(
        os.path.exists(os.path.join(cgroups.ROOT, c, cgroups.PARENT, f"jail-{uid}")) for c in cgroups.CONTROLLERS)
    assert done.returncode == 0, done.stderr[-1500:]
    return json.loads(done.stdout.strip().splitlines()[-1]), kills


BUSY = """
import json, os, time
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            pass
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
t = os.times()
print(json.dumps({"cpu": t.children_user + t.children_system}))
"""


def test_busy_loops_share_the_groups_cpu_quota():
    # two busy loops for 2 s: ~4 CPU-s on two free cores, at most 0.5 x 2 s = 1 s in the group
    out, _ = jailed(BUSY, GroupLimits(cpus=0.5))
    assert out["cpu"] < 1.3, out


HOG = """
import json, os
kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray(150 << 20)
        for i in range(0, len(block), 4096):   # touch every page: resident, charged to the group
            block[i] = 1
        os._exit(0)
    kids.append(pid)
codes = [os.waitpid(pid, 0)[1] for pid in kids]
print(json.dumps({"killed": sum(os.WIFSIGNALED(c) and os.WTERMSIG(c) == 9 for c in codes)}))
"""


def test_memory_of_all_processes_together_is_capped():
    # four processes of 150 MB each stay under the per-process limit (1 GiB), not under 256 MB together
    out, kills = jailed(HOG, GroupLimits(memory_bytes=256 << 20))
    assert out["killed"] >= 1 and kills >= 1, (out, kills)


FORKS = """
import json, os, signal
kids = []
try:
    while len(kids) < 60:
        pid = os.fork()
        if pid == 0:
            signal.pause()
            os._exit(0)
        kids.append(pid)
except BlockingIOError:
    pass
for pid in kids:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
print(json.dumps({"forked": len(kids)}))
"""


def test_tasks_are_capped_below_the_process_limit():
    out, _ = jailed(FORKS, GroupLimits(tasks=20), processes=64)
    assert 5 <= out["forked"] < 20, out
