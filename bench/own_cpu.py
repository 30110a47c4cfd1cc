"""The CPU a bench's own process tree spends, whatever else the machine runs.

The machine's busy time (/proc/stat) counts every process on it: a compile, an editor's
indexer or a second bench beside a class bench all land in its CPU-s per notebook. Here
the bench moves itself into a cgroup-v1 `cpuacct` group of its own, which everything it
starts inherits: nbgrader, the jailed kernels, the students' programs, the engines
(the jails join groups of the cpu, memory and pids controllers only, grader/cgroups.py,
so they stay in this one). What it misses is interrupt work the kernel does not charge
to a task. Without a v1 cpuacct hierarchy (cgroup v2, a container), it is None.

    with OwnCpu() as own:
        ...
    own.seconds        # CPU-seconds of the tree in the block, or None
"""
from __future__ import annotations

import os

CPUACCT = "/sys/fs/cgroup/cpuacct"


class OwnCpu:
    def __init__(self, root: str = CPUACCT):
        self.root, self.group, self.seconds = root, None, None
        self._start = None

    def _usage_s(self) -> float:
        with open(os.path.join(self.group, "cpuacct.usage")) as f:
            return int(f.read()) / 1e9

    def __enter__(self) -> "OwnCpu":
        group = os.path.join(self.root, f"rdtlab-bench-{os.getpid()}")
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
        try:    # back to the root group, then the group goes (its children are all reaped by now)
            with open(os.path.join(self.root, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            os.rmdir(self.group)
        except OSError:
            pass
