"""A control group per jail: limits on everything a submission runs at once.

The resource limits in grader/sandbox.py are per process (address space, CPU seconds)
or per uid (processes). A fork bomb of busy loops stays under each of them and still
takes every core from the submissions graded beside it; sixty processes of 1 GiB each
take the machine's memory. The jail's group caps the sum: memory in use, CPU time per
period (a share of one core by default) and tasks (threads included). cgroup v1, the
memory, cpu and pids controllers, as root (`available()` says why not otherwise; the
per-process limits still hold then, e.g. in a container whose /sys/fs/cgroup is
read-only).

The launcher joins the group before it drops to the jail's uid, so everything the jail
starts is in it; `remove()` kills what is left and deletes the group.
"""
from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

ROOT = "/sys/fs/cgroup"
PARENT = "rdtlab"
CONTROLLERS = ("memory", "cpu", "pids")
PERIOD_US = 100_000


@dataclass(frozen=True)
class GroupLimits:
    memory_bytes: int = 2 << 30      # all the jail's processes together
    cpus: float = 1.0                # CPU time per period, in cores
    tasks: int = 512                 # processes and threads


def available() -> str | None:
    """None when jails get control groups here, else why not."""
    for controller in CONTROLLERS:
        folder = os.path.join(ROOT, controller)
        if not os.path.isfile(os.path.join(folder, "cgroup.procs")):
            return f"no cgroup v1 {controller} controller at {folder}"
        if not os.access(folder, os.W_OK):
            return f"{folder} is not writable (run as root, outside a read-only cgroup mount)"
    return None


def _folder(controller: str, uid: int) -> str:
    return os.path.join(ROOT, controller, PARENT, f"jail-{uid}")


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def join(uid: int, limits: GroupLimits, pid: int | None = None) -> None:
    """Put `pid` (this process) in jail `uid`'s group, made with `limits` if new."""
    pid = os.getpid() if pid is None else pid
    for controller in CONTROLLERS:
        folder = _folder(controller, uid)
        os.makedirs(folder, exist_ok=True)
        if controller == "memory":
            _write(os.path.join(folder, "memory.limit_in_bytes"), str(limits.memory_bytes))
        elif controller == "cpu":
            _write(os.path.join(folder, "cpu.cfs_period_us"), str(PERIOD_US))
            _write(os.path.join(folder, "cpu.cfs_quota_us"), str(max(1000, int(limits.cpus * PERIOD_US))))
        else:
            _write(os.path.join(folder, "pids.max"), str(limits.tasks))
        _write(os.path.join(folder, "cgroup.procs"), str(pid))


def members(uid: int) -> list[int]:
    pids: set[int] = set()
    for controller in CONTROLLERS:
        try:
            with open(os.path.join(_folder(controller, uid), "cgroup.procs")) as f:
                pids.update(int(line) for line in f if line.strip())
        except OSError:
            pass
    return sorted(pids)


def oom_kills(uid: int) -> int:
    """How many processes of the jail the memory cap killed (0 without the group)."""
    try:
        with open(os.path.join(_folder("memory", uid), "memory.oom_control")) as f:
            fields = dict(line.split() for line in f if len(line.split()) == 2)
        return int(fields.get("oom_kill", 0))
    except OSError:
        return 0


def remove(uid: int) -> None:
    """Kill whatever is left in jail `uid`'s group and delete the group."""
    for _ in range(50):
        pids = members(uid)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        gone = True
        for controller in CONTROLLERS:
            folder = _folder(controller, uid)
            try:
                os.rmdir(folder)
            except FileNotFoundError:
                pass
            except OSError:
                gone = False             # busy: a killed process is still exiting
        if gone:
            return
        time.sleep(0.02)
