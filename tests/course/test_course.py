"""The COMN course with the real nbgrader and real Jupyter kernels, end to end:
release, a student's run, a class of two autograded, feedback and the gradebook.

The notebooks run in a tiny quick mode (tests/support/course.py: 20 KB, 2 runs per cell),
over the real link engine, with the students' real programs."""

from __future__ import annotations

import csv
import glob
import os
import shutil
import subprocess

import nbformat
import pytest

from tests.support import course as C

HERE = os.path.dirname(os.path.abspath(__file__))
BUGGY_GBN = os.path.join(HERE, "students", "gbn_acks_out_of_order")
JAVA = os.path.join(HERE, "..", "fixtures", "languages", "java")  # COMN in Java, sources only

AUTOGRADED = {
    "test_q1_table": 1,
    "test_q1_remeasured": 3,
    "test_q1_utilisation": 1,
    "test_q1_optimal_timeout": 2,
    "test_q3_table": 1,
    "test_q3_remeasured": 3,
    "test_q3_bdp": 1,
    "test_q3_peak_window": 2,
    "test_q5_table": 1,
    "test_q5_remeasured": 3,
    "test_q7_table": 1,
    "test_q8_mathis": 1,
}

# What each simulated student should lose (grade ids), and why. The careless student's
# faults are independent of each other, so one notebook shows all of them (a notebook
# graded is a minute of measurements: two students keep the class quick).
LOSES = {
    "honest": set(),
    # one Q1 throughput moved well away from what the programs do: the re-measurement
    # catches it; no Sender4.py: Q5 is not measured; NotImplementedError left in the
    # Mathis answer; the Q7 table handed in with a renamed column; and a Go-Back-N
    # receiver that ACKs out-of-order data: Q3 and what is derived from it
    "careless": {
        "test_q1_remeasured",
        "test_q5_table",
        "test_q5_remeasured",
        "test_q8_mathis",
        "test_q7_table",
        "test_q3_table",
        "test_q3_remeasured",
        "test_q3_peak_window",
    },
}
CARELESS = {
    "q1_answer": (
        "q1_table = q1_measured.copy()\n"
        'q1_table.loc[q1_table["timeout_ms"] == 20, "throughput_kBps"] = 400.0   # "looks better"'
    ),
    "q7_answer": 'q7_table = q7_measured.rename(columns={"throughput_kBps": "throughput"})',
    "q8_mathis_answer": "# YOUR CODE HERE\nraise NotImplementedError()",
}


def test_committed_notebook_is_what_the_generator_writes():
    with open(C.build_results_sheet.target("comn")) as f:
        assert f.read() == C.build_results_sheet.text("comn"), "run python assignments/build_results_sheet.py"


def test_release_has_no_solutions_hidden_tests_or_marking_notes(course):
    release = os.path.join(course, "release", "comn")
    text = open(os.path.join(release, C.NOTEBOOK)).read()
    for secret in (
        "BEGIN SOLUTION",
        "END SOLUTION",
        "HIDDEN TESTS",
        "Marking notes",
        "assert_supported",
        "assert_optimal_timeout",
        "model_mathis_q8",
        "q1_table = q1_measured",
        "1.22 * 1024",
    ):
        assert secret not in text, f"the release shows {secret!r}"
    nb = nbformat.read(os.path.join(release, C.NOTEBOOK), as_version=4)
    stubs = [c for c in nb.cells if "raise NotImplementedError()" in c.source]
    assert len(stubs) == len(C.SOLUTIONS)
    assert [c.id for c in nb.cells if c.source == "YOUR ANSWER HERE"] == [
        "q2_discussion",
        "q4_discussion",
        "q6_discussion",
        "q8_discussion",
    ]
    # the student gets the starter programs and their README, not the course's tools
    assert sorted(os.listdir(release)) == sorted(
        ["README.md", C.NOTEBOOK, "rdt.py"] + [f"{k}{n}.py" for k in ("Sender", "Receiver") for n in range(1, 5)]
    )


