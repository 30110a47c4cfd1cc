"""What a notebook kernel runs with: progress bars shown to a student, hidden where nobody
watches (the grader's kernels set RDTLAB_NOTEBOOK_PROGRESS=off: grader/notebook/notebook_jail.py),
and, in the grader's jail, the same interpreter for the student's programs as the grader's."""

from __future__ import annotations

from harness import notebook as nb


def test_progress_is_shown_unless_the_environment_or_the_caller_says_off(tmp_path, monkeypatch):
    monkeypatch.delenv("RDTLAB_NOTEBOOK_PROGRESS", raising=False)
    assert nb.Lab("tiny", "comn", folder=str(tmp_path), backend="local").progress is True
    monkeypatch.setenv("RDTLAB_NOTEBOOK_PROGRESS", "off")
    assert nb.Lab("tiny", "comn", folder=str(tmp_path), backend="local").progress is False
    assert nb.Lab("tiny", "comn", folder=str(tmp_path), backend="local", progress=True).progress is True
    monkeypatch.setenv("RDTLAB_NOTEBOOK_PROGRESS", "on")
    assert nb.Lab("tiny", "comn", folder=str(tmp_path), backend="local").progress is True
    assert nb.Lab("tiny", "comn", folder=str(tmp_path), backend="local", progress=False).progress is False


def test_the_graders_kernels_run_without_progress_bars_and_start_programs_as_the_grader_does():
    import shutil
    from grader.notebook.notebook_jail import NotebookJail, kernel_sandbox
    from grader.jail.sandbox import SAFE_PATH

    jail = NotebookJail(uid=3_000_123, scratch="/tmp/rdt-kernel-test")
    env = kernel_sandbox(jail, "/tmp/rdt-kernel-test").env
    assert env["RDTLAB_NOTEBOOK_PROGRESS"] == "off"
    # the student's `python3 Sender.py` in the kernel is the interpreter the grader's
    # re-measurement and battery start (their jails' PATH), not the venv's
    assert shutil.which("python3", path=env["PATH"]) == shutil.which("python3", path=SAFE_PATH)
