"""A notebook's progress bars: shown to a student, hidden where nobody watches (the
grader's kernels set RDTLAB_NOTEBOOK_PROGRESS=off: grader/notebook_jail.py)."""
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


def test_the_graders_kernels_run_without_progress_bars():
    from grader.notebook_jail import NotebookJail, kernel_sandbox
    jail = NotebookJail(uid=3_000_123, scratch="/tmp/rdt-kernel-test")
    assert kernel_sandbox(jail, "/tmp/rdt-kernel-test").env["RDTLAB_NOTEBOOK_PROGRESS"] == "off"
