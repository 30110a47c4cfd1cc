"""What a reference COMN program imports at its start. A class notebook's grading starts
them over a hundred times, so each start is a cost the grading rate pays: dataclasses,
with inspect and re, was much of a start (BENCHMARKS.md, "Grading").
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from grader.jail.launcher import SAFE_PATH

COMN = Path(__file__).resolve().parents[2] / "reference" / "comn"
SYSTEM_PYTHON = shutil.which("python3", path=SAFE_PATH)  # what a jail's PATH finds
HEAVY = {"dataclasses", "inspect", "typing", "re", "argparse", "pathlib", "tempfile", "hashlib"}


@pytest.mark.parametrize(
    "program",
    [
        "Sender1.py",
        "Receiver1.py",
        "Sender2.py",
        "Receiver2.py",
        "Sender3.py",
        "Receiver3.py",
        "Sender4.py",
        "Receiver4.py",
    ],
)
def test_a_comn_program_starts_without_the_heavy_standard_modules(program):
    # no arguments: the program imports all it needs, then stops at its usage check
    done = subprocess.run(
        [SYSTEM_PYTHON, "-X", "importtime", str(COMN / program)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode != 0 and "expected" in done.stderr, done.stderr[-500:]
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "reference.runtime" in imported  # the check reads what it should
    assert not imported & HEAVY, sorted(imported & HEAVY)
