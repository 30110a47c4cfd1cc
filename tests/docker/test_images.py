"""`make images` for real: both images from the offline base (no registry here), the lab
within its size budget, and nothing of the build (wheels, CA certificates, reference
solutions) in the students' image."""

import json
import os

import pytest

from tests.support.containers import GRADER, LAB, run

pytestmark = [pytest.mark.netns, pytest.mark.timeout(1800)]


def size_mb(image: str) -> float:
    return int(run("docker", "image", "inspect", "-f", "{{.Size}}", image).stdout) / 1e6


def test_both_images_build_from_the_offline_base_and_the_lab_fits(images):
    print(f"\nmake images: {images['seconds']:.0f} s; lab {size_mb(LAB):.0f} MB, grader {size_mb(GRADER):.0f} MB")
    assert size_mb(LAB) <= 1500
    # The lab's bottom layers are the Debian base made by debootstrap (docker/base.sh).
    base = json.loads(run("docker", "image", "inspect", "rdtlab/base:bookworm").stdout)[0]["RootFS"]["Layers"]
    lab = json.loads(run("docker", "image", "inspect", LAB).stdout)[0]["RootFS"]["Layers"]
    assert lab[: len(base)] == base
    entry = json.loads(run("docker", "image", "inspect", GRADER).stdout)[0]["Config"]["Entrypoint"]
    assert entry[-1] == "rdtlab-grade-start"


def test_the_images_carry_the_toolchains_students_programs_are_built_with(images):
    """Java and C/C++ in both (the lab builds what the notebook runs), Go and Rust in the grader."""
    probe = "for t in javac java cc c++ go cargo; do command -v $t >/dev/null && echo has-$t; done; true"

    def has(image):
        out = run("docker", "run", "--rm", "--label", "rdtlab-test", "--entrypoint", "sh", image, "-c", probe).stdout
        return {w[4:] for w in out.split()}

    assert has(GRADER) == {"javac", "java", "cc", "c++", "go", "cargo"}
    assert {"javac", "java", "cc", "c++"} <= has(LAB)


def test_the_lab_holds_the_kit_and_release_but_no_wheels_certificates_or_solutions(images):
    host_cas = (
        sorted(os.listdir("/usr/local/share/ca-certificates"))
        if os.path.isdir("/usr/local/share/ca-certificates")
        else []
    )
    probe = (
        "ls /tmp; ls /usr/local/share/ca-certificates 2>/dev/null; ls /opt/rdtlab; "
        "ls /opt/rdtlab/release/comn; rdtlab --help >/dev/null && echo rdtlab-ok; linkemu check 'loss 5%' && echo engine-ok"
    )
    out = run("docker", "run", "--rm", "--label", "rdtlab-test", "--entrypoint", "sh", LAB, "-c", probe).stdout
    words = out.split()
    assert "rdtlab-ok" in words and "engine-ok" in words
    assert "results_sheet.ipynb" in words and "Sender2.py" in words
    assert not any(w.endswith(".whl") for w in words)
    assert not set(host_cas) & set(words), "a host CA certificate reached the image"
    assert "grader" not in words
    comn = run(
        "docker", "run", "--rm", "--label", "rdtlab-test", "--entrypoint", "ls", LAB, "/opt/rdtlab/reference"
    ).stdout.split()
    assert "core" in comn and "comn" not in comn  # the harness needs the wire formats, not the answers
    # nbgrader's release, not the source: no solution markers left in the notebook
    nb = run(
        "docker",
        "run",
        "--rm",
        "--label",
        "rdtlab-test",
        "--entrypoint",
        "cat",
        LAB,
        "/opt/rdtlab/release/comn/results_sheet.ipynb",
    ).stdout
    assert "BEGIN SOLUTION" not in nb and "BEGIN HIDDEN TESTS" not in nb and "lab.measure" in nb
