"""What one program start costs the harness: `Processes.start` through
a `preexec_fn` (CPython forks the whole process) against the exec helper `rdtexec`
(CPython vforks; the helper does the child's set-up and execs the program).

    python -m bench spawn [--starts 200] [--imports grader|bare]

From a process that has imported what the grader's does (`--imports grader`: the
autograde driver, the re-measurement, nbgrader's autograde app, pandas, matplotlib; its
resident size is printed) or only harness.procs (`bare`), each program is started,
waited for and stopped `--starts` times on each path, the paths interleaved in rounds so
load changes hit both alike. Per start: this process's CPU (the fork, the pipes' reader
threads, the stop), the children's CPU (the forked copy's set-up and exec, the program),
the wall time `start()` takes (its return: the program exec'd), the whole cycle's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import sys
import tempfile
import time

ROUNDS = 10
# This interpreter itself, not `python3` on PATH, which may be a shell script (pyenv's shim).
PROGRAMS = (("/bin/true", ["/bin/true"], 1.0), ("python -c pass", [sys.executable, "-c", "pass"], 0.25))


def import_grader() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401
    import nbgrader.apps.autogradeapp  # noqa: F401
    import pandas  # noqa: F401

    import grader.notebook.autograde  # noqa: F401
    import grader.notebook.remeasure  # noqa: F401
    import harness.transfer  # noqa: F401


@contextlib.contextmanager
def path(mode: str):
    """`preexec`: the fallback through _child_setup; `helper`: through rdtexec."""
    from harness.procs import EXEC_HELPER_ENV

    old = os.environ.get(EXEC_HELPER_ENV)
    if mode == "preexec":
        os.environ[EXEC_HELPER_ENV] = "off"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(EXEC_HELPER_ENV, None)
        else:
            os.environ[EXEC_HELPER_ENV] = old


def cpu(usage) -> float:
    return usage.ru_utime + usage.ru_stime


def cycles(argv: list[str], n: int, cwd: str) -> tuple[float, float, list[float], float]:
    """n starts of argv: (this process's CPU-s, children's CPU-s, start() times, wall s)."""
    from harness.procs import Processes

    me, kids, began = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
        time.monotonic(),
    )
    starts = []
    for _ in range(n):
        with Processes() as procs:
            t = time.perf_counter()
            proc = procs.start("bench", argv, cwd=cwd)
            starts.append(time.perf_counter() - t)
            proc.wait(None)
            procs.stop(proc)
            if proc.exit_code != 0:
                raise RuntimeError(f"{argv} exited {proc.exit_code}: {proc.stderr()}")
    wall = time.monotonic() - began
    return (
        cpu(resource.getrusage(resource.RUSAGE_SELF)) - cpu(me),
        cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - cpu(kids),
        starts,
        wall,
    )


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench spawn")
    p.add_argument("--starts", type=int, default=200, help="starts of /bin/true per path (a quarter for python3)")
    p.add_argument("--imports", choices=("grader", "bare"), default="grader")
    return p


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.imports == "grader":
        import_grader()
    from harness.procs import exec_helper

    with path("helper"):
        helper = exec_helper()
    if helper is None:
        print("bench spawn: no exec helper (rdtexec) found: run `make build`", file=sys.stderr)
        return 1
    rss = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}, imports {args.imports} "
        f"(resident {rss:.0f} MB), helper {helper}"
    )
    print(
        "| program | path | starts | this process CPU ms/start | children CPU ms/start "
        "| start() ms median (p90) | cycle ms |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="rdt-bench-spawn-") as cwd:
        for label, prog, share in PROGRAMS:
            n = max(ROUNDS, int(args.starts * share)) // ROUNDS
            totals = {mode: [0.0, 0.0, [], 0.0] for mode in ("preexec", "helper")}
            for r in range(ROUNDS):
                for mode in ("preexec", "helper") if r % 2 == 0 else ("helper", "preexec"):
                    with path(mode):
                        me, kids, starts, wall = cycles(prog, n, cwd)
                    t = totals[mode]
                    t[0] += me
                    t[1] += kids
                    t[2] += starts
                    t[3] += wall
            for mode, (me, kids, starts, wall) in totals.items():
                k = len(starts)
                p90 = statistics.quantiles(starts, n=10)[-1]
                print(
                    f"| {label} | {mode} | {k} | {me / k * 1e3:.2f} | {kids / k * 1e3:.2f} "
                    f"| {statistics.median(starts) * 1e3:.2f} ({p90 * 1e3:.2f}) | {wall / k * 1e3:.2f} |"
                )
    print(f"load after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
