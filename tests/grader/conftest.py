"""The grader tests' fixtures: the host's services, the reference and the correct student
copied, and the check that nothing a submission started is left behind (the helpers
they use are tests/support/grading.py)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from grader.protocol.planted import reference_submission
from grader.jail.sandbox import UID_BASE
from tests.support.grading import STUDENT, HostServices, cmdline, jail_processes


@pytest.fixture
def host():
    """Services on the host's loopback that no jail may reach."""
    services = HostServices()
    yield services
    services.close()


@pytest.fixture(scope="session")
def reference_copy(tmp_path_factory) -> Path:
    return Path(reference_submission(str(tmp_path_factory.mktemp("ref") / "refcopy")))


@pytest.fixture
def student(tmp_path) -> Path:
    return Path(shutil.copytree(STUDENT, tmp_path / "ada"))


@pytest.fixture(autouse=True)
def nothing_left_running():
    yield
    left = jail_processes()
    for _ in range(20):  # SIGKILLed processes take a moment to go
        if not left:
            break
        time.sleep(0.1)
        left = jail_processes()
    assert left == [], f"a jailed process outlived its grade: {[cmdline(p) for p in left]}"
    low = UID_BASE + (os.getpid() % 100_000) * 100
    with open("/proc/self/mountinfo") as f:
        mounts = [line for line in f if any(f"rdtjail-{uid} " in line for uid in range(low, low + 100))]
    assert mounts == [], f"a jail's tmpfs is still mounted: {mounts}"
