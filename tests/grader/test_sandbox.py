"""The jail's launcher (grader/jail/sandbox.py): what bwrap is told, and what a jailed
process can read of its own PID 1 (bwrap's init) in /proc."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from fnmatch import fnmatch

import pytest

from grader.jail.sandbox import (
    ETC_VISIBLE,
    LAUNCHER,
    SAFE_PATH,
    Sandbox,
    argv_through_pipe,
    available,
    bwrap_argv,
    etc_visible,
    mount_scratch,
    unmount_scratch,
)

from tests.support.grading import jail_scratch


def test_the_jail_starts_with_an_allowed_environment_only():
    argv = bwrap_argv(3_000_001, "/s", None, [], ["python3", "x.py"], True, env={"OMP_NUM_THREADS": "1"})
    assert "--clearenv" in argv
    pairs = [(argv[i + 1], argv[i + 2]) for i, w in enumerate(argv) if w == "--setenv"]
    assert pairs == [("PATH", SAFE_PATH), ("HOME", "/s"), ("LANG", "C.UTF-8"), ("OMP_NUM_THREADS", "1")]
    assert argv[argv.index("--clearenv") :].index("--setenv") > 0  # cleared first, then set


def test_the_jail_binds_the_program_folders_and_only_a_little_of_etc():
    argv = bwrap_argv(3_000_001, "/s", None, [], ["python3", "x.py"], True)
    binds = [argv[i + 2] for i, w in enumerate(argv) if w in ("--ro-bind", "--ro-bind-try", "--bind")]
    assert "/usr" in binds and "/etc" not in binds and "/opt" not in binds and "/var" not in binds
    etc = [b for b in binds if b.startswith("/etc/")]
    assert etc == etc_visible() and "/etc/hosts" in etc  # students bind `localhost`
    assert not [b for b in etc if os.path.basename(b) in ("shadow", "passwd", "environment", "machine-id")]
    assert all(any(fnmatch(b, "/etc/" + p) for p in ETC_VISIBLE) for b in etc)


def test_bwraps_options_go_through_a_pipe_not_its_command_line():
    argv = ["bwrap", "--ro-bind", "/usr", "/usr", "--tmpfs", "/secret/course", "--", "python3", "x.py"]
    short = argv_through_pipe(argv)
    assert short[:2] == ["bwrap", "--args"] and short[3:] == ["--", "python3", "x.py"]
    fd = int(short[2])
    try:
        assert os.read(fd, 1 << 16) == b"--ro-bind\0/usr\0/usr\0--tmpfs\0/secret/course\0"
    finally:
        os.close(fd)


PROC_1 = """
import json
with open("/proc/1/environ", "rb") as f:
    environ = f.read()
with open("/proc/1/cmdline", "rb") as f:
    cmdline = f.read().split(b"\\0")
