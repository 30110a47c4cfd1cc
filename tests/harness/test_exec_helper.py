"""harness.procs starts programs through the exec helper rdtexec (vfork, then the
helper's set-up) or, without it, through a preexec_fn (fork): the same program sees
the same process either way."""

import errno
import json
import os
import signal
import subprocess
import sys

import pytest

from harness.procs import (
    EXEC_HELPER_ENV,
    Processes,
    ProgramNotFound,
    UsageError,
    exec_helper,
    helper_argv,
    helper_failure,
)
from harness.procs import _BUILT_HELPER

# What a started program finds about itself (PR_GET_PDEATHSIG is 2).
PROBE = r"""
import ctypes, fcntl, json, os, resource, socket, struct
libc = ctypes.CDLL(None)
sig = ctypes.c_int()
libc.prctl(2, ctypes.byref(sig))
fds = os.listdir("/proc/self/fd")
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    lo = struct.unpack_from("H", fcntl.ioctl(s, 0x8913, struct.pack("16sH22x", b"lo", 0)), 16)[0] & 1
print(json.dumps({"pdeathsig": sig.value, "fsize": resource.getrlimit(resource.RLIMIT_FSIZE),
                  "core": resource.getrlimit(resource.RLIMIT_CORE), "nice": os.getpriority(os.PRIO_PROCESS, 0),
                  "leader": os.getsid(0) == os.getpid() == os.getpgid(0), "fds": len(fds) - 1,
                  "netns": os.readlink("/proc/self/ns/net"), "lo_up": bool(lo)}))
"""


@pytest.fixture(params=["helper", "preexec"])
def start_path(request, monkeypatch):
    if request.param == "helper":
        helper = exec_helper()
        assert helper, "rdtexec is not built: make build"
        monkeypatch.setenv(EXEC_HELPER_ENV, helper)
    else:
        monkeypatch.setenv(EXEC_HELPER_ENV, "off")
    return request.param


def probe(tmp_path, **options) -> dict:
    with Processes() as procs:
        p = procs.start("probe", [sys.executable, "-c", PROBE], cwd=str(tmp_path), **options)
        assert p.wait(20)
        procs.stop(p)
    assert p.exit_code == 0, p.stderr()
    return json.loads(p.stdout())


def test_a_program_gets_the_same_process_on_both_paths(tmp_path, start_path):
    seen = probe(tmp_path, file_cap=123456, priority=5)
    assert seen == {
        "pdeathsig": signal.SIGKILL,
        "fsize": [123456, 123456],
        "core": [0, 0],
        "nice": 5,
        "leader": True,
        "fds": 3,
        "netns": os.readlink("/proc/self/ns/net"),
        "lo_up": True,
    }


def test_signals_the_harness_ignores_are_defaults_again(tmp_path, start_path):
    # cat itself reports: SIGTERM, SIGINT and SIGPIPE neither ignored nor blocked, though
    # the harness ignores the first two while it cleans up (and Rust's runtime, the
    # helper's, ignores SIGPIPE). Other signals stay as the harness's own caller left
    # them (nohup ignores SIGHUP, a shell's background job SIGQUIT): exec keeps those.
    old = signal.signal(signal.SIGTERM, signal.SIG_IGN), signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with Processes() as procs:
            p = procs.start("cat", ["cat", "/proc/self/status"], cwd=str(tmp_path))
            assert p.wait(10)
    finally:
        signal.signal(signal.SIGTERM, old[0]), signal.signal(signal.SIGINT, old[1])
    status = dict(line.split(":\t", 1) for line in p.stdout().splitlines() if ":\t" in line)
    ours = sum(1 << (sig - 1) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGPIPE))
    assert int(status["SigIgn"], 16) & ours == 0 and int(status["SigBlk"], 16) & ours == 0


@pytest.mark.netns
def test_network_namespaces_new_and_joined(tmp_path, start_path):
    with Processes() as procs:
        holder = procs.start("holder", ["sleep", "30"], cwd=str(tmp_path), new_netns=True)
        theirs = os.readlink(f"/proc/{holder.pid}/ns/net")
        assert theirs != os.readlink("/proc/self/ns/net")
        seen = probe(tmp_path, netns=f"/proc/{holder.pid}/ns/net")
        assert seen["netns"] == theirs and seen["lo_up"] and seen["fds"] == 3  # the namespace's fd not inherited
        # while the holder's namespace lives: a freed namespace's number is given to the next one
        own = probe(tmp_path, new_netns=True)
    assert own["netns"] not in (theirs, os.readlink("/proc/self/ns/net")) and own["lo_up"]


