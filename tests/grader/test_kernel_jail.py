"""The notebook kernel's jail (grader/notebook/notebook_jail.py): what of the kit it shows, and
that every assignment's notebook code imports in it while the reference's protocols,
the grader and its batteries stay out of reach (real bubblewrap, no kernel needed)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from grader.notebook.autograde import students_with_notebooks
from grader.notebook.notebook_jail import (
    NotebookJail,
    asked_tcp_cc,
    compile_kit,
    kernel_sandbox,
    kit_paths,
    kit_root,
    private_copy,
    write_font_list,
)
from grader.jail.sandbox import available
from tests.support.grading import jail_scratch


def _touch(root, *paths):
    for p in paths:
        full = os.path.join(root, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        open(full, "w").close()


def test_kit_paths_show_the_harness_and_hide_the_answers(tmp_path):
    root = str(tmp_path)
    _touch(
        root,
        "harness/notebook.py",
        "grader/protocol/grade.py",
        "reference/__init__.py",
        "reference/wire.py",
        "reference/comn/Sender4.py",
        "reference/core/__init__.py",
        "reference/core/rto.py",
        "reference/core/sr.py",
        "assignments/__init__.py",
        "assignments/nbgrader_config.py",
        "assignments/comn/__init__.py",
        "assignments/comn/sheet.py",
        "assignments/comn/spec.py",
        "assignments/comn/notebook.py",
        "assignments/comn/battery.toml",
        "assignments/results_sheets/builder.py",
        "assignments/source/comn/results_sheet.ipynb",
        "tests/x.py",
    )
    visible, hidden = kit_paths(root)
    rel = lambda paths: sorted(os.path.relpath(p, root) for p in paths)  # noqa: E731
    assert rel(visible) == [
        "assignments/__init__.py",
        "assignments/comn/__init__.py",
        "assignments/comn/sheet.py",
        "assignments/comn/spec.py",
        "harness",
        "reference/__init__.py",
        "reference/core/__init__.py",
        "reference/core/rto.py",
        "reference/wire.py",
    ]
    assert rel(hidden) == [
        "assignments/comn/battery.toml",
        "assignments/comn/notebook.py",
        "assignments/nbgrader_config.py",
        "assignments/results_sheets",
        "assignments/source",
        "grader",
        "reference/comn",
        "reference/core/sr.py",
        "tests",
    ]


def test_the_grader_compiles_what_a_kernel_imports_and_nothing_it_hides(tmp_path):
    root = str(tmp_path)
    for path, text in (
        ("harness/notebook.py", "X = 1\n"),
        ("harness/plots/tsg.py", "Y = 2\n"),
        ("reference/__init__.py", ""),
        ("reference/core/__init__.py", ""),
        ("reference/core/sr.py", "Z = 3\n"),
        ("grader/protocol/grade.py", "W = 4\n"),
        ("harness/broken.py", "def (:\n"),
    ):
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)
    compile_kit(root)  # a module that does not compile is the kernel's error to meet, not the grader's
    cached = lambda path: os.path.exists(importlib.util.cache_from_source(os.path.join(root, path)))  # noqa: E731
    assert cached("harness/notebook.py") and cached("harness/plots/tsg.py") and cached("reference/__init__.py")
    assert (
        not cached("reference/core/sr.py")
        and not cached("grader/protocol/grade.py")
        and not cached("harness/broken.py")
    )


def _notebook(folder, *sources):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    os.makedirs(folder, exist_ok=True)
    nbformat.write(nb, os.path.join(folder, "results_sheet.ipynb"))
    return str(folder)


def test_the_grader_reads_the_congestion_control_the_students_lab_asks_for(tmp_path):
    """The sheets' parameter (TCP_CC, bound before the locked set-up cell uses it), a
    literal given to the Lab, magics around it; nothing asked is the kit's default."""
    setup = 'from harness import notebook as nb\nlab = nb.Lab(MODE, "comn", tcp_cc=TCP_CC)'
    assert (
        asked_tcp_cc(_notebook(tmp_path / "a", '%matplotlib inline\nMODE = "quick"\nTCP_CC = "reno"', setup)) == "reno"
    )
    assert asked_tcp_cc(_notebook(tmp_path / "b", 'MODE = "quick"\nTCP_CC = "cubic"', setup)) == "cubic"
    assert asked_tcp_cc(_notebook(tmp_path / "c", '!ls\nlab = Lab("quick", tcp_cc="bbr")')) == "bbr"
    assert asked_tcp_cc(_notebook(tmp_path / "d", 'MODE = "quick"', "lab = nb.Lab(MODE)")) is None
    # a value only the running kernel could know: the default here (the kernel's Lab then
    # finds no runs of its own algorithm and checks the table's shape only)
    assert asked_tcp_cc(_notebook(tmp_path / "e", 'import os\nlab = nb.Lab(MODE, tcp_cc=os.environ["CC"])')) is None
    assert asked_tcp_cc(_notebook(tmp_path / "f", "this is not python", setup)) is None
    assert asked_tcp_cc(str(tmp_path / "nothing")) is None


