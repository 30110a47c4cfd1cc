"""`rdtlab grade --gradebook COURSE` autogrades the students' notebooks with real nbgrader,
each kernel in the student's bubblewrap jail (grader/notebook/notebook_jail.py), then writes the
protocol scores beside them: one honest student, one whose answer cell attacks its jail,
one whose cell kills its own kernel, and two who fake their re-measured tables, graded
side by side by one call."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass

import nbformat
import pytest

from tests.support import course as C
from grader.protocol.planted import reference_submission
from grader.notebook.remeasure import NOT_GRADED
from grader.jail.sandbox import UID_BASE, available
from tests.support.grading import lost_points

pytestmark = pytest.mark.skipif(available() is not None, reason=str(available()))

REPO = C.REPO
TINY_BATTERY = os.path.join(REPO, "tests", "grader", "tiny.toml")
FULL_MARKS = 20  # the comn notebook's autograded points (test_course.AUTOGRADED)

# What the hostile student's answer cell tries from inside its kernel, each recorded as
# what happened (the name of the exception, or what it got).
PROBE = """
import json, os, signal, socket, subprocess
probes = {{}}
def attempt(name, action):
    try:
        probes[name] = "done: " + str(action())[:60]
    except BaseException as e:
        probes[name] = type(e).__name__
for name, path in {reads}.items():
    attempt("read " + name, lambda path=path: open(path, "rb").read(64))
for name, path in {writes}.items():
    attempt("write " + name, lambda path=path: open(path, "ab").write(b"0"))
