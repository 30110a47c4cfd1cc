"""The grading image on a small class: the reference as a submission and one with a
planted bug, graded by `rdtlab grade` (the entry point) with the sandbox and the netns
backend inside the container."""

import csv
import json
import shutil
from pathlib import Path

import pytest

from tests.support.containers import GRADER, GRADER_OPTS, REPO, leftovers, run
from tests.support.grading import gradescope_verdicts, lost_points

pytestmark = [pytest.mark.netns, pytest.mark.timeout(1800)]
FIXTURES = REPO / "tests" / "fixtures" / "submissions"
TINY = REPO / "tests" / "grader" / "tiny.toml"


def grade_in_image(class_: Path, battery: Path, out: Path, *args: str):
    """`rdtlab grade` in the grading image (its entry point) on the netns backend, two at
    a time: the class at /submissions, the battery at /battery.toml, results in `out`."""
    return run(
        "docker",
        "run",
        "--rm",
        "--label",
        "rdtlab-test",
        *GRADER_OPTS,
        "-v",
        f"{class_}:/submissions:ro",
        "-v",
        f"{battery}:/battery.toml:ro",
        "-v",
        f"{out}:/results",
        GRADER,
        "/submissions",
        "--battery",
        "/battery.toml",
        "--jobs",
        "2",
        "--out",
        "/results",
        "--backend",
        "netns",
        *args,
        timeout=900,
        check=False,
    )


def test_grading_image_grades_the_reference_full_and_the_broken_one_down(images, tmp_path):
    from grader.protocol.planted import load_bugs, plant, reference_submission

    class_ = tmp_path / "submitted"
    reference_submission(str(class_ / "ref"))
    bug = next(b for b in load_bugs(str(FIXTURES / "bugs.toml")) if b["name"] == "gbn-acks-out-of-order")
    # A folder, not cw2.tar.gz: grader/collect.py unpacks with tarfile's filter=, which
    # bookworm's Python 3.11.2 lacks (added in 3.11.4).
    plant(str(FIXTURES / "student"), bug, str(class_ / "bob"))
    shutil.copy(TINY, tmp_path / "tiny.toml")
    out = tmp_path / "results"
    out.mkdir()
    before = leftovers()
    done = grade_in_image(class_, tmp_path / "tiny.toml", out)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "rdtlab-grader:" not in done.stderr, done.stderr  # the netns backend was possible
    rows = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))}
    assert set(rows) == {"ref", "bob"}
    assert float(rows["ref"]["max_score"]) > 0
    # full marks, but for a scenario the machine disturbed on every try (not graded, said so)
    with open(out / "ref" / "results.json") as f:
        ref = json.load(f)
    assert lost_points(gradescope_verdicts(ref)) == {}
    assert float(rows["ref"]["score"]) == sum(t["score"] for t in ref["tests"])
    assert float(rows["bob"]["score"]) < float(rows["bob"]["max_score"])
    # the planted bug's scenario scores nothing: 0, or not graded when the machine disturbed
    # every try (its extra resends are a failure a late engine can cause too)
    assert rows["bob"]["t-gbn-loss"] == "ungraded" or float(rows["bob"]["t-gbn-loss"]) == 0
    assert (out / "bob" / "feedback.md").exists() and (out / "ref" / "results.json").exists()
    assert leftovers() == before


def test_grading_image_without_net_admin_says_so_in_one_line(images, tmp_path):
    done = run("docker", "run", "--rm", "--label", "rdtlab-test", GRADER, "--help", check=False)
    assert done.returncode == 0 and "usage: rdtlab grade" in done.stdout
    notes = [line for line in done.stderr.splitlines() if line.startswith("rdtlab-grader:")]
    assert len(notes) == 1 and "local backend" in notes[0] and "--cap-add NET_ADMIN" in notes[0]


