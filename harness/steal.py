"""The CPU time a virtual machine's host took from it: the `steal` counter of /proc/stat.

An oversubscribed host stops a VM's CPUs for milliseconds at a time with nothing inside
the VM to show for it: the load is low, yet the engine sends packets late. A run's lag
warning names it (harness/transfer.py), so whoever reads it looks at the host, not for
a busy process that is not there (BENCHMARKS.md, "The test suite": a host that steals).
"""

from __future__ import annotations

STAT = "/proc/stat"
NOTABLE = 0.005  # a share of all CPU time; a host that steals nothing reads 0


def cpu_times(path: str = STAT) -> list[int] | None:
    """The machine's CPU counters (user nice system idle iowait irq softirq steal), or None."""
    try:
        with open(path) as f:
            fields = f.readline().split()
        return [int(x) for x in fields[1:9]] if len(fields) >= 9 and fields[0] == "cpu" else None
    except (OSError, ValueError):
        return None


def stolen_share(before: list[int] | None, after: list[int] | None) -> float | None:
    """The share of all CPU time between two readings that the host took, or None."""
    if not before or not after:
        return None
    spent = [b - a for a, b in zip(before, after)]
    total = sum(spent)
    return spent[7] / total if total > 0 else None


def lag_cause(share: float | None) -> str:
    """What to blame a late engine on: the host, when it stole a notable share of the CPU
    time during the run (`stolen_share`), else load."""
    if share is not None and share >= NOTABLE:
        return f"this VM's host held its CPUs back (steal: {share:.1%} of the CPU time during the run)"
    return "the machine was busy"
