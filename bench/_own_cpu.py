"""The CPU a bench's own process tree spends, whatever else the machine runs.

The machine's busy time (/proc/stat) counts every process on it: a compile, an editor's
indexer or a second bench beside a class bench all land in its CPU-s per notebook. Here
the bench moves itself into a cgroup-v1 `cpuacct` group of its own, which everything it
starts inherits: nbgrader, the jailed kernels, the students' programs, the engines
(the jails join groups of the cpu, memory and pids controllers only, grader/jail/cgroups.py,
so they stay in this one). What it misses is interrupt work the kernel does not charge
to a task. Without a v1 cpuacct hierarchy (cgroup v2, a container), it is None.

    with OwnCpu() as own:
        ...
    own.seconds        # CPU-seconds of the tree in the block, or None
"""

from __future__ import annotations

import os
import time

CPUACCT = "/sys/fs/cgroup/cpuacct"


def _own_group(root: str) -> str:
    """This process's cpuacct group, as a folder under `root` (where it goes back to)."""
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if "cpuacct" in controllers.split(","):
                    return os.path.join(root, path.lstrip("/"))
    except (OSError, ValueError):
        pass
    return root


class OwnCpu:
    def __init__(self, root: str = CPUACCT):
        self.root, self.group, self.seconds = root, None, None
        self._start, self._home = None, _own_group(root)

    def _usage_s(self) -> float:
        with open(os.path.join(self.group, "cpuacct.usage")) as f:
            return int(f.read()) / 1e9

    def __enter__(self) -> "OwnCpu":
        group = os.path.join(self._home, f"rdtlab-bench-{os.getpid()}")
        try:
            os.mkdir(group)
            with open(os.path.join(group, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        except OSError:
            if os.path.isdir(group):
                os.rmdir(group)
            return self
        self.group = group
        self._start = self._usage_s()
        return self

    def __exit__(self, *exc) -> None:
        if self.group is None:
            return
        self.seconds = self._usage_s() - self._start
        try:  # back to the group it came from; then this one goes, once its last child is reaped
            with open(os.path.join(self._home, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        except OSError:
            return
        for _ in range(50):
            try:
                os.rmdir(self.group)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)
