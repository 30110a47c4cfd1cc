"""bench._own_cpu: the CPU of the bench's own process tree, not of the rest of the machine."""

import os
import subprocess
import sys

from bench._own_cpu import CPUACCT, OwnCpu

BUSY = "import time\nend = time.process_time() + {s}\nwhile time.process_time() < end: pass"


def test_a_child_is_counted_and_a_neighbour_is_not():
    neighbour = subprocess.Popen([sys.executable, "-c", BUSY.format(s=1.5)])  # started before: not ours
    try:
        with OwnCpu() as own:
            subprocess.run([sys.executable, "-c", BUSY.format(s=0.6)], check=True)
            group = own.group
    finally:
        neighbour.wait()
    if not (os.geteuid() == 0 and os.path.isfile(os.path.join(CPUACCT, "cgroup.procs"))):
        assert own.seconds is None and group is None, "no cgroup-v1 cpuacct here: no figure, not a wrong one"
        return
    assert 0.6 <= own.seconds < 1.4, own.seconds  # the child's 0.6 s and this process, not the neighbour's 1.5
    assert not os.path.exists(group), "the group is removed"
    with open("/proc/self/cgroup") as f:
        assert f"rdtlab-bench-{os.getpid()}" not in f.read(), "this process is back in its own group"
