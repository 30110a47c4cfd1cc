"""Students' programs in any language, handed in as sources with no build file
(tests/fixtures/languages/: COMN parts 1-4 in Java, C and Go, each with conventions of
its own), through `rdtlab grade` in the jail and `rdtlab check`: built once per
submission with Debian's toolchains, graded like Python. A Java file that does not
compile costs only the programs that need it, with one line naming the file, the line
and the compiler's error; one that throws at start-up scores zero where it runs; the
replay line of a failure runs as printed from the student's folder. The whole battery
on three seeds is `python -m bench.classes` / bench.calibrate's business; here each
part's public and interop scenarios."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.protocol.battery import load_battery

from tests.support import TESTS
from tests.support.grading import grade, lost_points, verdicts

pytestmark = pytest.mark.netns
LANGUAGES = TESTS / "fixtures" / "languages"
RDTLAB = str(Path(sys.executable).parent / "rdtlab")


def quick() -> list[str]:
    return [s.name for s in load_battery("comn").scenarios if s.public or s.meet != "student" and not s.beyond_spec]


@pytest.mark.parametrize("language", ["java", "c", "go"])
def test_sources_without_a_build_file_score_full_marks(language, tmp_path):
    folder = shutil.copytree(LANGUAGES / language, tmp_path / language)
    result = grade(folder, battery="comn", names=quick())
    assert result["sandbox"] == "bubblewrap" and result["build_error"] is None
    assert lost_points(verdicts(result)) == {}, language
    detected = {p: c["summary"] for p, c in result["conventions"].items()}
    assert detected, result["conventions"]
    print(language, detected)


@pytest.mark.parametrize("language", ["java", "c"])
def test_check_passes_on_a_java_or_c_folder(language, tmp_path):
    folder = shutil.copytree(LANGUAGES / language, tmp_path / language)
    done = subprocess.run(
        [RDTLAB, "check", "--part", "2", "--backend", "netns", str(folder)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| pass |" in done.stdout and "FAIL" not in done.stdout


def test_a_file_that_does_not_compile_costs_only_its_programs(tmp_path):
    folder = shutil.copytree(LANGUAGES / "java_broken", tmp_path / "broken")
    result = grade(
        folder,
        battery="comn",
        names=["p2-clean", "p2-reference-sender", "p3-clean", "p3-reference-sender", "p3-reference-receiver"],
    )
    by = {s["name"]: s for s in result["scenarios"]}
    assert (
        lost_points(
            [(n, by[n]["passed"], by[n]["reason"]) for n in ("p2-clean", "p2-reference-sender", "p3-reference-sender")]
        )
        == {}
    )
    for name in ("p3-clean", "p3-reference-receiver"):
        why = by[name]["reason"]
        assert by[name]["score"] == 0 and why.startswith("Sender3 does not compile: Sender3.java:"), why
        assert " error: " in why and "\n" not in why and str(tmp_path) not in why
    assert result["build_error"].startswith("Sender3 does not compile")


def test_a_program_that_throws_at_start_up_scores_zero_where_it_runs_and_its_replay_runs_as_printed(tmp_path):
    folder = shutil.copytree(LANGUAGES / "java_throws", tmp_path / "throws")
    result = grade(folder, battery="comn", names=["p2-clean", "p2-reference-sender"])
    by = {s["name"]: s for s in result["scenarios"]}
    failed = by["p2-clean"]
    assert failed["score"] == 0 and "Exception" in failed["reason"] and "\n" not in failed["reason"], failed["reason"]
    assert (
        lost_points([("p2-reference-sender", by["p2-reference-sender"]["passed"], by["p2-reference-sender"]["reason"])])
        == {}
    )
    line = failed["replay"]
    assert "rdtlab prog --dir ./ Sender2" in line, line
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    words = shlex.split(line)
    done = subprocess.run(words, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "sender failed" in done.stdout and "Exception" in done.stdout, done.stdout


def test_a_python_replay_line_runs_as_printed_from_the_students_folder(tmp_path):
    from tests.support.grading import STUDENT

    folder = shutil.copytree(STUDENT, tmp_path / "ada")
    (folder / "Receiver2.py").write_text("import sys\nsys.exit('Receiver2: not written yet')\n")
    result = grade(folder, battery="comn", names=["p2-clean"])
    line = result["scenarios"][0]["replay"]
    assert "python3 ./Sender2.py" in line and "python3 ./Receiver2.py" in line, line
    done = subprocess.run(
        shlex.split(line),
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"},
    )
    assert "not written yet" in done.stdout, done.stdout
