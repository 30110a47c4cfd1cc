"""grader/notebook/nbgrader_child.py: each student's autograde in a fresh process forked from a
server that imported nbgrader once. Real forks of the real server, with the standard
library's functions as targets (the server imports them by name)."""

import ast
import os
import subprocess
import sys
import time

import pytest

from grader.notebook import nbgrader_child as C
from tests.support.runs import our_processes, reap_orphans


@pytest.fixture(autouse=True)
def stopped():
    yield
    C.stop()  # as autograde_students does when a class is done


def test_nothing_of_the_server_outlives_stop(tmp_path):
    before = our_processes(str(tmp_path))  # this test process's live children
    status, _ = C.run(os._exit, (0,), str(tmp_path), {}, 30)
    assert status == 0 and len(our_processes(str(tmp_path))) > len(before)  # the server and its resource tracker
    C.stop()
    assert our_processes(str(tmp_path)) == before
    status, _ = C.run(os._exit, (0,), str(tmp_path), {}, 30)  # and it starts again when needed
    assert status == 0


def test_the_child_runs_in_its_folder_with_exactly_the_environment_given(tmp_path):
    status, said = C.run(
        subprocess.run,
        (["sh", "-c", 'pwd; echo "[$RDT_GIVEN] [$HOME]"; echo oops >&2'],),
        str(tmp_path),
        {"RDT_GIVEN": "yes", "PATH": "/usr/bin:/bin"},
        30,
    )
    assert status == 0
    assert said.splitlines() == [str(tmp_path), "[yes] []", "oops"]


def test_an_exit_status_and_a_message_come_back(tmp_path):
    status, said = C.run(sys.exit, ("nbgrader: something went wrong",), str(tmp_path), {}, 30)
    assert status == 1 and said.strip() == "nbgrader: something went wrong"
    status, _ = C.run(os._exit, (3,), str(tmp_path), {}, 30)
    assert status == 3


def test_a_child_past_its_time_limit_is_killed_with_its_whole_session(tmp_path):
    pids = tmp_path / "pids"
    started = time.monotonic()
    status, _ = C.run(
        subprocess.run,
        (["sh", "-c", f"sleep 60 & echo $! > {pids}; exec sleep 61"],),
        str(tmp_path),
        {"PATH": "/usr/bin:/bin"},
        2,
    )
    assert status is None and time.monotonic() - started < 10
    background = int(pids.read_text())
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{background}") and time.monotonic() < deadline:
        time.sleep(0.05)  # killed; its parent reaps it: the init process, or pytest
        reap_orphans()  # when tests/harness's subreaper fixture ran earlier in the session
    assert not os.path.exists(f"/proc/{background}")


def test_each_student_gets_a_fresh_process(tmp_path):
    """Nothing of one child's state reaches the next: each is a new fork of the server."""
    first = tmp_path / "a"
    second = tmp_path / "b"
    for out in (first, second):
        out.mkdir()
        status, said = C.run(subprocess.run, (["sh", "-c", "echo $PPID"],), str(out), {"PATH": "/usr/bin:/bin"}, 30)
        assert status == 0
        out.joinpath("ppid").write_text(said.strip())
    assert first.joinpath("ppid").read_text() != second.joinpath("ppid").read_text()


@pytest.mark.parametrize("name", C.PRELOAD)
def test_the_server_preloads_modules_that_exist(name):
    __import__(name)


# What a jailed kernel's manager does on each start besides nbgrader's own work, and the
# packages it would import there otherwise (each a costly import).
HEAVY = {"pandas", "numpy", "pyroute2", "IPython"}
KERNEL_START = """
import sys
from grader.notebook.notebook_jail import kernel_tcp_runs
from jupyter_client.kernelspec import KernelSpecManager
before = {m.split(".")[0] for m in sys.modules}
kernel_tcp_runs("comn", SHARED)
KernelSpecManager().get_kernel_spec("python3")
print(sorted({m.split(".")[0] for m in sys.modules} - before))
"""


def test_a_kernel_start_in_the_child_imports_no_heavy_package_anew(tmp_path):
    """The Lab, pandas, the netns backend and IPython are imported once, by the server."""
    status, said = C.run(
        exec, (KERNEL_START.replace("SHARED", repr(str(tmp_path))),), str(tmp_path), dict(os.environ), 60
    )
    assert status == 0, said
    assert HEAVY.isdisjoint(ast.literal_eval(said.strip().splitlines()[-1]))
