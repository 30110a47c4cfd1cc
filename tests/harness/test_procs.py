"""harness.procs: process groups, caps, limits, placeholders."""

import os
import signal
import sys
import time

import pytest

from harness.procs import Processes, ProgramNotFound, UsageError, describe_exit, pids_in_group, render
from tests.support.runs import FIXTURES

BAD = [sys.executable, str(FIXTURES / "badprog.py")]


def test_render_fills_placeholders_and_keeps_values_with_spaces_whole():
    argv = render("prog {file} --port {port}", {"file": "/a b/c", "port": 5})
    assert argv == ["prog", "/a b/c", "--port", "5"]


def test_render_makes_existing_relative_paths_absolute(monkeypatch):
    monkeypatch.chdir(FIXTURES.parent.parent)
    argv = render("python3 tests/fixtures/badprog.py crash", {})
    assert argv[1] == str(FIXTURES / "badprog.py")


def test_render_names_an_unknown_placeholder():
    with pytest.raises(UsageError, match=r"uses \{windwo\}.*known: \{file\}"):
        render("prog {windwo}", {"file": "x"})


def test_missing_executable_is_program_not_found(tmp_path):
    with Processes() as procs, pytest.raises(ProgramNotFound, match="no-such-program"):
        procs.start("x", ["no-such-program-rdt"], cwd=str(tmp_path))


def test_a_script_without_execute_permission_says_so(tmp_path):
    script = tmp_path / "Sender.py"
    script.write_text("print(1)\n")
    with Processes() as procs, pytest.raises(ProgramNotFound, match=r"not executable: .*chmod \+x"):
        procs.start("x", [str(script)], cwd=str(tmp_path))


def test_group_is_killed_with_grandchildren(tmp_path):
    with Processes() as procs:
        p = procs.start("spawner", [*BAD, "spawn"], cwd=str(tmp_path))
        assert p.wait(10)
        time.sleep(0.2)
        assert pids_in_group(p.pid), "the grandchild should still run in the group"
    assert pids_in_group(p.pid) == []


def test_a_group_that_is_gone_is_not_looked_for_in_proc(tmp_path, monkeypatch):
    """stop() asks the kernel whether the group is left (one call); it scans /proc only
    when something answers: a program that leaves nothing costs no scan."""
    import harness.procs as procs_module

    scans = []
    monkeypatch.setattr(procs_module, "pids_in_group", lambda pgid: scans.append(pgid) or [])
    with Processes() as procs:
        p = procs.start("true", ["true"], cwd=str(tmp_path))
        assert p.wait(10)
        procs.stop(p)
    assert p.exit_code == 0 and scans == []
    assert procs_module.group_exists(p.pid) is False


def ignores_sigterm(pid: int) -> bool:
    with open(f"/proc/{pid}/status") as f:
        mask = next(int(line.split()[1], 16) for line in f if line.startswith("SigIgn:"))
    return bool(mask >> (signal.SIGTERM - 1) & 1)


def test_sigterm_ignored_means_sigkill_after_grace(tmp_path):
    with Processes() as procs:
        p = procs.start("hang", [*BAD, "hang"], cwd=str(tmp_path))
        deadline = time.monotonic() + 30  # until it ignores SIGTERM (start-up is slow under load)
        while not ignores_sigterm(p.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        t = time.monotonic()
        procs.stop(p, grace=0.5)
        assert p.exit_code == -signal.SIGKILL
        assert 0.4 < time.monotonic() - t < 5


def test_exception_in_block_still_stops_everything(tmp_path):
    with pytest.raises(RuntimeError):
        with Processes() as procs:
            p = procs.start("hang", [*BAD, "hang"], cwd=str(tmp_path))
            raise RuntimeError("boom")
    assert p.exit_code is not None and pids_in_group(p.pid) == []


def test_stdout_keeps_only_the_tail(tmp_path, monkeypatch):
    monkeypatch.setattr("harness.procs.TAIL_BYTES", 1000)
    with Processes() as procs:
        p = procs.start("talk", [*BAD, "talk", "5000"], cwd=str(tmp_path))
        assert p.wait(10)
    assert p._out.total == 5000 and len(p.stdout()) == 1000


def test_file_cap_stops_a_program_writing_without_end(tmp_path):
    with Processes() as procs:
        p = procs.start("fill", [*BAD, "fill", "0", str(tmp_path / "out")], cwd=str(tmp_path), file_cap=1 << 20)
        assert p.wait(20)
    # Python ignores SIGXFSZ, so its write() fails with EFBIG instead of the signal.
    assert p.exit_code == 1 and "File too large" in p.last_stderr_line()
    assert os.path.getsize(tmp_path / "out") <= 1 << 20
    assert "file-size cap of 1048576 bytes" in describe_exit(p.exit_code, 1 << 20, p.last_stderr_line())


def test_file_cap_kills_a_native_program_with_sigxfsz(tmp_path):
    with Processes() as procs:
        p = procs.start(
            "dd", ["dd", "if=/dev/zero", f"of={tmp_path / 'out'}", "bs=64k"], cwd=str(tmp_path), file_cap=1 << 20
        )
        assert p.wait(20)
    assert p.exit_code == -signal.SIGXFSZ
    assert os.path.getsize(tmp_path / "out") == 1 << 20
    assert describe_exit(p.exit_code, 1 << 20) == "killed by SIGXFSZ, it wrote past the file-size cap of 1048576 bytes"


def test_the_last_stderr_line_quoted_in_a_reason_is_bounded(tmp_path):
    # a program's own words reach a student's feedback as one line of bounded length
    from harness.procs import LAST_LINE_CHARS

    code = "import sys; print('first'); print('x' * 5000, file=sys.stderr); sys.exit(3)"
    with Processes() as procs:
        p = procs.start("chatty", [sys.executable, "-c", code], cwd=str(tmp_path))
        p.wait(10)
        line = p.last_stderr_line()
    assert len(line) == LAST_LINE_CHARS and line.startswith("xxx") and line.endswith("…")
    assert describe_exit(3, None, line).startswith("exit 3: xxx")


def test_a_program_s_cpu_is_read_when_it_is_reaped(tmp_path):
    """cpu_s: user + system seconds of the program and of the children it waited for
    (what a sweep books a run by), read from the zombie before it is reaped."""
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    child = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {burn!r}])"
    with Processes() as procs:
        busy = procs.start("busy", [sys.executable, "-c", burn], cwd=str(tmp_path))
        parent = procs.start("parent", [sys.executable, "-c", child], cwd=str(tmp_path))
        idle = procs.start("idle", [sys.executable, "-c", "import time; time.sleep(0.3)"], cwd=str(tmp_path))
        for p in (busy, parent, idle):
            p.wait(30)
    assert 0.3 <= busy.cpu_s < 3.0
    assert 0.3 <= parent.cpu_s < 3.0  # its child's CPU is counted
    assert idle.cpu_s < 0.25  # an interpreter's start-up, no more
    assert procs.cpu_s == pytest.approx(busy.cpu_s + parent.cpu_s + idle.cpu_s)
