"""SIGTERM (what `timeout`, `docker stop`, nbgrader and schedulers send) cleans up at
once, as Ctrl-C does: `rdtlab run` and `rdtlab sheet` (a sweep) exit 143 with every
namespace, TUN device, process group and temp dir they made gone."""

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.support.runs import FIXTURES, REPO, our_processes

pytestmark = pytest.mark.netns
RDTLAB = [sys.executable, "-m", "rdtlab"]


def namespaces_of(pid: int) -> list[str]:
    try:
        return [n for n in os.listdir("/run/netns") if n.startswith(f"rdt-{pid}-")]
    except FileNotFoundError:
        return []


def terminate_when_running(argv: list[str], run_dir, cwd) -> subprocess.CompletedProcess:
    """Start argv, wait until it has a namespace and programs running, SIGTERM it."""
    env = dict(os.environ, TMPDIR=str(run_dir), PYTHONPATH=str(REPO))
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (namespaces_of(proc.pid) and len(our_processes(str(run_dir))) >= 3):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no run started within 60 s"
        time.sleep(0.1)
    time.sleep(0.5)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    print(f"{argv[3]}: exited {took:.1f} s after SIGTERM")
    assert proc.returncode == 143, (proc.returncode, err[-2000:])
    assert "terminated (everything it started has been stopped)" in err
    assert namespaces_of(proc.pid) == []
    # Generous for a loaded machine; the point is "at once", not the run's time limit.
    assert took < 15, took
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def test_rdtlab_run_cleans_up_on_sigterm(clean_run, tmp_path):
    terminate_when_running(
        RDTLAB
        + [
            "run",
            "--sender",
            f"python3 {FIXTURES}/badprog.py hang",
            "--receiver",
            f"python3 {FIXTURES}/sw_receiver.py {{listen_port}} {{output}}",
            "--backend",
            "netns",
            "--size",
            "100",
            "--timeout",
            "120",
        ],
        clean_run,
        tmp_path,
    )


def test_rdtlab_sheet_cleans_up_on_sigterm(clean_run, tmp_path):
    impl = tmp_path / "impl"
    impl.mkdir()
    shutil.copy(FIXTURES / "badprog.py", impl / "badprog.py")
    (impl / "Sender2.py").write_text("import time\nwhile True:\n    time.sleep(1)\n")
    shutil.copy(FIXTURES / "students" / "Receiver2.py", impl / "Receiver2.py")
    terminate_when_running(
        RDTLAB
        + [
            "sheet",
            "comn",
            "--quick",
            "--impl",
            str(impl),
            "--questions",
            "q1",
            "--backend",
            "netns",
            "--no-progress",
            "--out",
            str(tmp_path / "out"),
        ],
        clean_run,
        tmp_path,
    )