def test_students_with_notebooks(tmp_path):
    for student, name in (
        ("ann", "comn/results_sheet.ipynb"),
        ("bob", "comn/Sender1.py"),
        ("cat", "tcp-like/results_sheet.ipynb"),
        ("dan", "comn/mine.ipynb"),
    ):
        _touch(str(tmp_path), os.path.join("submitted", student, name))
    assert students_with_notebooks(str(tmp_path), "comn") == ["ann", "dan"]
    assert students_with_notebooks(str(tmp_path), "comn", ["dan", "bob"]) == ["dan"]


def test_round_trip_through_the_environment():
    jail = NotebookJail(3_000_123, "/tmp/x", ["/opt/course"])
    os.environ["RDTLAB_KERNEL_JAIL"] = jail.to_env()
    try:
        assert NotebookJail.from_env() == jail
    finally:
        del os.environ["RDTLAB_KERNEL_JAIL"]


IMPORTS = """
import importlib, os, sys
import assignments
for name in ("harness.notebook", "harness.plots.trace", "reference.tcpfile", "matplotlib.pyplot", "ipykernel"):
    importlib.import_module(name)
for entry in assignments.by_name().values():     # every assignment's sheet and spec, not its answers
    entry.spec()
assert sorted(assignments.names()) == ["comn", "gbn-vs-tcp", "multihoming", "stop-and-wait-crc", "tcp-like"]
for path in ["assignments/source/comn/results_sheet.ipynb", "assignments/results_sheets/builder.py",
             *(os.path.join(e.folder, f) for e in assignments.by_name().values() for f in ("notebook.py", "battery.toml"))]:
    try:
        if open(os.path.join(sys.argv[1], path)).read():
            print("read", path)
    except OSError:
        pass
# a hidden folder may show as an empty one (where the kit lies under a folder the jail
# shows: /tmp, /opt): nothing in it imports
for name in ("reference.core.sr", "reference.comn.common", "grader.protocol.grade", "reference.tcp_like.Sender"):
    try:
        importlib.import_module(name)
        print("imported", name)
    except ImportError:
        pass
print("ok")
"""


