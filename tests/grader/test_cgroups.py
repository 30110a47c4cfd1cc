"""A jail's control group (grader/jail/cgroups.py) caps what all its processes use together:
CPU time, memory and tasks, with real bubblewrap jails and the machine's real cgroup
controllers (v1 here); nothing of the group is left afterwards. The limits stop attacks,
not designs: a thread per timer and a JVM run in a jail with the default limits. The v2
file layout is checked on a folder standing in for /sys/fs/cgroup (this machine's v2
hierarchy has no controllers to give)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

import pytest

from grader.jail import cgroups
from grader.protocol.grade import allocate_uid
from grader.jail.sandbox import (
    UID_BASE,
    GroupLimits,
    Limits,
    Sandbox,
    available,
    kill_uid,
    mount_scratch,
    unmount_scratch,
)

needs_jail = pytest.mark.skipif(
    available() is not None or cgroups.available() is not None, reason=str(available() or cgroups.available())
)

PYTHON = "/usr/bin/python3"  # the system's: in the jail's /usr


def jailed(
    code: str, group: GroupLimits = GroupLimits(), processes: int = Limits.processes, argv: list[str] | None = None
) -> tuple[dict, int]:
    """Run `code` (or `argv`) in a fresh jail with `group`; its JSON line, and the OOM kills."""
    uid = allocate_uid()
    scratch = tempfile.mkdtemp(prefix="rdt-cg-")
    mount_scratch(scratch, 16 << 20)
    try:
        os.chown(scratch, uid, uid)
        sandbox = Sandbox(uid, scratch, limits=Limits(processes=processes, group=group), network=False, run_dir=False)
        done = subprocess.run(
            sandbox.prefix() + (argv or [PYTHON, "-c", code]), cwd=scratch, capture_output=True, text=True, timeout=60
        )
        kills = cgroups.oom_kills(uid)
    finally:
        kill_uid(uid)
        unmount_scratch(scratch)
        os.rmdir(scratch)
    assert cgroups.members(uid) == [] and not any(os.path.exists(f) for f in cgroups._folders(uid).values())
    assert done.returncode == 0, done.stderr[-1500:]
    return json.loads((done.stdout.strip().splitlines() or [done.stderr.strip()])[-1]), kills


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


@needs_jail
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


@needs_jail
def test_memory_of_all_processes_together_is_capped():
    # four processes of 150 MB each stay under the per-process limit, not under 256 MB together
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


@needs_jail
def test_tasks_are_capped_below_the_process_limit():
    out, _ = jailed(FORKS, GroupLimits(tasks=20))
    assert 5 <= out["forked"] < 20, out


THREADS = """
import json, threading, time
go = threading.Event()
threads = [threading.Thread(target=go.wait) for _ in range(2 * 160)]
for t in threads:
    t.start()
go.set()
for t in threads:
    t.join()
print(json.dumps({"threads": len(threads)}))
"""


@needs_jail
def test_a_thread_per_packet_in_flight_runs_in_the_default_jail():
    # a sender's and a receiver's worth of timer threads at window 128, with margin
    out, _ = jailed(THREADS)
    assert out == {"threads": 320}, out


JAVA = """
import json, subprocess
done = subprocess.run(["java", "-version"], capture_output=True, text=True)
print(json.dumps({"java": (done.stderr.splitlines() or [""])[0], "exit": done.returncode}))
"""


@needs_jail
@pytest.mark.skipif(not os.path.exists("/usr/bin/java"), reason="no JDK")
def test_a_jvm_starts_in_the_default_jail():
    out, kills = jailed(JAVA)
    assert out["exit"] == 0 and "version" in out["java"], out
    assert kills == 0


def fake_v2(root, controllers="cpuset cpu io memory pids"):
    (root / "cgroup.controllers").write_text(controllers + "\n")
    (root / "cgroup.subtree_control").write_text("")
    (root / "rdtlab").mkdir()
    (root / "rdtlab" / "cgroup.subtree_control").write_text("")
    return str(root)


def test_v2_group_is_one_folder_with_the_three_limits(tmp_path):
    root = fake_v2(tmp_path)
    assert cgroups.version(root) == 2 and cgroups.available(root) is None
    cgroups.join(3_000_123, GroupLimits(memory_bytes=1 << 30, cpus=1.5, tasks=99), pid=4242, root=root)
    jail = tmp_path / "rdtlab" / "jail-3000123"
    assert (jail / "memory.max").read_text() == str(1 << 30)
    assert (jail / "cpu.max").read_text() == "150000 100000"
    assert (jail / "pids.max").read_text() == "99"
    assert (jail / "cgroup.procs").read_text() == "4242"
    # the controllers are delegated level by level, root first
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+memory +cpu +pids"
    assert (tmp_path / "rdtlab" / "cgroup.subtree_control").read_text() == "+memory +cpu +pids"
    (jail / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n")
    (jail / "cpu.stat").write_text("usage_usec 10\nnr_throttled 4\nthrottled_usec 2500000\n")
    assert cgroups.oom_kills(3_000_123, root) == 2
    assert cgroups.throttled_seconds(3_000_123, root) == 2.5


def test_v2_without_the_controllers_is_not_used(tmp_path):
    root = fake_v2(tmp_path, "cpuset io")
    assert cgroups.version(root) is None
    assert "no cgroup with the memory, cpu, pids controllers" in cgroups.available(root)


@needs_jail
def test_empty_groups_of_graders_killed_hard_are_swept():
    """A grader killed hard leaves its jail groups behind; the next grader's first jail
    sweeps the empty ones whose grader is gone, and keeps a live grader's and any group
    with a process in it (it may be a grader this pid namespace cannot see)."""
    from grader.protocol.grade import UIDS_PER_PROCESS, uid_owner

    alive = {int(d) % 100_000 for d in os.listdir("/proc") if d.isdigit()}
    gone = next(p for p in range(99_999, 0, -1) if p not in alive)
    orphan, occupied = UID_BASE + gone * UIDS_PER_PROCESS + 7, UID_BASE + gone * UIDS_PER_PROCESS + 8
    mine = allocate_uid()
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        for uid, pid in ((orphan, None), (occupied, sleeper.pid), (mine, None)):
            for folder in cgroups._folders(uid).values():
                os.makedirs(folder, exist_ok=True)
                if pid:
                    with open(os.path.join(folder, "cgroup.procs"), "w") as f:
                        f.write(str(pid))
        assert uid_owner(orphan) == gone and uid_owner(mine) == os.getpid() % 100_000
        assert cgroups.sweep_orphans(uid_owner) == [orphan]
        assert not any(os.path.exists(f) for f in cgroups._folders(orphan).values())
        assert all(os.path.exists(f) for uid in (occupied, mine) for f in cgroups._folders(uid).values())
    finally:
        sleeper.kill()
        sleeper.wait()
        for uid in (orphan, occupied, mine):
            cgroups.remove(uid)
    assert not any(os.path.exists(f) for uid in (occupied, mine) for f in cgroups._folders(uid).values())
