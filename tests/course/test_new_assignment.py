"""A sixth assignment is one folder: placed on RDTLAB_ASSIGNMENTS_PATH with its sheet,
spec (one question), notebook cells, battery and starter programs, and nothing else
touched, it is an assignment of the course for the registry, `rdtlab sheet` (its choices,
and one tiny real run of the student's programs), the Lab, the notebook builder,
nbgrader's configuration and release, and the grader's battery lookup."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat

from tests.support import course as C

# The folder an instructor writes (assignments/README.md walks through the same one):
# COMN part 2's programs, stop-and-wait over a clean link, one measured question.
FILES = {
    "__init__.py": '''
"""The `sixth` assignment: stop-and-wait over a clean link (the README's worked example)."""
NAME = "sixth"
PROGRAMS = ("Sender2.py", "Receiver2.py")
REFERENCE = "comn"
''',
    "sheet.py": '''
"""The sixth sheet: goodput of stop-and-wait against the timeout, one question."""
from dataclasses import dataclass

from assignments.comn.sheet import REFERENCE
from harness.experiments.sweep import Sweep
from harness.experiments.transfers import TransferRun
from harness.sheets import programs
from harness.sheets.sheet import Section, Sheet, Table
from harness.sheets.tables import Metric, comparison_table

FILES = ("Sender2.py", "Receiver2.py")
LINK = "delay 2ms rate 10mbit"


@dataclass(frozen=True)
class Plan:
    size: int
    runs: int
    timeouts: tuple


FULL = Plan(100_000, 3, (20, 40, 80))
QUICK = Plan(20_000, 1, (40,))


def missing_programs(impl):
    return programs.missing(impl, FILES)


def build(impl=None, plan=FULL, backend="auto", runs=None, until_margin=None, cap=30, seed=1):
    impl = impl or REFERENCE
    cells = [{"timeout": t} for t in plan.timeouts]
    run = TransferRun(programs.script(impl, "Sender2.py", "{receiver_host} {receiver_port} {file} {timeout}", "comn-sw"),
                      programs.script(impl, "Receiver2.py", "{listen_port} {output}"), LINK, size=plan.size,
                      backend=backend, time_limit=30)
    sweep = Sweep("q1", run, cells, runs=runs or plan.runs, until_margin=until_margin, cap=cap, seed=seed)
    table = Table("Goodput against the timeout", lambda r: comparison_table(
        r.rows("q1"), cells, [("timeout (ms)", "timeout")], [Metric("goodput (KB/s)", "goodput_kBps")]))
    return Sheet("sixth", "The sixth results sheet", ["Stop-and-wait over a clean link."],
                 [Section("Question 1: goodput against the timeout", [sweep], [table])])
''',
    "spec.py": '''
"""The sixth notebook: question q1 of the sheet, on the student's Sender2/Receiver2."""
from dataclasses import replace

from harness.assignments import Assignment, Question

from . import sheet

QUESTIONS = {"q1": Question({"timeout": "timeout_ms"}, {"goodput_kBps": "throughput_kBps"},
                            "Q1 stop-and-wait", sheet.FILES)}
ASSIGNMENT = Assignment("sixth", sheet.build, {"quick": sheet.QUICK, "full": sheet.FULL,
                                               "tiny": replace(sheet.QUICK, size=10_000)}, QUESTIONS,
                        tolerance={"goodput_kBps": 3.0})
''',
    "notebook.py": '''
"""The sixth notebook's cells: set-up, the measured question, its table answer."""
from assignments.results_sheets.builder import Notebook

from . import NAME


def build() -> Notebook:
    nb = Notebook()
    nb.md("# The sixth results sheet")
    nb.setup(NAME)
    nb.measured("q1")
    nb.table_answer("q1", "timeout_ms, throughput_kBps")
    nb.discussion("q1_discussion", 2, "Goodput falls as the timeout grows past the round trip.")
    return nb
''',
    "battery.toml": """
[battery]
name = "sixth"
title = "the sixth assignment's battery"
reference = "reference/comn"

[programs.2]
sender = "Sender2 {receiver_host} {receiver_port} {file} {timeout}"
receiver = "Receiver2 {listen_port} {output}"
output_format = "comn-sw"
params = { timeout = 40 }

[[scenario]]
name = "s-clean"
part = 2
what = "a clean link"
link = "delay 2ms rate 10mbit"
size = 8192
time_limit = 20
points = 2
""",
}
# The starter programs (copied beside the notebook by the builder): for this test the
# reference's COMN programs, run from the kit.
STARTER = '''"""{name}.py: the starter (here the reference's, run from the kit)."""
import runpy
import sys

sys.argv[0] = {path!r}
runpy.run_path(sys.argv[0], run_name="__main__")
'''

PROBE = """
import json, os
from traitlets.config.loader import PyFileConfigLoader
import assignments
from grader.protocol.battery import load_battery
from harness.assignments import get

config = PyFileConfigLoader("nbgrader_config.py", path=os.path.join(assignments.__path__[0])).load_config()
print(json.dumps({"names": assignments.names(), "spec": get("sixth").name,
                  "questions": list(get("sixth").questions),
                  "exclude": config.Autograde.exclude_overwriting["sixth"],
                  "battery": [s.name for s in load_battery("sixth").scenarios]}))
"""


def write_assignment(root) -> str:
    folder = root / "sixth"
    (folder / "starter").mkdir(parents=True)
    for name, text in FILES.items():
        (folder / name).write_text(text.lstrip("\n"))
    for name in ("Sender2", "Receiver2"):
        path = os.path.join(C.REFERENCE, f"{name}.py")
        (folder / "starter" / f"{name}.py").write_text(STARTER.format(name=name, path=path))
    return str(root)


def run(argv: list[str], env: dict, cwd: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def test_a_new_assignment_in_one_folder_is_picked_up_everywhere(tmp_path):
    env = {
        **os.environ,
        "RDTLAB_ASSIGNMENTS_PATH": write_assignment(tmp_path / "extra"),
        "PATH": C.BIN + os.pathsep + os.environ.get("PATH", ""),
    }
    # the registry, the Lab's spec, nbgrader's configuration and the grader's battery
    done = run([sys.executable, "-c", PROBE], env)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found == {
        "names": ["comn", "gbn-vs-tcp", "multihoming", "sixth", "stop-and-wait-crc", "tcp-like"],
        "spec": "sixth",
        "questions": ["q1"],
        "exclude": ["Sender2.py", "Receiver2.py"],
        "battery": ["s-clean"],
    }

    # the notebook builder writes source/sixth/ of a course: the notebook and the starters
    course = tmp_path / "course"
    course.mkdir()
    done = run(
        [sys.executable, os.path.join(C.ASSIGNMENTS, "build_results_sheet.py"), "sixth", "--course", str(course)], env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    source = course / "source" / "sixth"
    assert sorted(os.listdir(source)) == ["Receiver2.py", "Sender2.py", C.NOTEBOOK]
    cells = nbformat.read(str(source / C.NOTEBOOK), as_version=4).cells
    assert 'nb.Lab(MODE, "sixth")' in "\n".join(c.source for c in cells)

    # nbgrader releases it with this course's configuration
    (course / "nbgrader_config.py").write_text(open(os.path.join(C.ASSIGNMENTS, "nbgrader_config.py")).read())
    done = run(
        [os.path.join(C.BIN, "nbgrader"), "generate_assignment", "sixth", "--force"], env, cwd=str(course), timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    release = course / "release" / "sixth"
    assert sorted(os.listdir(release)) == ["Receiver2.py", "Sender2.py", C.NOTEBOOK]
    assert "BEGIN SOLUTION" not in (release / C.NOTEBOOK).read_text()

    # rdtlab sheet knows it, and runs it on the released programs (one 20 KB transfer)
    rdtlab = [sys.executable, "-m", "rdtlab.cli", "sheet"]
    done = run(rdtlab + ["--help"], env)
    assert done.returncode == 0 and "sixth" in done.stdout
    done = run(
        rdtlab
        + [
            "sixth",
            "--impl",
            str(release),
            "--quick",
            "--backend",
            "local",
            "--out",
            str(tmp_path / "out"),
            "--no-progress",
        ],
        env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    sheet = (tmp_path / "out" / "sixth" / "sheet.md").read_text()
    assert "Goodput against the timeout" in sheet and "FAILED" not in sheet