def test_starter_programs_say_what_is_missing(course, tmp_path):
    release = os.path.join(course, "release", "comn")
    sender3 = ["python3", os.path.join(release, "Sender3.py"), "localhost", "1"]
    (tmp_path / "x").write_bytes(b"12345")
    done = subprocess.run(sender3 + ["x", "20", "4"], capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert done.returncode == 1 and done.stderr.strip().count("\n") == 0
    assert "Go-Back-N is not written yet" in done.stderr
    done = subprocess.run(sender3 + ["nothing", "20", "4"], capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert done.returncode == 1 and done.stderr.strip().count("\n") == 0
    assert "cannot read nothing" in done.stderr
    done = subprocess.run(["python3", os.path.join(release, "Sender2.py")], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "usage:" in done.stderr and done.stderr.strip().count("\n") == 0


@pytest.fixture(scope="module")
def honest_run(course, tmp_path_factory):
    """A clean copy of the release, the reference programs dropped in, the answers typed,
    executed top to bottom in quick mode by a real kernel."""
    folder = C.student_folder(course, str(tmp_path_factory.mktemp("student") / "comn"))
    return folder, C.execute(os.path.join(folder, C.NOTEBOOK))


@pytest.mark.netns
@pytest.mark.timeout(600)
def test_student_notebook_runs_top_to_bottom(honest_run):
    folder, nb = honest_run
    assert C.errors(nb) == {}
    assert "tiny mode" in C.text_output(nb, "setup")
    for q, rows in (("q1", 3), ("q5", 2), ("q7", 2)):
        out = C.text_output(nb, f"{q}_measure")
        assert "not measured" not in out and "failed runs" not in out, out[-500:]
        assert out.count("\n") >= rows
    images = [
        c
        for c in nb.cells
        if c.get("id") in ("q1_measure", "q3_measure", "q7_measure")
        and any("image/png" in o.get("data", {}) for o in c.outputs)
    ]
    assert len(images) == 3, "each plotted question shows its plot"
    pictures = [
        c
        for c in nb.cells
        if c.get("id", "").endswith("_picture") and any("image/png" in o.get("data", {}) for o in c.outputs)
    ]
    assert len(pictures) == 3, "each protocol shows one transfer's time-sequence graph"
    assert os.listdir(os.path.join(folder, ".rdtlab")), "measurements are kept for a resumed run"


@pytest.mark.netns
@pytest.mark.timeout(900)
def test_the_notebook_runs_on_java_sources_with_no_build_file(course, tmp_path):
    """The release with the student's Java sources in place of the Python starters (and no
    rdt.py, which only Python programs need): every question measured, top to bottom."""
    folder = C.student_folder(course, str(tmp_path / "comn"), programs=None)
    for name in os.listdir(folder):
        if name.endswith(".py") and (name[0] in "SR" or name == "rdt.py"):
            os.remove(os.path.join(folder, name))
    for name in os.listdir(JAVA):
        shutil.copy(os.path.join(JAVA, name), folder)
    nb = C.execute(os.path.join(folder, C.NOTEBOOK))
    assert C.errors(nb) == {}
    for q in ("q1", "q3", "q5"):
        out = C.text_output(nb, f"{q}_measure")
        assert "not measured" not in out and "failed runs" not in out and "has no" not in out, out[-500:]
    assert os.path.isdir(os.path.join(folder, ".rdtlab", "build", "java")), "built once, in the lab's build folder"


@pytest.mark.netns
def test_rerun_notebook_keeps_nbgraders_checksums(honest_run):
    """`nbgrader validate` (the student's Validate button) fails a notebook whose read-only
    cells' checksums changed: a notebook run top to bottom keeps every one."""
    from nbgrader.utils import compute_checksum, is_locked

    changed = [
        c.id for c in honest_run[1].cells if is_locked(c) and compute_checksum(c) != c.metadata.nbgrader["checksum"]
    ]
    assert changed == []


@pytest.fixture(scope="module")
def graded(course, honest_run, tmp_path_factory):
    """Two students collected as submitted/<student>/comn/, then nbgrader autograde,
    generate_feedback and export, as the instructor runs them."""
    submitted = os.path.join(course, "submitted")
    os.makedirs(submitted)
    shutil.copytree(honest_run[0], os.path.join(submitted, "honest", "comn"))
    buggy = str(tmp_path_factory.mktemp("buggy"))
    for name in os.listdir(C.REFERENCE):
        if name[0] in "SR":
            shutil.copy(os.path.join(C.REFERENCE, name), buggy)
    shutil.copy(os.path.join(BUGGY_GBN, "Receiver3.py"), buggy)
    C.student_folder(
        course, os.path.join(submitted, "careless", "comn"), programs=buggy, answers=CARELESS, drop=("Sender4.py",)
    )
    with open(os.path.join(course, "autograde.log"), "w") as f:
        f.write(C.nbgrader(course, "autograde", "comn").stderr)
    C.nbgrader(course, "generate_feedback", "comn")
    C.nbgrader(course, "export")
    return course


@pytest.mark.netns
@pytest.mark.timeout(1200)  # the fixture grades the class: two notebooks run and re-measured
def test_autograde_scores_each_student_by_what_their_programs_do(graded):
    scores = C.scores(graded)
    assert set(scores) == set(LOSES)
    for student, lost in LOSES.items():
        got = {cell: scores[student].get(cell) for cell in AUTOGRADED}
        expected = {cell: (0.0 if cell in lost else float(points)) for cell, points in AUTOGRADED.items()}
        assert got == expected, f"{student}: {got}"


@pytest.mark.netns
def test_autograder_says_what_was_wrong_in_one_line(graded):
    def notebook(student):
        return nbformat.read(os.path.join(graded, "autograded", student, "comn", C.NOTEBOOK), as_version=4)

    careless_nb = notebook("careless")
    careless = C.errors(careless_nb)
    assert "re-measured" in careless["test_q1_remeasured"] and "Rule:" in careless["test_q1_remeasured"]
    assert "timeout_ms=20: you report throughput_kBps 400.0" in careless["test_q1_remeasured"]
    assert "has no Sender4.py" in C.text_output(careless_nb, "q5_measure")
    assert "has no Sender4.py" in C.text_output(careless_nb, "q5_picture")
    assert "lacks the columns throughput_kBps" in careless["test_q7_table"]
    assert careless["q8_mathis_answer"].startswith("NotImplementedError")
    assert "q8_mathis_kBps is not set" in careless["test_q8_mathis"]
    assert all("\n" not in line for line in careless.values())
    assert "failed" in careless["test_q3_table"]
    # the autograded copy kept the students' own programs (not the starter code)
    assert (
        open(os.path.join(graded, "autograded", "careless", "comn", "Receiver3.py")).read()
        == open(os.path.join(BUGGY_GBN, "Receiver3.py")).read()
    )
    assert not os.path.exists(os.path.join(graded, "autograded", "careless", "comn", "Sender4.py"))


@pytest.mark.netns
def test_autograde_reports_no_tampering_for_honest_notebooks(graded):
    """No student here touched a read-only cell: the log says nothing about cells
    (nbgrader alone reports every test cell with hidden tests as changed)."""
    log = open(os.path.join(graded, "autograde.log")).read()
    assert "has changed" not in log and "rdtlab autograde:" not in log, log[-2000:]


@pytest.mark.netns
def test_feedback_and_gradebook_show_the_differences(graded):
    feedback = glob.glob(os.path.join(graded, "feedback", "*", "comn", "results_sheet.html"))
    assert len(feedback) == 2
    html = open(os.path.join(graded, "feedback", "careless", "comn", "results_sheet.html")).read()
    assert "re-run with your programs on the same link and seeds" in html
    with open(os.path.join(graded, "grades.csv")) as f:
        rows = {r["student_id"]: float(r["raw_score"]) for r in csv.DictReader(f)}
    total = float(sum(AUTOGRADED.values()))
    assert rows == {s: total - sum(AUTOGRADED[c] for c in lost) for s, lost in LOSES.items()}


@pytest.mark.netns
def test_nothing_left_running(graded):
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert graded not in ps and "gbn_acks_out_of_order" not in ps