def test_exec_errors_are_the_ones_popen_raised(tmp_path, start_path):
    garbage = tmp_path / "Sender"
    garbage.write_bytes(b"\x7fELF not really")
    garbage.chmod(0o755)
    with Processes() as procs, pytest.raises(OSError) as raised:
        procs.start("x", [str(garbage)], cwd=str(tmp_path))
    assert raised.value.errno == errno.ENOEXEC
    with Processes() as procs, pytest.raises(ProgramNotFound, match="command not found: 'no-such-program-rdt'"):
        procs.start("x", ["no-such-program-rdt"], cwd=str(tmp_path))


def test_a_failed_setns_names_the_step(tmp_path, monkeypatch):
    monkeypatch.setenv(EXEC_HELPER_ENV, exec_helper())
    with Processes() as procs, pytest.raises(OSError, match="setns into the host's network namespace failed: Invalid"):
        procs.start("x", ["true"], cwd=str(tmp_path), netns="/proc/self/ns/uts")


def test_the_helper_alone_exits_as_a_shell_would(tmp_path):
    helper = exec_helper()
    missing = subprocess.run([helper, "--", str(tmp_path / "nothing")], capture_output=True, text=True)
    assert missing.returncode == 127 and missing.stderr.count("\n") == 1 and "No such file" in missing.stderr
    (tmp_path / "data").write_text("x")
    assert subprocess.run([helper, "--", str(tmp_path / "data")], capture_output=True).returncode == 126
    bad = subprocess.run([helper, "--frobnicate"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown option" in bad.stderr
    gone = subprocess.run([helper, "--ppid", "1", "--", "/bin/echo", "ran"], capture_output=True, text=True)
    assert gone.returncode == 1 and gone.stdout == ""  # its parent is not the one that started it


def test_helper_argv_and_status(tmp_path):
    assert helper_argv(
        "/h", "/bin/x", ["a b"], parent=7, file_cap=10, status_fd=5, netns_fd=6, priority=-10, new_netns=True
    ) == [
        "/h",
        "--ppid",
        "7",
        "--fsize",
        "10",
        "--status-fd",
        "5",
        "--netns-fd",
        "6",
        "--new-netns",
        "--nice",
        "-10",
        "--",
        "/bin/x",
        "a b",
    ]
    assert helper_argv("/h", "/bin/x", [], parent=7, file_cap=10, status_fd=5)[-2:] == ["--", "/bin/x"]
    assert helper_failure(b"", "/bin/x") is None
    assert isinstance(helper_failure(b"exec 2", "/bin/x"), FileNotFoundError)
    assert isinstance(helper_failure(b"exec 13", "/bin/x"), PermissionError)
    assert "unshare(CLONE_NEWNET) failed: Operation not permitted" in str(helper_failure(b"unshare 1", "/bin/x"))


def test_finding_the_helper(tmp_path, monkeypatch):
    monkeypatch.setenv(EXEC_HELPER_ENV, "off")
    assert exec_helper() is None
    monkeypatch.setenv(EXEC_HELPER_ENV, str(tmp_path / "rdtexec"))
    with pytest.raises(UsageError, match=f"{EXEC_HELPER_ENV}=.*rdtexec is not an executable file.*make build"):
        exec_helper()
    monkeypatch.delenv(EXEC_HELPER_ENV)
    for name in ("linkemu", "rdtexec"):  # an engine installed elsewhere brings its helper
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    monkeypatch.setenv("RDTLAB_LINKEMU", str(tmp_path / "linkemu"))
    assert exec_helper() == str(tmp_path / "rdtexec")


def test_make_build_builds_the_helper_beside_the_engine():
    from harness.engine import BUILT

    if BUILT.exists():
        assert os.access(_BUILT_HELPER, os.X_OK) and os.path.dirname(_BUILT_HELPER) == str(BUILT.parent)


def test_a_helper_gone_since_it_was_found_is_named(tmp_path, monkeypatch):
    helper = tmp_path / "rdtexec"
    helper.write_text("#!/bin/sh\n")
    helper.chmod(0o755)
    monkeypatch.setenv(EXEC_HELPER_ENV, str(helper))
    monkeypatch.setattr("harness.procs.exec_helper", lambda: str(helper))
    helper.unlink()
    with Processes() as procs, pytest.raises(UsageError, match=r"cannot run the exec helper .*rdtexec: No such file"):
        procs.start("x", ["true"], cwd=str(tmp_path))
