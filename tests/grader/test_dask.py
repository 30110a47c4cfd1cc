"""`rdtlab grade --scheduler`: a real dask scheduler and two workers on loopback grade
a class with the same scores as one machine."""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.protocol.planted import load_bugs, plant

from tests.support.grading import FIXTURES, STUDENT, TINY, grade, lost_points, verdicts

pytestmark = pytest.mark.netns
BIN = Path(sys.executable).parent


@pytest.fixture
def cluster(tmp_path):
    info = tmp_path / "scheduler.json"
    common = dict(cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    procs = [
        subprocess.Popen(
            [
                str(BIN / "dask"),
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(info),
            ],
            **common,
        )
    ]
    try:
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        str(BIN / "dask"),
                        "worker",
                        "--scheduler-file",
                        str(info),
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--host",
                        "127.0.0.1",
                        "--death-timeout",
                        "60",
                    ],
                    **common,
                )
            )
        from distributed import Client

        deadline = time.monotonic() + 180
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        address = json.loads(info.read_text())["address"]
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=180)
        yield address
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def test_a_class_graded_on_two_dask_workers_scores_as_on_one_machine(cluster, tmp_path):
    root = tmp_path / "class"
    shutil.copytree(STUDENT, root / "ada")
    bug = next(b for b in load_bugs(str(FIXTURES / "bugs.toml")) if b["name"] == "gbn-acks-out-of-order")
    plant(str(STUDENT), bug, str(root / "bob"))
    out = tmp_path / "out"
    done = subprocess.run(
        [
            str(BIN / "rdtlab"),
            "grade",
            str(root),
            "--battery",
            TINY,
            "--scheduler",
            cluster,
            "--out",
            str(out),
            "--backend",
            "netns",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))}
    graded = {}
    for student in ("ada", "bob"):
        local = graded[student] = grade(root / student)
        remote = json.loads((out / student / "results.json").read_text())
        # the same score for every scenario both graded (one the machine disturbed on every
        # try is "ungraded" in grades.csv: no verdict either way, grader.disturbance)
        both = [
            k
            for k, s in enumerate(local["scenarios"])
            if not s.get("ungraded") and rows[student][s["name"]] != "ungraded"
        ]
        assert len(both) * 2 >= len(local["scenarios"]), (student, rows[student], local["ungraded"])
        assert [remote["tests"][k]["score"] for k in both] == [local["scenarios"][k]["score"] for k in both]
    assert lost_points(verdicts(graded["ada"])) == {}
    assert lost_points(verdicts(graded["bob"])) or graded["bob"]["ungraded"]  # caught, or not graded