attempt("host service", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
attempt("internet", lambda: socket.create_connection(("1.1.1.1", 80), timeout=2))
children = []
def fork_until_refused():
    while len(children) < 400:
        pid = os.fork()
        if pid == 0:
            signal.pause()
            os._exit(0)
        children.append(pid)
attempt("fork 400", fork_until_refused)
probes["forked"] = len(children)
for pid in children:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
attempt("memory 8 GiB", lambda: len(bytearray(8 << 30)))
attempt("kill parent", lambda: os.kill(os.getppid(), signal.SIGKILL))
subprocess.Popen(["sleep", "600"], start_new_session=True)     # a daemon left behind
print("PROBES " + json.dumps(probes))
"""


def _sha(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _submit(course: str, student: str, who: str, extra: str = "") -> str:
    dest = os.path.join(course, "submitted", student, "comn")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    C.student_folder(course, dest, programs=None)
    reference_submission(dest, who=who)  # self-contained programs: the kit's reference is hidden
    if extra:
        answers = {"q1_answer": extra + "\n" + C.SOLUTIONS["q1_answer"]}
        C.answer_cells(os.path.join(dest, C.NOTEBOOK), answers)
    return dest


def _jail_leftovers(grader: int) -> tuple[list[int], list[str]]:
    """Processes left under the jail uids the grading process `grader` allocates
    (grader.protocol.grade.allocate_uid: other graders on this machine have other uids), and
    kernels' or re-measurements' mounts left anywhere."""
    first = UID_BASE + (grader % 100_000) * 100
    procs = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if first <= os.stat(f"/proc/{entry}").st_uid < first + 100:
                    procs.append(int(entry))
            except OSError:
                pass
    with open("/proc/self/mountinfo") as f:
        mounts = [
            line
            for line in f
            if f"rdt-kernel-{grader}-" in line or f"rdt-remeasure-{grader}-" in line or "rdtstage" in line
        ]  # this grader's: a neighbour's grading may be running
    return procs, mounts


def _grade(*args: str, timeout: float) -> tuple[int, str, int]:
    """`rdtlab grade ARGS`: (exit status, stderr, its pid)."""
    proc = subprocess.Popen(
        [os.path.join(C.BIN, "rdtlab"), "grade", *args],
        cwd=REPO,
        env=C.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except BaseException:  # its own time limit, or the test's: nothing left running
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, stderr, proc.pid


def _settled_leftovers(grader: int) -> tuple[list[int], list[str]]:
    """What is left once SIGKILLed processes had a moment to go."""
    left = _jail_leftovers(grader)
    for _ in range(30):
        if not left[0]:
            break
        time.sleep(0.1)
        left = _jail_leftovers(grader)
    return left


@dataclass
class Graded:
    """One `rdtlab grade --gradebook` run over the class below, which both tests read."""

    course: str
    out: str
    stderr: str
    grader: int
    reads: dict
    writes: dict
    before: dict

    def line(self, student: str) -> str:
        return next(l for l in self.stderr.splitlines() if f"  {student}: notebook" in l)


@pytest.fixture(scope="module")
def graded_class():
    """alice (honest), mallory (attacks its jail), crasher (kills its kernel) and the two
    HOSTILE notebooks faking their re-measured tables, graded by one call, two at a
    time: each notebook costs a kernel's measurements and the grader's re-measurements,
    so the tests share them. The course is under /opt: a folder the jail shows
    (read-only) unless the grader hides the course."""
    root = tempfile.mkdtemp(prefix="rdtlab-course-", dir="/opt")
    os.chmod(root, 0o755)
    listener = socket.socket()
    try:
        course = C.make_course(root)
        alice = _submit(course, "alice", "Alice Honest s0000001")
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        reads = {
            "gradebook": os.path.join(course, "gradebook.db"),
            "solutions": os.path.join(course, "source", "comn", C.NOTEBOOK),
            "other student": os.path.join(alice, C.NOTEBOOK),
            "reference": os.path.join(REPO, "reference", "comn", "Sender4.py"),
            "reference core": os.path.join(REPO, "reference", "core", "sr.py"),
            "battery": os.path.join(REPO, "assignments", "comn", "battery.toml"),
            "shadow passwords": "/etc/shadow",
        }
        writes = {
            "gradebook": os.path.join(course, "gradebook.db"),
            "autograded": os.path.join(course, "autograded", "mallory", "comn", C.NOTEBOOK),
            "kit": os.path.join(REPO, "harness", "notebook.py"),
        }
        mallory = _submit(
            course,
            "mallory",
            "Mallory Hostile s0000002",
            PROBE.format(reads=repr(reads), writes=repr(writes), port=listener.getsockname()[1]),
        )
        # a cell that kills its own kernel: nbgrader cannot finish that notebook
        crasher = _submit(
            course, "crasher", "Carl Crash s0000003", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
        )
        # kernel TCP with the student's algorithm: alice (and all but mallory) ask for Reno,
        # so it is measured once; mallory for one the grading machine lacks (its Q7 is left ungraded)
        folders = {"alice": alice, "crasher": crasher}
        for n, (student, answers) in enumerate(HOSTILE.items()):
            dest = folders[student] = _submit(course, student, f"Hostile Student{n} s000002{n}")
            if student == "other_programs":
                reference_submission(os.path.join(dest, "fast"), who=f"Hostile Student{n} s000002{n}")
                for k in (2, 3, 4):
                    with open(os.path.join(dest, f"Sender{k}.py"), "w") as f:
                        f.write(UNWRITTEN.format(who=f"Hostile Student{n} s000002{n}", name=f"Sender{k}"))
            C.answer_cells(os.path.join(dest, C.NOTEBOOK), answers)
        for folder in folders.values():
            C.set_parameter(os.path.join(folder, C.NOTEBOOK), "TCP_CC", "reno")
        C.set_parameter(os.path.join(mallory, C.NOTEBOOK), "TCP_CC", "nosuchcc")
        before = {p: _sha(p) for p in (os.path.join(alice, C.NOTEBOOK), os.path.join(REPO, "harness", "notebook.py"))}

        out = os.path.join(course, "graded")
        started = time.monotonic()
        status, stderr, grader = _grade(
            os.path.join(course, "submitted"),
            "--assignment",
            "comn",
            "--battery",
            TINY_BATTERY,
            "--scenario",
            "t-clean",
            "--gradebook",
            course,
            "--jobs",
            "2",
            "--notebook-jobs",
            "2",
            "--out",
            out,
            timeout=1200,
        )
        listener.close()
        assert status == 0, stderr[-3000:]
        print(f"graded {3 + len(HOSTILE)} students with notebooks in {time.monotonic() - started:.0f} s")
        print(stderr)  # each student's line: what took how long, and why a grading was repeated
        yield Graded(course, out, stderr, grader, reads, writes, before)
    finally:
        listener.close()
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.timeout(1200)  # the first test using graded_class waits for it: six notebooks, ~3 min
def test_notebooks_are_autograded_in_the_jail_beside_the_protocol_scores(graded_class, tmp_path):
    g = graded_class
    course, stderr = g.course, g.stderr
    assert "alice: notebook autograded" in stderr and "mallory: notebook autograded" in stderr, stderr
    crashed = g.line("crasher")
    assert "not autograded: " in crashed and "Kernel" in crashed, crashed  # one line: why

    # the kernels ran in the jail: a private copy of the folder, the local backend
    graded = {
        s: nbformat.read(os.path.join(course, "autograded", s, "comn", C.NOTEBOOK), as_version=4)
        for s in ("alice", "mallory")
    }
    setup = C.text_output(graded["alice"], "setup")
    assert "programs in /tmp/rdt-kernel-" in setup and "Backend: local" in setup, setup
    # ... without progress bars (nobody watches them): no widget, no bar in any output
    for student, notebook in graded.items():
        shown = [json.dumps(output) for cell in notebook.cells for output in cell.get("outputs", [])]
        assert not [o for o in shown if "widget-view" in o or "run/s" in o], student
    # iperf3 (no program of the student's) was measured once outside the jails, on netns,
    # with the algorithm alice's notebook asked for
    assert "Kernel TCP: reno congestion control" in setup, setup
    q7 = C.text_output(graded["alice"], "q7_measure")
    assert "the runs measured on the netns backend" in q7 and "kernel TCP ran reno (read back" in q7, q7
    assert "kernel TCP measured with reno" in g.line("alice")
    # ... and an algorithm this machine lacks: Q7 ungraded, its points kept, and why
    line = g.line("mallory")
    assert (
        "kernel TCP (nosuchcc) left ungraded, its cells keep their points: TCP congestion control 'nosuchcc' "
        "is not available on this machine's Linux" in line
    ), line
    said = C.text_output(graded["mallory"], "test_q7_table")
    assert (
        "q7_table: its runs are not checked here: kernel TCP is not measured here: TCP congestion control "
        "'nosuchcc'" in said
    ), said

    # the hostile cell got nothing it tried for
    line = next(l for l in C.text_output(graded["mallory"], "q1_answer").splitlines() if l.startswith("PROBES "))
    probes = json.loads(line[len("PROBES ") :])
    print("hostile kernel:", probes)
    for name in [f"read {n}" for n in g.reads] + [f"write {n}" for n in g.writes]:
        assert probes[name] in ("FileNotFoundError", "PermissionError", "OSError"), (name, probes[name])
    assert probes["host service"] == "ConnectionRefusedError", probes
    assert probes["internet"] == "OSError", probes  # network unreachable: no route at all
    assert 100 < probes["forked"] < 256, probes  # stopped at the jail's process limit
    assert probes["fork 400"] == "BlockingIOError", probes
    assert probes["memory 8 GiB"] == "MemoryError", probes
    for path, sha in g.before.items():
        assert _sha(path) == sha, f"{path} was changed from the hostile kernel"

    # both notebooks graded in full (the probe does not change mallory's answers), and
    # `nbgrader export` has the notebook and the protocol's scores together
    auto = {student: C.autograded_scores(course, "comn", student) for student in ("alice", "mallory")}
    for student in ("alice", "mallory"):
        assert sum(most for _, most in auto[student].values()) == FULL_MARKS, auto[student]
        # full marks, but for a re-measured cell the machine disturbed on every try (not graded, said so)
        assert lost_points(C.notebook_verdicts(course, "comn", student)) == {}, g.line(student)
    C.nbgrader(course, "export", "--to", str(tmp_path / "grades.csv"))
    with open(tmp_path / "grades.csv") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f) if r["assignment"] == "comn"}
    with open(os.path.join(g.out, "alice", "results.json")) as f:
        protocol = json.load(f)["score"]
    assert protocol > 0
    alice = sum(score for score, _ in auto["alice"].values())
    assert float(rows["alice"]["raw_score"]) == pytest.approx(alice + protocol)
    # ... and the class view has each notebook question's scores from the gradebook
    with open(os.path.join(g.out, "class.csv")) as f:
        questions = {r["scenario"]: r for r in csv.DictReader(f) if r["part"] == "notebook"}
    for cell, (score, most) in auto["alice"].items():
        row = questions[f"{C.NOTEBOOK[:-6]}/{cell}"]
        assert float(row["points"]) == most and ("alice" in row["failed_students"].split()) == (score < most), row
    with open(os.path.join(g.out, "class.html")) as f:
        assert "<h2>Notebook questions</h2>" in f.read()

    assert _settled_leftovers(g.grader) == ([], [])


def test_a_notebook_that_never_ends_stops_at_its_time_limit(tmp_path):
    LIMIT = 10  # whether it stops in the spinning cell or before, the stop is what is tested
    course = C.make_course(str(tmp_path))
    _submit(course, "spinner", "Sam Spin s0000005", "while True:\n    pass")
    from grader.notebook.autograde import autograde_students

    with C.environment():
        [result] = autograde_students(course, "comn", ["spinner"], time_limit=LIMIT)
    assert not result.ok and result.reason == f"autograde of spinner's notebook stopped at its time limit ({LIMIT} s)"
    # stopped at the limit, and not long after it: the stop kills, it does not wait
    assert LIMIT <= result.seconds < LIMIT + 15, result.seconds
    assert _settled_leftovers(os.getpid()) == ([], [])


# ---- the re-measured cells, decided outside the kernel --------------------------------

REMEASURED = ("test_q1_remeasured", "test_q3_remeasured", "test_q5_remeasured")
FABRICATE = '''
def fabricate(table):
    """the same table, its throughput made better than the programs do"""
    table = table.copy()
    table["throughput_kBps"] = (table["throughput_kBps"] * 4 + 50).clip(upper=1200)
    return table
'''
PATCH_ASSERT = """
from harness import notebook as _nb
_nb.assert_supported = lambda lab, q, table, k=2: _nb.hand_in(q, table)
_nb.assert_table = lambda *args, **kwargs: None
"""
FAKE_CACHE = """
import json
def fake_cache(q):
    path = lab.results_path(q)
    with open(path) as f:
        rows = [json.loads(line) for line in f]
    with open(path, "w") as f:
        for row in rows:
            if row.get("goodput_kBps"):
                row["goodput_kBps"] = min(row["goodput_kBps"] * 4 + 50, 1200)
            f.write(json.dumps(row) + "\\n")
    lab.frames.pop(q, None)
    return lab.measure(q)
"""
REDEFINE_ASSERTION = '''
import builtins, sys
class AssertionError(Exception):
    """a failed test, never shown"""
builtins.AssertionError = AssertionError
_ip = get_ipython()
_show = _ip.showtraceback
def _quiet(*args, **kwargs):
    if sys.exc_info()[0] is not AssertionError:
        return _show(*args, **kwargs)
_ip.showtraceback = _quiet
'''
# The hostile notebooks, by their answer cells. Each way of faking is one question's
# answer (two notebooks, not five: each notebook costs a kernel's measurements and the
# grader's re-measurements, and the grader decides each question on its own).
PATCH_LAB = """
import pandas as pd
from harness import notebook as _nb
def _fixed(self, q):
    spec = self.spec.questions[q]
    rows = []
    for cell in self.cells(q):
        row = {col: cell[p] for p, col in spec.params.items()}
        for metric, col in spec.metrics.items():
            row[col], row[col + "_ci95"] = (0.0 if metric == "retransmissions" else 500.0), 0.0
        row["runs"], row["failed"] = 2, 0
        rows.append(row)
    return pd.DataFrame(rows, columns=_nb.columns(q, self.spec.name))
_nb.Lab.measure = _fixed
_nb.Lab.remeasure = lambda self, q, table, k=2: []
"""
HOSTILE = {
    "patched": {
        # (a) the assertion the hidden test calls patched: the table is handed in, never checked
        "q1_answer": FABRICATE + PATCH_ASSERT + "q1_table = fabricate(q1_measured)",
        # (c) a fake measurement cache: the kernel's own runs rewritten, then "measured" again
        "q3_answer": FAKE_CACHE + 'q3_table = fake_cache("q3")',
        # (d) AssertionError redefined, and its tracebacks never shown: no test cell fails in the kernel
        "q5_answer": REDEFINE_ASSERTION + "q5_table = fabricate(q5_measured)",
    },
    # (e) tables measured with other programs (the reference's, in fast/) than the ones
    # handed in, which are not written yet (they fail at once: a cheap re-measurement);
    # (b) the Lab patched to return fixed tables (and to find nothing wrong with them)
    "other_programs": {
        "q1_answer": """
_fast = nb.Lab(MODE, "comn", folder="fast", progress=False)
q1_table = _fast.measure("q1")""",
        "q3_answer": 'q3_table = _fast.measure("q3")',
        "q5_answer": PATCH_LAB + 'q5_table = lab.measure("q5")',
    },
}
UNWRITTEN = '''# {who}
"""{name}, handed in unfinished."""
import sys
sys.exit("{name}: not written yet")
'''


@pytest.mark.timeout(1200)  # waits for graded_class when run alone
def test_remeasured_cells_are_decided_outside_the_kernel(graded_class):
    """Two hostile notebooks, five ways of fabricating the Q1, Q3 and Q5 tables among them, score 0
    on every re-measured cell, with the grader's reason and fresh figures; the honest one
    beside them (alice) keeps full marks. One `rdtlab grade --gradebook` call graded them all."""
    g = graded_class
    course = g.course
    lines = {s: g.line(s) for s in ["alice", *HOSTILE]}
    print("\n".join(lines.values()))

    scores = C.scores(course)
    # full marks, but for a re-measured cell the machine disturbed on every try (not graded, said so)
    assert lost_points(C.notebook_verdicts(course, "comn", "alice")) == {}, lines["alice"]
    for q in ("q1", "q3", "q5"):
        assert f"{q} passed" in lines["alice"] or f"{q} failed: {NOT_GRADED}" in lines["alice"], lines["alice"]
    graded = nbformat.read(os.path.join(course, "autograded", "alice", "comn", C.NOTEBOOK), as_version=4)
    said = C.text_output(graded, "test_q3_remeasured")
    assert "Re-measured by the grader outside your notebook: " in said and "Rule:" in said, said
    if "q3 passed" in lines["alice"]:
        # k=3 of Q3's light cells, with the fresh figures of each: 2 seeds, each run once (or
        # twice, or 4 times: harness.notebook_rules.RERUN_ROUNDS); a run the loaded machine
        # failed is named beside them, not counted
        figures = re.findall(
            r"throughput_kBps re-measured ([\d., ]+)(?: \(and (\d+) runs? failed.*?\))? "
            r"\(accepted",
            said,
        )
        assert len(figures) == 3 and all(len(f.split(", ")) + int(n or 0) in (2, 4, 8) for f, n in figures), said

    for student in HOSTILE:
        assert [scores[student][g] for g in REMEASURED] == [0.0, 0.0, 0.0], (student, scores[student])
        graded = nbformat.read(os.path.join(course, "autograded", student, "comn", C.NOTEBOOK), as_version=4)
        for grade_id in REMEASURED:
            why = C.errors(graded)[grade_id]
            assert why.startswith("AssertionError: ") and "\n" not in why, why
            # the grader's own runs (2 seeds, each once, then up to 4 times on a failure) cannot
            # give what the table says: other numbers, or none from the programs handed in
            if student == "patched":
                assert re.search(
                    r"you report (throughput_kBps|retransmissions) [\d.]+, re-measured [\d.]+–[\d.]+ "
                    r"over \d+ runs \(accepted",
                    why,
                ), (student, why)
            else:
                sender = {"test_q1_remeasured": 2, "test_q3_remeasured": 3, "test_q5_remeasured": 4}[grade_id]
                assert re.search(
                    r"you report (throughput_kBps|retransmissions) [\d.]+ but your programs fail there "
                    rf"when re-run \(sender failed \(exit 1: Sender{sender}: not written yet\)\)",
                    why,
                ), why
            assert "Rule:" in C.text_output(graded, grade_id)
        assert "q1 failed: " in lines[student] and "q5 failed: " in lines[student], lines[student]