print(json.dumps({"environ": environ.decode(), "cmdline": [w.decode() for w in cmdline if w]}))
"""


@pytest.mark.skipif(available() is not None, reason=str(available()))
def test_pid_1_of_a_jail_shows_no_environment_and_no_paths(monkeypatch, tmp_path):
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "planted-secret")
    with jail_scratch("rdt-sbx-", 16 << 20) as (uid, scratch):
        os.chown(scratch, uid, uid)
        sandbox = Sandbox(uid, scratch, hidden=[str(tmp_path / "course")], network=False, run_dir=False)
        done = subprocess.run(
            sandbox.prefix() + ["/usr/bin/python3", "-c", PROC_1],
            cwd=scratch,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr[-1500:]
    seen = json.loads(done.stdout)
    assert seen["environ"] == ""
    assert seen["cmdline"][:2] == ["bwrap", "--args"] and seen["cmdline"][3] == "--"
    assert str(tmp_path) not in done.stdout and sys.prefix not in done.stdout


def test_the_launcher_reads_back_every_option_the_prefix_gives():
    from grader.jail.launcher import parse

    box = Sandbox(3_000_002, "/s", hidden=["/a", "/b"], visible=["/k"], env={"X": "1"}, network=False, run_dir=False)
    prefix = box.prefix()
    assert prefix[1:4] == ["-S", "-c", LAUNCHER]
    args = parse(prefix[4:] + ["python3", "x.py", "--uid", "7"])
    assert (args.uid, args.scratch, args.hide, args.ro, args.env) == (3_000_002, "/s", ["/a", "/b"], ["/k"], ["X=1"])
    assert (args.memory, args.group_cpus, args.group_tasks) == (
        box.limits.memory_bytes,
        box.limits.group.cpus,
        box.limits.group.tasks,
    )
    assert args.no_network and args.no_run_dir
    assert args.command == ["python3", "x.py", "--uid", "7"]  # the program's own options stay its own


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--uid", "x"], "--uid 'x' is not a number"),
        (["--bogus"], "unknown option '--bogus'"),
        (["--uid"], "--uid needs a value"),
        (["--uid", "3000001", "--", "true"], "missing --scratch"),
    ],
)
def test_the_launcher_refuses_a_bad_option_in_one_line(argv, says):
    from grader.jail.launcher import parse

    with pytest.raises(SystemExit) as e:
        parse(argv)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_the_scratch_copy_leaves_a_handed_in_bytecode_cache_behind(tmp_path):
    """A .pyc handed in beside its .py would run in its place: the jail compiles the source."""
    import py_compile
    from grader.jail.sandbox import prepare_scratch

    source = tmp_path / "hand-in"
    source.mkdir()
    (source / "lib.py").write_text("ANSWER = 'the source'\n")
    (source / "notes.tmp").write_text("the caller's own pattern still applies")
    other = tmp_path / "other.py"
    other.write_text("ANSWER = 'not the source'\n")
    (source / "__pycache__").mkdir()
    py_compile.compile(
        str(other),
        cfile=str(source / "__pycache__" / "lib.cpython-311.pyc"),
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    dest = prepare_scratch(str(source), str(scratch), os.getuid(), ignore=shutil.ignore_patterns("*.tmp"))
    assert sorted(os.listdir(dest)) == ["lib.py"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs takes root")
def test_the_scratch_of_a_grader_killed_hard_is_unmounted_and_removed(tmp_path):
    """A grader killed by SIGKILL leaves its scratch folders, with their tmpfs mounted;
    the next grader sweeps those whose pid is gone, and keeps a live grader's."""
    from grader.jail.sandbox import mounts_under, sweep_scratch

    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that just ended: no process has it now
    assert not os.path.exists(f"/proc/{dead.pid}")
    theirs = tmp_path / f"rdt-grade-{dead.pid}-x1"
    kernel = tmp_path / f"rdt-kernel-tcp-{dead.pid}-x2"
    mine = tmp_path / f"rdt-grade-{os.getpid()}-x3"
    run = tmp_path / f"rdt-run-{dead.pid}-x4"  # a jailed run's receiver folder has a tmpfs on it
    other = tmp_path / f"rdt-iperf-{dead.pid}-x5"  # not a grader's
    traces = tmp_path / f"rdt-reftraces-{dead.pid}-x6"  # the reference runs' traces, for pictures
    for folder in (theirs, kernel, mine, run / "receiver", other, traces):
        folder.mkdir(parents=True)
    for folder in (theirs, mine, run / "receiver"):
        mount_scratch(str(folder), 1 << 20)
    try:
        (theirs / "sub").mkdir()
        (theirs / "sub" / "left.txt").write_text("left behind")
        assert mounts_under(str(theirs)) == [str(theirs)]
        assert sweep_scratch(str(tmp_path)) == [str(theirs), str(kernel), str(traces), str(run)]
        for folder in (theirs, kernel, run, traces):
            assert not folder.exists() and mounts_under(str(folder)) == []
        assert mine.exists() and mounts_under(str(mine)) == [str(mine)] and other.exists()
    finally:
        for folder in (theirs, mine, run / "receiver"):
            if mounts_under(str(folder)):
                unmount_scratch(str(folder))
    assert mounts_under(str(tmp_path)) == []