# What a student's answer cell tries in the grading image, where the kit (its reference
# protocols, the assignments' batteries) lies under /opt, a folder the jail shows.
PROBE = """
import json
probes = {}
for path in ("/opt/rdtlab/reference/comn/Sender4.py", "/opt/rdtlab/reference/core/sr.py",
             "/opt/rdtlab/assignments/comn/battery.toml", "/course/gradebook.db", "/results/grades.csv"):
    try:
        probes[path] = "read %d bytes" % len(open(path, "rb").read())
    except OSError as e:
        probes[path] = type(e).__name__
import os
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if b"planted-" + b"image-secret" in open("/proc/%s/environ" % pid, "rb").read():
            probes["/proc/%s/environ" % pid] = "holds the secret"
    except OSError:
        pass
print("PROBES " + json.dumps(probes))
"""


def test_grading_image_autogrades_notebooks_with_jailed_kernels(images, tmp_path):
    """`rdtlab grade --gradebook /course` in the image: nbgrader autogrades the notebook
    with the kernel in the student's jail, which sees none of the kit's answers."""
    from tests.support import course as C
    from grader.protocol.planted import reference_submission

    course = Path(C.make_course(str(tmp_path)))
    dest = course / "submitted" / "alice" / "comn"
    dest.parent.mkdir(parents=True)
    C.student_folder(str(course), str(dest), programs=None)
    reference_submission(str(dest), who="Alice Image s0000004")
    C.answer_cells(str(dest / C.NOTEBOOK), {"q1_answer": PROBE + C.SOLUTIONS["q1_answer"]})
    shutil.copy(TINY, tmp_path / "tiny.toml")
    out = tmp_path / "results"
    out.mkdir()
    before = leftovers()
    done = run(
        "docker",
        "run",
        "--rm",
        "--label",
        "rdtlab-test",
        *GRADER_OPTS,
        "-e",
        "RDTLAB_NOTEBOOK_MODE=tiny",
        "-e",
        "JUPYTERHUB_API_TOKEN=planted-image-secret",
        "-v",
        f"{course}:/course",
        "-v",
        f"{tmp_path / 'tiny.toml'}:/battery.toml:ro",
        "-v",
        f"{out}:/results",
        GRADER,
        "/course/submitted",
        "--assignment",
        "comn",
        "--battery",
        "/battery.toml",
        "--scenario",
        "t-clean",
        "--gradebook",
        "/course",
        "--out",
        "/results",
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "alice: notebook autograded" in done.stderr, done.stderr[-2000:]
    import nbformat

    nb = nbformat.read(str(course / "autograded" / "alice" / "comn" / C.NOTEBOOK), as_version=4)
    line = next(l for l in C.text_output(nb, "q1_answer").splitlines() if l.startswith("PROBES "))
    probes = __import__("json").loads(line[len("PROBES ") :])
    assert set(probes.values()) <= {"FileNotFoundError", "PermissionError"}, probes
    assert "programs in /tmp/rdt-kernel-" in C.text_output(nb, "setup")
    assert "the runs measured on the netns backend" in C.text_output(nb, "q7_measure")
    auto = C.autograded_scores(str(course), "comn", "alice")
    assert sum(most for _, most in auto.values()) == 20, auto
    # full marks, but for a re-measured cell the machine disturbed on every try (not graded, said so)
    assert lost_points(C.notebook_verdicts(str(course), "comn", "alice")) == {}, done.stderr[-2000:]
    assert leftovers() == before


# Services of the grading container that no jailed program may reach: a TCP listener on
# its loopback and an abstract Unix socket, held by a helper that writes down each call.
LISTEN = """
import socket, threading
calls = open("/results/calls.txt", "w")
def serve(s, what):
    while True:
        s.accept()[0].close()
        calls.write(what + "\\n"); calls.flush()
tcp = socket.create_server(("127.0.0.1", 47999))
unix = socket.socket(socket.AF_UNIX); unix.bind("\\0rdtlab-image-service"); unix.listen()
threading.Thread(target=serve, args=(unix, "abstract"), daemon=True).start()
serve(tcp, "tcp")
"""


@pytest.mark.parametrize("backend", ["local", "netns"])
def test_grading_image_keeps_secrets_and_its_services_out_of_a_jails_reach(images, tmp_path, backend):
    class_ = tmp_path / "submitted"
    for name, targets in (
        ("secrets", ["JUPYTERHUB_API_TOKEN"]),
        ("host-services", ["tcp 127.0.0.1 47999", "abstract rdtlab-image-service"]),
    ):
        shutil.copytree(FIXTURES / "student", class_ / name)
        shutil.copy(FIXTURES / "reach" / name / "Sender2.py", class_ / name / "Sender2.py")
        (class_ / name / "targets.txt").write_text("\n".join(targets) + "\n")
    shutil.copy(TINY, tmp_path / "tiny.toml")
    (tmp_path / "listen.py").write_text(LISTEN)
    out = tmp_path / "results"
    out.mkdir()
    before = leftovers()
    done = run(
        "docker",
        "run",
        "--rm",
        "--label",
        "rdtlab-test",
        *GRADER_OPTS,
        "-e",
        "JUPYTERHUB_API_TOKEN=planted-image-secret",
        "--entrypoint",
        "sh",
        "-v",
        f"{class_}:/submissions:ro",
        "-v",
        f"{tmp_path}:/t:ro",
        "-v",
        f"{out}:/results",
        GRADER,
        "-c",
        "python3 /t/listen.py & sleep 1; exec tini -- rdtlab-grade-start /submissions "
        f"--battery /t/tiny.toml --scenario t-clean --jobs 2 --out /results --backend {backend}",
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    feedback = {n: (out / n / "feedback.md").read_text() for n in ("secrets", "host-services")}
    assert "found nothing to steal in" in feedback["secrets"], feedback["secrets"][-1500:]
    assert "reached nothing: tcp 127.0.0.1 47999" in feedback["host-services"], feedback["host-services"][-1500:]
    assert (out / "calls.txt").read_text() == ""  # the listener ran, and nobody called
    assert not [p for p in out.rglob("*") if p.is_file() and b"planted-image-secret" in p.read_bytes()]
    assert leftovers() == before


def test_grading_image_holds_every_hostile_submission_without_control_groups(images, tmp_path):
    """The hostile suite (tests/grader/test_hostile.py) in the grading image, where the
    jails get no control group (the container's cgroup mount is read-only): each process's
    own limits must hold it. Each scores 0 with its reason, a correct submission graded
    beside them keeps full marks, and nothing is left behind (the endless Makefile's build
    too, which no control group caps here)."""
    from tests.support.grading import HOSTILE_REASONS, STUDENT, laid_over_student

    hostile = FIXTURES / "hostile"
    class_ = tmp_path / "submitted"
    class_.mkdir()
    shutil.copytree(STUDENT, class_ / "good")
    reads = ["/etc/shadow", "/submissions/good/rdt.py", "/opt/rdtlab/reference/comn/Sender2.py", "/battery.toml"]
    writes = ["/results/good/results.json", "/results/grades.csv", "/opt/rdtlab/grader/owned.txt"]
    expect = dict(HOSTILE_REASONS)
    # the image's default limit is 4 GB a process, which the hog fills or its time limit ends
    expect["memory-hog"] = ("MemoryError", "timed out after 8 s")
    for name in expect:
        laid_over_student(hostile / name, class_, writes if name == "write-results" else reads)
    # hangs meet their 8 s limit and the endless build its 3 s, as in the suite on the host
    (tmp_path / "tiny.toml").write_text(
        Path(TINY)
        .read_text()
        .replace("[battery]\n", "[battery]\nbuild_time_limit = 3\n", 1)
        .replace('name = "t-clean"\n', 'name = "t-clean"\ntime_limit = 8\n', 1)
    )
    out = tmp_path / "results"
    out.mkdir()
    before = leftovers()
    done = grade_in_image(class_, tmp_path / "tiny.toml", out, "--scenario", "t-clean")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))}
    assert set(rows) == {"good", *expect}
    assert float(rows["good"]["score"]) == float(rows["good"]["max_score"]) > 0
    for name, words in expect.items():
        with open(out / name / "results.json") as f:
            (test,) = json.load(f)["tests"]
        assert test["score"] == 0, (name, test)
        assert any(w in test.get("output", "") for w in ((words,) if isinstance(words, str) else words)), (name, test)
    assert not (REPO / "grader" / "owned.txt").exists()
    assert leftovers() == before
