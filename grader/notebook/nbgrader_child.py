"""nbgrader's autograde of one student, in a process of its own forked from a server that
has imported nbgrader once.

Each student's autograde runs in a fresh process (a crash, a hang, a leak or nbgrader's
global application state stays with that student). Starting Python and importing
nbgrader, Jupyter and nbconvert for each one cost about half the CPU that process
spent (BENCHMARKS.md, "Notebooks"). So the processes are forked from multiprocessing's
fork server, started once per grading process with those modules imported: each
student's process is still new, and nothing of one student's autograde reaches the
next, but none of them imports anything. The server lives for one class's autograde
(the grader calls `stop()` when the class is done): nothing of it outlives the grading.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
import threading

# What the fork server imports once: run_nbgrader_autograde's imports, and what the
# jailed kernel's manager imports on each start (notebook_jail.kernel_tcp_runs: the Lab
# and pandas, the netns backend; jupyter_client's kernel specs: IPython), which each
# student's process would otherwise import anew (BENCHMARKS.md, "Notebooks"). None of
# them reads an RDTLAB_ setting on import: each child's environment is its own.
PRELOAD = [
    "grader.notebook.notebook_jail",
    "nbgrader.apps.autogradeapp",
    "nbgrader.converters.autograde",
    "harness.notebook",
    "harness.backends.netns",
    "IPython",
]

_context = None
_lock = threading.Lock()


def _server():
    """multiprocessing's fork-server context, its preload set (the server itself starts
    with the first child)."""
    global _context
    with _lock:
        if _context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(PRELOAD)
            _context = context
        return _context


def stop() -> None:
    """Stop the fork server (it starts again with the next child) and multiprocessing's
    resource tracker, which it started."""
    global _context
    with _lock:
        if _context is None:
            return
        from multiprocessing import forkserver, resource_tracker

        # the standard library's own way to stop them (its tests use it); a Python
        # without it keeps them until this process ends, as multiprocessing does
        for running in (forkserver._forkserver, resource_tracker._resource_tracker):
            getattr(running, "_stop", lambda: None)()
        _context = None


def autograde(argv: list[str], cwd: str, env: dict[str, str], time_limit: float) -> tuple[int | None, str]:
    """(exit status, what it wrote to stdout and stderr) of `nbgrader autograde ARGV` with
    the jailed Execute, run in `cwd` with exactly the environment `env`; (None, what it
    wrote) when it ran past `time_limit` seconds and was killed."""
    return run(_nbgrader, (argv,), cwd, env, time_limit)


def run(target, args: tuple, cwd: str, env: dict[str, str], time_limit: float) -> tuple[int | None, str]:
    """`target(*args)` (a module's function) in a process forked from the server, in a
    session of its own: its exit status (negative: the signal that killed it) and what it
    wrote; at `time_limit` seconds its whole session is killed and the status is None."""
    fd, log = tempfile.mkstemp(prefix="rdt-nbgrader-", suffix=".log")  # root's, outside every jail
    os.close(fd)
    try:
        child = _server().Process(target=_child, args=(target, args, cwd, env, log), name="nbgrader autograde")
        child.start()
        child.join(time_limit)
        status = child.exitcode
        if status is None:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            child.join()
        with open(log, errors="replace") as f:
            said = f.read()
        return status, said
    finally:
        os.unlink(log)


def _child(target, args: tuple, cwd: str, env: dict[str, str], log: str) -> None:
    """In the forked process: a session of its own, its output to `log`, then the target."""
    os.setsid()
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    target(*args)


def _nbgrader(argv: list[str]) -> None:
    from grader.notebook.notebook_jail import run_nbgrader_autograde

    run_nbgrader_autograde(argv)
