"""The student's and the instructor's guides are tutorials: every shell block a page marks
`<!-- tutorial: run -->` runs as written, in order, in a fresh folder, and must end with
the status the page declares and print the lines the page shows (tests/support/tutorials.py).
A guide that stops working fails here.

They grade and check programs in the sandbox on the netns backend: root.
"""

from __future__ import annotations

import os
import sys
import time

import pytest

from tests.support import REPO
from tests.support import tutorials

pytestmark = pytest.mark.netns

DOCS = REPO / "docs"
ARTIFACTS = REPO / "out" / "test-artifacts" / "docs" / "tutorials"
BIN = os.path.dirname(sys.executable)
PAGES = sorted(p for p in DOCS.rglob("*.md") if tutorials.blocks(p, DOCS))


@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_tutorial_runs_as_written(page, tmp_path):
    blocks = tutorials.blocks(page, DOCS)
    extra = {}
    if any("$RELEASE" in b.code for b in blocks):
        # the release a student is handed (make lab, the Docker lab and the hub give the same folder)
        from tests.support.course import make_course

        extra["RELEASE"] = os.path.join(make_course(str(tmp_path / "instructor")), "release", "comn")
    started = time.monotonic()
    ran = tutorials.run(blocks, tmp_path / "reader", tutorials.environment(BIN, str(REPO), **extra), timeout=840)
    seconds = time.monotonic() - started
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    transcript = ARTIFACTS / (str(page.relative_to(DOCS)).replace("/", "-").removesuffix(".md") + ".txt")
    transcript.write_text(
        f"{page.relative_to(REPO)}: {len(blocks)} blocks in {seconds:.0f} s\n\n"
        + "\n".join(
            f"--- line {r.block.line} (exit {r.status}, the page says {r.block.exit})\n$ {r.block.code}\n{r.output}"
            for r in ran
        )
    )
    found = tutorials.problems(ran)
    assert not found, f"{page.relative_to(REPO)} (transcript: {transcript.relative_to(REPO)}):\n" + "\n".join(found)
