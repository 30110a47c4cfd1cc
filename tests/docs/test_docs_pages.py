"""The documentation's pages against the code, without building them (unit tier): every
RDTLAB_* variable the code reads is on the environment page, the tutorials' markers are
well formed, the images are few and small, and the README's paths exist."""

from __future__ import annotations

import re

import pytest

from tests.support import REPO
from tests.support import tutorials

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

DOCS = REPO / "docs"
CODE = ("rdtlab", "harness", "reference", "grader", "assignments", "docker", "bench")
SKIP_DIRS = {"__pycache__", "target", ".rdtlab", "release", "submitted", "autograded", "feedback"}
VARIABLE = re.compile(r"RDTLAB_[A-Z0-9_]+")


def code_files():
    for top in CODE:
        for path in (REPO / top).rglob("*"):
            if path.is_file() and not SKIP_DIRS & set(path.relative_to(REPO).parts) and path.suffix != ".md":
                yield path


def test_every_variable_the_code_reads_is_on_the_environment_page():
    read = {}
    for path in code_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue  # a binary (an image, a compiled file)
        for name in VARIABLE.findall(text):
            read.setdefault(name, str(path.relative_to(REPO)))
    assert len(read) > 20, f"found only {sorted(read)}: is the scan looking in the right folders?"
    page = (DOCS / "reference" / "environment.md").read_text()
    listed = set(re.findall(r"`(RDTLAB_[A-Z0-9_]+)`", page))
    missing = {name: where for name, where in read.items() if name not in listed}
    assert not missing, "docs/reference/environment.md lacks: " + ", ".join(
        f"{name} (read in {where})" for name, where in sorted(missing.items())
    )


def test_the_tutorials_are_marked_well():
    pages = {}
    for page in DOCS.rglob("*.md"):
        found = tutorials.blocks(page, DOCS)  # a malformed marker raises, naming its line
        if found:
            pages[str(page.relative_to(DOCS))] = found
    assert {"student/check.md", "instructor/index.md"} <= set(pages)
    for name, found in pages.items():
        for block in found:
            assert block.code.strip(), f"{block.where()}: an empty block"
            assert "make lab" not in block.code and "make hub" not in block.code, (
                f"{block.where()}: a block that starts a server is shown, not run"
            )


@pytest.mark.parametrize("image", sorted((DOCS / "images").glob("*")), ids=lambda p: p.name)
def test_images_are_small_and_used(image):
    assert image.suffix == ".png"
    assert image.stat().st_size < 150_000, f"{image.name} is {image.stat().st_size} bytes (at most 150 KB)"
    used = any(f"images/{image.name}" in page.read_text() for page in DOCS.rglob("*.md"))
    assert used, f"no page shows {image.name}"


def test_images_are_few():
    assert len(list((DOCS / "images").glob("*"))) <= 6


def test_the_readme_points_at_pages_that_exist():
    readme = (REPO / "README.md").read_text()
    assert "make docs" in readme and "build/site/index.html" in readme
    for path in re.findall(r"`(docs/[^`]*)`", readme):
        assert (REPO / path).exists(), f"README.md names {path}, which does not exist"
    assert len(readme.splitlines()) <= 45, "the README keeps to one screen; the rest belongs in docs/"


def test_no_issue_numbers_in_the_pages():
    for page in DOCS.rglob("*.md"):
        found = re.search(r"\b[Ii]ssues? #?\d+|(?<![\w/&])#\d{1,4}\b", page.read_text())
        assert not found, f"{page.relative_to(REPO)}: {found.group(0)}"
