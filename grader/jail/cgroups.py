"""A control group per jail: limits on everything a submission runs at once.

The resource limits in grader/jail/sandbox.py are per process (data size, CPU seconds) or
per uid (tasks). A fork bomb of busy loops stays under each of them and still takes
every core from the submissions graded beside it; sixty processes of 1 GiB each take
the machine's memory. The jail's group caps the sum: memory in use (what a jail really
touches, not the address space its threads and a JVM reserve), CPU time per period
and tasks (threads included). As root, with the memory, cpu and pids controllers of
either hierarchy:
  - cgroup v1 (one mount per controller under /sys/fs/cgroup, as on this kit's CI);
  - cgroup v2 (the unified hierarchy at /sys/fs/cgroup, as on current distributions,
    hubs and Kubernetes nodes): the controllers are enabled for the `rdtlab` subtree.
`available()` says why neither can be used (a container whose /sys/fs/cgroup is
read-only): the sandbox then says so once and relies on its per-process limits.

The launcher joins the group before it drops to the jail's uid, so everything the jail
starts is in it; `remove()` kills what is left and deletes the group.
"""

from __future__ import annotations

import os
import time

ROOT = "/sys/fs/cgroup"
PARENT = "rdtlab"
CONTROLLERS = ("memory", "cpu", "pids")
PERIOD_US = 100_000


def version(root: str = ROOT) -> int | None:
    """1 or 2: the hierarchy whose memory, cpu and pids controllers jails can use."""
    if all(os.path.isfile(os.path.join(root, c, "cgroup.procs")) for c in CONTROLLERS):
        return 1
    try:
        with open(os.path.join(root, "cgroup.controllers")) as f:
            if set(CONTROLLERS) <= set(f.read().split()):
                return 2
    except OSError:
        pass
    return None


def available(root: str = ROOT) -> str | None:
    """None when jails get control groups here, else why not."""
    found = version(root)
    if found is None:
        return (
            f"no cgroup with the {', '.join(CONTROLLERS)} controllers at {root} "
            "(neither one v1 mount per controller nor a v2 hierarchy offering them)"
        )
    folders = [os.path.join(root, c) for c in CONTROLLERS] if found == 1 else [root]
    for folder in folders:
        if not os.access(folder, os.W_OK):
            return f"{folder} is not writable (run as root, outside a read-only cgroup mount)"
    return None


def _folders(uid: int, root: str = ROOT) -> dict[str, str]:
    """{controller: the jail's folder}; in v2 one folder serves all three."""
    if version(root) == 2:
        folder = os.path.join(root, PARENT, f"jail-{uid}")
        return {c: folder for c in CONTROLLERS}
    return {c: os.path.join(root, c, PARENT, f"jail-{uid}") for c in CONTROLLERS}


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _enable_v2(root: str) -> None:
    """Delegate the controllers to `rdtlab`'s children (v2 enables them level by level)."""
    want = " ".join(f"+{c}" for c in CONTROLLERS)
    parent = os.path.join(root, PARENT)
    os.makedirs(parent, exist_ok=True)
    for folder in (root, parent):
        with open(os.path.join(folder, "cgroup.subtree_control")) as f:
            enabled = set(f.read().split())
        if not set(CONTROLLERS) <= enabled:
            _write(os.path.join(folder, "cgroup.subtree_control"), want)


def join(uid: int, limits, pid: int | None = None, root: str = ROOT) -> None:
    """Put `pid` (this process) in jail `uid`'s group, made with `limits` if new
    (memory_bytes, cpus, tasks: grader.jail.sandbox.GroupLimits; no dataclass imported here, the
    launcher imports this module at every jailed start)."""
    pid = os.getpid() if pid is None else pid
    quota = max(1000, int(limits.cpus * PERIOD_US))
    if version(root) == 2:
        _enable_v2(root)
        folder = _folders(uid, root)["memory"]
        os.makedirs(folder, exist_ok=True)
        _write(os.path.join(folder, "memory.max"), str(limits.memory_bytes))
        _write(os.path.join(folder, "cpu.max"), f"{quota} {PERIOD_US}")
        _write(os.path.join(folder, "pids.max"), str(limits.tasks))
        _write(os.path.join(folder, "cgroup.procs"), str(pid))
        return
    for controller, folder in _folders(uid, root).items():
        os.makedirs(folder, exist_ok=True)
        if controller == "memory":
            _write(os.path.join(folder, "memory.limit_in_bytes"), str(limits.memory_bytes))
        elif controller == "cpu":
            _write(os.path.join(folder, "cpu.cfs_period_us"), str(PERIOD_US))
            _write(os.path.join(folder, "cpu.cfs_quota_us"), str(quota))
        else:
            _write(os.path.join(folder, "pids.max"), str(limits.tasks))
        _write(os.path.join(folder, "cgroup.procs"), str(pid))


def members(uid: int, root: str = ROOT) -> list[int]:
    pids: set[int] = set()
    for folder in set(_folders(uid, root).values()):
        try:
            with open(os.path.join(folder, "cgroup.procs")) as f:
                pids.update(int(line) for line in f if line.strip())
        except OSError:
            pass
    return sorted(pids)


def _fields(path: str) -> dict[str, str]:
    try:
        with open(path) as f:
            return dict(line.split() for line in f if len(line.split()) == 2)
    except OSError:
        return {}


def oom_kills(uid: int, root: str = ROOT) -> int:
    """How many processes of the jail the memory cap killed (0 without the group)."""
    folder = _folders(uid, root)["memory"]
    name = "memory.events" if version(root) == 2 else "memory.oom_control"
    return int(_fields(os.path.join(folder, name)).get("oom_kill", 0))


def throttled_seconds(uid: int, root: str = ROOT) -> float:
    """How long the CPU cap held the jail's processes back (0 without the group)."""
    stat = _fields(os.path.join(_folders(uid, root)["cpu"], "cpu.stat"))
    if "throttled_usec" in stat:  # v2
        return int(stat["throttled_usec"]) / 1e6
    return int(stat.get("throttled_time", 0)) / 1e9  # v1, nanoseconds


def remove(uid: int, root: str = ROOT) -> None:
    """Kill whatever is left in jail `uid`'s group and delete the group."""
    import signal  # here: the jail's launcher imports this module, and signal (with enum) slows its start

    folders = set(_folders(uid, root).values())
    for _ in range(50):
        pids = members(uid, root)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        gone = True
        for folder in folders:
            try:
                os.rmdir(folder)
            except FileNotFoundError:
                pass
            except OSError:
                gone = False  # busy: a killed process is still exiting
        if gone:
            return
        time.sleep(0.02)


def sweep_orphans(owner_of, root: str = ROOT) -> list[int]:
    """Delete the empty jail groups whose grader is gone: a grader killed hard cannot
    remove its own. `owner_of(uid)` is the grader's pid modulo 100000 (a jail's uid names
    it: grader.protocol.grade.allocate_uid). Only empty groups go: a group with processes in it
    may be another pid namespace's grader's, which this one cannot see."""
    alive = {int(d) % 100_000 for d in os.listdir("/proc") if d.isdigit()}
    swept = set()
    for parent in {os.path.dirname(f) for f in _folders(0, root).values()}:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            uid = int(name[5:]) if name.startswith("jail-") and name[5:].isdigit() else None
            if uid is None or owner_of(uid) in alive:
                continue
            try:
                os.rmdir(os.path.join(parent, name))  # refused while a process is in it
                swept.add(uid)
            except OSError:
                pass
    return sorted(swept)