@pytest.mark.skipif(available() is not None, reason=str(available()))
def test_a_kernel_jail_imports_the_notebooks_code_and_not_the_answers(tmp_path):
    with jail_scratch("rdt-kernel-", 64 << 20) as (uid, scratch):
        work = os.path.join(scratch, "sub")
        os.mkdir(work)
        os.chown(work, uid, uid)
        # the course hidden is the kit's own assignments/ (grading in the repository), which
        # holds the assignments' folders: their sheets stay importable, their answers not
        course = os.path.join(kit_root(), "assignments")
        sandbox = kernel_sandbox(NotebookJail(uid, scratch, [str(tmp_path), course]), work)
        done = subprocess.run(
            sandbox.prefix() + [sys.executable, "-c", IMPORTS, kit_root()],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok", done.stdout


HUNT = """
import json, os, socket, sys
found = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    for part in ("environ", "cmdline"):
        try:
            with open(f"/proc/{pid}/{part}", "rb") as f:
                if b"planted-" + b"kernel-secret" in f.read():   # not this code's own words
                    found.append(f"{pid}/{part}")
        except OSError:
            pass
port, abstract = sys.argv[1], sys.argv[2]
for kind in ("tcp", "abstract"):
    try:
        if kind == "tcp":
            socket.create_connection(("127.0.0.1", int(port)), timeout=2).close()
        else:
            s = socket.socket(socket.AF_UNIX)
            s.connect("\\0" + abstract)
        found.append(kind)
    except OSError:
        pass
print(json.dumps(found))
"""


@pytest.mark.skipif(available() is not None, reason=str(available()))
def test_a_notebook_kernel_reads_no_secret_and_reaches_no_host_service(tmp_path, monkeypatch, host):
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "planted-kernel-secret")
    monkeypatch.setenv("RDTLAB_NOTEBOOK_MODE", "quick")  # the kit's own variables do pass
    with jail_scratch("rdt-kernel-", 64 << 20) as (uid, scratch):
        work = os.path.join(scratch, "sub")
        os.mkdir(work)
        os.chown(work, uid, uid)
        sandbox = kernel_sandbox(NotebookJail(uid, scratch, [str(tmp_path)]), work)
        assert "JUPYTERHUB_API_TOKEN" not in sandbox.env and sandbox.env["RDTLAB_NOTEBOOK_MODE"] == "quick"
        done = subprocess.run(
            sandbox.prefix() + [sys.executable, "-c", HUNT, str(host.tcp.getsockname()[1]), host.abstract],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
    assert host.calls == []


FONTS = """
import logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="%(message)s")
from matplotlib import font_manager
font_manager.findfont("DejaVu Sans")
"""


@pytest.mark.skipif(available() is not None, reason=str(available()))
def test_a_kernel_starts_from_the_classs_font_list(tmp_path):
    """matplotlib in the jail reads the font list the grader made for the class, in the
    kernel's own copy, and makes none of its own (no fc-list, no font read)."""
    shared = str(tmp_path / "shared")
    os.mkdir(shared)
    write_font_list(shared)
    with jail_scratch("rdt-kernel-", 64 << 20) as (uid, scratch):
        jail = NotebookJail(uid, scratch, [str(tmp_path)], shared=shared)
        work = private_copy(_notebook(tmp_path / "nb", "1"), jail)
        sandbox = kernel_sandbox(jail, work)
        done = subprocess.run(
            sandbox.prefix() + [sys.executable, "-c", FONTS], cwd=work, capture_output=True, text=True, timeout=120
        )
        mine = os.listdir(os.path.join(work, ".rdtlab", "matplotlib"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert sandbox.env["MPLCONFIGDIR"] == os.path.join(work, ".rdtlab", "matplotlib")
    assert mine == os.listdir(os.path.join(shared, "matplotlib")) and mine[0].startswith("fontlist-")
    assert f"Using fontManager instance from {os.path.join(work, '.rdtlab', 'matplotlib', mine[0])}" in done.stdout
    assert "generated new fontManager" not in done.stdout


@pytest.mark.skipif(available() is not None, reason=str(available()))
def test_a_kernel_without_the_classs_font_list_makes_its_own(tmp_path):
    with jail_scratch("rdt-kernel-", 64 << 20) as (uid, scratch):
        jail = NotebookJail(uid, scratch, [str(tmp_path)])
        work = private_copy(_notebook(tmp_path / "nb", "1"), jail)
        done = subprocess.run(
            kernel_sandbox(jail, work).prefix() + [sys.executable, "-c", FONTS],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "generated new fontManager" in done.stdout
