"""Helpers for the grader's tests: the tiny battery, submissions in temporary
folders, and the check that nothing a submission started is left behind."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from grader.battery import load_battery
from grader.collect import Submission
from grader.grade import Options, grade_submission
from grader.planted import reference_submission
from grader.sandbox import UID_BASE

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures" / "submissions"
STUDENT = FIXTURES / "student"
TINY = str(HERE / "tiny.toml")


def jail_processes() -> list[int]:
    """Processes running under a jail uid of this test process (none after a grade)."""
    low = UID_BASE + (os.getpid() % 100_000) * 100
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if low <= os.stat(f"/proc/{entry}").st_uid < low + 100:
                    with open(f"/proc/{entry}/stat") as f:
                        if f.read().rsplit(")", 1)[1].split()[0] != "Z":     # zombies hold nothing
                            found.append(int(entry))
            except OSError:
                pass
    return found


def grade(path, battery="tiny", names=None, out=None, **options) -> dict:
    b = load_battery(TINY if battery == "tiny" else battery)
    if names:
        b = b.select(names=names)
    sub = Submission(Path(path).name, str(path))
    return grade_submission(sub, b, str(out) if out else None, Options(backend="netns", **options))


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
    for _ in range(20):      # SIGKILLed processes take a moment to go
        if not left:
            break
        time.sleep(0.1)
        left = jail_processes()
    assert left == [], f"a jailed process outlived its grade: {[_cmdline(p) for p in left]}"
    low = UID_BASE + (os.getpid() % 100_000) * 100
    with open("/proc/self/mountinfo") as f:
        mounts = [line for line in f if any(f"rdtjail-{uid} " in line for uid in range(low, low + 100))]
    assert mounts == [], f"a jail's tmpfs is still mounted: {mounts}"


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return str(pid)
