"""Fixtures for the harness tests: the test programs and a check that nothing is left.

`clean_run` (autouse) points the harness's temp directory at the test's own tmp dir
and, after the test, asserts that no process, temp dir, namespace or TUN device the
test made is left behind, however the run ended.
"""

import ctypes
import os
import tempfile
import time

import pytest

from tests.support.runs import our_namespaces, our_processes, reap_orphans

PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture(scope="session", autouse=True)
def subreaper():
    """Make pytest the subreaper of everything the tests start, so a grandchild whose
    parent died (and that would otherwise be re-parented to init, out of sight) stays a
    child of pytest, where `our_processes` finds it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    yield
    libc.prctl(PR_SET_CHILD_SUBREAPER, 0)
    reap_orphans()


@pytest.fixture(autouse=True)
def clean_run(tmp_path, monkeypatch):
    run_dir = tmp_path / "runs"
    run_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(run_dir))
    devices_before = set(os.listdir("/sys/class/net"))
    yield run_dir
    # Processes may take a moment to vanish from /proc after SIGKILL + reap.
    deadline = time.monotonic() + 2.0
    while our_processes(str(run_dir)) and time.monotonic() < deadline:
        time.sleep(0.05)
    reap_orphans()
    assert our_processes(str(run_dir)) == [], "processes left running"
    assert list(run_dir.iterdir()) == [], "temp dirs left behind"
    assert our_namespaces() == [], "network namespaces left behind"
    # TUN devices live in the run's namespaces; none may appear out here either (only
    # our names: other software on the machine, e.g. Docker, adds veths of its own).
    new = {d for d in set(os.listdir("/sys/class/net")) - devices_before if d.startswith("rdt")}
    assert new == set(), "devices left in the root namespace"
