"""The Gradescope package: run_autograder in a scratch root laid out as Gradescope's
(/autograder/source, /autograder/submission, /autograder/results) grades with the
kit from the package, on the local backend, into a results.json of Gradescope's schema."""

import os
import shutil

import jsonschema

from grader.export_gradescope_package import unpack_package

from tests.support.grading import SCHEMA, STUDENT, TINY, gradescope_verdicts, lost_points, rdtlab, run_autograder


def test_run_autograder_in_a_gradescope_layout(tmp_path):
    package = tmp_path / "comn.zip"
    done = rdtlab("grade", "--gradescope-package", package, "--battery", TINY, timeout=60)
    assert done.returncode == 0, done.stderr
    root = tmp_path / "autograder"
    unpack_package(str(package), str(root / "source"))
    assert os.access(root / "run_autograder", os.X_OK) and os.access(root / "source" / "setup.sh", os.X_OK)
    shutil.copytree(STUDENT, root / "submission")
    results = run_autograder(root)
    jsonschema.validate(results, SCHEMA)
    tests = results["tests"]
    assert len(tests) == 4 and results["score"] == sum(t["score"] for t in tests)
    # full marks, but for a scenario the machine disturbed on every try (not graded, said so)
    assert lost_points(gradescope_verdicts(results)) == {}
    assert results["extra_data"]["backend"] == "local" and results["extra_data"]["sandbox"] == "none"

    shutil.rmtree(root / "submission")
    (root / "submission").mkdir()  # nothing handed in: a score of 0 and why
    results = run_autograder(root)
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0 and "no submissions in" in results["output"]


def test_a_package_of_one_part_grades_only_it_and_an_unknown_scenario_is_named(tmp_path):
    package = tmp_path / "p2.zip"
    done = rdtlab("grade", "--gradescope-package", package, "--battery", TINY, "--part", "2", timeout=60)
    assert done.returncode == 0, done.stderr
    unpack_package(str(package), str(tmp_path / "source"))
    run = (tmp_path / "run_autograder").read_text()
    assert "--scenario t-clean --scenario t-sender " in run and "t-gbn-loss" not in run, run  # tiny's part 2

    wrong = tmp_path / "wrong.zip"
    done = rdtlab("grade", "--gradescope-package", wrong, "--battery", TINY, "--scenario", "t-nope", timeout=60)
    assert done.returncode == 2 and not wrong.exists(), done.stderr
    assert done.stderr.strip().count("\n") == 0 and "t-nope" not in done.stdout, done.stderr
