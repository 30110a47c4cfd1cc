"""Helpers for the harness tests: the test programs and what a run may leave behind."""

import os
import signal
import threading

import pytest

from harness import Link, Program, run_transfer
from tests.support import REPO, TESTS  # noqa: F401 (REPO: the harness tests import it from here)

FIXTURES = TESTS / "fixtures"
PY = "python3"


def sw_sender(timeout_ms: int = 50, extra: str = "") -> Program:
    return Program(
        f"{PY} {FIXTURES}/sw_sender.py {{receiver_host}} {{receiver_port}} {{file}} {timeout_ms} {extra}",
        output_format="comn-sw",
    )


def sw_receiver() -> Program:
    return Program(f"{PY} {FIXTURES}/sw_receiver.py {{listen_port}} {{output}}")


def bad(mode: str, *args: str) -> Program:
    return Program(f"{PY} {FIXTURES}/badprog.py {mode} {' '.join(args)}")


def our_processes(run_dir: str) -> list[str]:
    """Live processes this test started: children of pytest (orphans come here too: see
    `subreaper` in conftest) or any process whose command line names the test's dir."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat") as f:
                state, ppid = f.read().rsplit(")", 1)[1].split()[:2]
        except OSError:
            continue
        if state != "Z" and (int(ppid) == os.getpid() or run_dir in cmd):
            found.append(f"{entry}: {cmd.strip()}")
    return found


def reap_orphans() -> None:
    """Reap dead orphans handed to pytest as their subreaper."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def our_namespaces() -> list[str]:
    prefix = f"rdt-{os.getpid()}-"
    try:
        return [n for n in os.listdir("/run/netns") if n.startswith(prefix)]
    except FileNotFoundError:
        return []


def interrupted_run(backend):
    """Ctrl-C (SIGINT, as in a notebook) in the middle of a run. Python's own handler is
    put in for it: a test run started in the background inherits SIGINT ignored (POSIX
    shells do that without job control), and then no KeyboardInterrupt would come."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_transfer(
                bad("hang"), sw_receiver(), Link("delay 1ms"), size=100, seed=1, backend=backend, time_limit=30
            )
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, before)
