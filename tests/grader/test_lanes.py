"""A submission's lanes: its scenarios of one (part, meet) in order, graded beside the
others where the pool has a spare transfer, each in a jail of its own, to the same
grades as one after another."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from types import SimpleNamespace

import pytest

from grader.collect import Submission
from grader.jail.sandbox import mounts
from grader.parallel import grade_all
from grader.protocol.battery import load_battery
from grader.protocol.grade import Budget, Options
from grader.protocol.lanes import copy_built, grade_lanes, lanes_of

from tests.support.grading import STUDENT, TINY


def scenario(name: str, part: int, meet: str = "student"):
    return SimpleNamespace(name=name, part=part, meet=meet)


def test_lanes_are_a_part_and_meets_scenarios_in_the_batterys_order():
    a, b, c, d, e = (
        scenario("a", 2),
        scenario("b", 3),
        scenario("c", 2, "sender"),
        scenario("d", 2),
        scenario("e", 3),
    )
    assert [[s.name for s in lane] for lane in lanes_of([a, b, c, d, e])] == [["a", "d"], ["b", "e"], ["c"]]


def slow_grades(log: list):
    """A grade that takes a moment and notes which side graded what, with the lane's
    hangs so far (each scenario adds one)."""

    def grade(s, side, timeouts):
        time.sleep(0.05)
        log.append((s.name, side))
        timeouts[s.part] = timeouts.get(s.part, 0) + 1
        return {"name": s.name, "hangs_before": timeouts[s.part] - 1}

    return grade


def test_with_a_spare_transfer_a_helper_grades_the_next_lane_in_a_jail_of_its_own():
    lanes = lanes_of([scenario(f"s{k}", k % 3) for k in range(9)])
    made, log, budget = [], [], Budget(3)
    budget.take()  # the submission's own

    @contextmanager
    def jail():
        made.append(f"lane-jail-{len(made)}")
        yield made[-1]

    records = grade_lanes(lanes, slow_grades(log), "own", jail, budget)
    assert sorted(records) == [f"s{k}" for k in range(9)]
    assert [records[f"s{k}"]["hangs_before"] for k in range(9)] == [k // 3 for k in range(9)]  # per lane, in order
    assert len(made) == 2 and {side for _, side in log} == {"own", *made}
    assert budget.used == 1  # the helpers gave their transfers back


def test_without_a_budget_or_a_spare_one_the_submissions_thread_grades_every_lane():
    lanes = lanes_of([scenario(f"s{k}", k % 3) for k in range(6)])
    full = Budget(1)
    full.take()
    for budget in (None, full):
        log = []
        records = grade_lanes(lanes, slow_grades(log), "own", lambda: pytest.fail("no jail is made"), budget)
        assert [name for name, _ in log] == ["s0", "s3", "s1", "s4", "s2", "s5"] and len(records) == 6
        assert {side for _, side in log} == {"own"}


def test_a_helpers_failure_is_raised_in_the_submissions_thread_and_no_helper_is_left():
    lanes = lanes_of([scenario(f"s{k}", k % 2) for k in range(4)])
    budget = Budget(2)
    budget.take()

    def grade(s, side, timeouts):
        time.sleep(0.05)
        if side == "helper":
            raise RuntimeError("the helper's jail broke")
        return {}

    @contextmanager
    def jail():
        yield "helper"

    before = threading.active_count()
    with pytest.raises(RuntimeError, match="the helper's jail broke"):
        grade_lanes(lanes, grade, "own", jail, budget)
    assert threading.active_count() == before and budget.used == 1


def test_a_job_waits_for_a_transfer_and_a_spare_one_goes_to_no_one_while_a_job_waits():
    alone = Budget(1)  # outside grade_all's pool (a thread per submission), a job never waits
    assert alone.take() and alone.take() and alone.used == 2
    budget = Budget(1)
    budget.pooled = True
    assert budget.take() and not budget.take(spare_only=True)
    started = threading.Event()
    waiter = threading.Thread(target=lambda: (started.set(), budget.take()))
    waiter.start()
    started.wait()
    time.sleep(0.1)
    assert waiter.is_alive() and budget.waiting == 1
    budget.give()  # the job gets it; a helper asking now does not
    waiter.join(5)
    assert not waiter.is_alive() and budget.used == 1 and not budget.take(spare_only=True)


def test_a_lanes_copy_is_the_built_folder_without_what_a_build_could_plant(tmp_path):
    built = tmp_path / "built"
    (built / ".rdtlab" / "build").mkdir(parents=True)
    (built / ".rdtlab" / "build" / "Sender.class").write_bytes(b"\xca\xfe")
    (built / "__pycache__").mkdir()
    (built / "__pycache__" / "rdt.cpython-311.pyc").write_bytes(b"stale")
    (built / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(built / "run.sh", 0o755)
    os.mkfifo(built / "blocks-a-reader")
    os.symlink("/etc/shadow", built / "secret")
    scratch = tempfile.mkdtemp(dir=tmp_path)
    dest = copy_built(str(built), scratch, 3_999_999)
    names = {os.path.relpath(os.path.join(r, n), dest) for r, ds, fs in os.walk(dest) for n in ds + fs}
    assert names == {".rdtlab", ".rdtlab/build", ".rdtlab/build/Sender.class", "run.sh", "secret"}
    assert os.readlink(os.path.join(dest, "secret")) == "/etc/shadow"  # a link, not the file
    assert os.access(os.path.join(dest, "run.sh"), os.X_OK)
    assert {os.lstat(os.path.join(dest, n)).st_uid for n in names} == {3_999_999}


HANGS = "\nimport time\nwhile True:  # the transfer done, the sender never ends\n    time.sleep(1)\n"


@pytest.mark.netns
def test_a_hanging_submission_graded_alone_in_a_pool_runs_its_lanes_at_once_to_the_same_grades(tmp_path):
    """Its sender hangs after every part-2 transfer: t-clean (the student's pair) and
    t-sender (with the reference receiver) each wait out their time limit. At --jobs 3
    they wait side by side, each in a jail of its own, and the grades are those of
    --jobs 1; nothing a lane made is left."""
    folder = shutil.copytree(STUDENT, tmp_path / "hal", ignore=shutil.ignore_patterns("__pycache__"))
    with open(folder / "Sender2.py", "a") as f:
        f.write(HANGS)
    sub, battery, options = Submission("hal", str(folder)), load_battery(TINY), Options(backend="netns")
    alone = grade_all([sub], battery, None, options, jobs=1)[0]
    pooled = grade_all([sub], battery, None, options, jobs=3)[0]

    def verdicts(result):
        return {s["name"]: (s["score"], s.get("symptom", {}) and s["symptom"]["kind"]) for s in result["scenarios"]}

    assert alone["ungraded"] == pooled["ungraded"] == []
    assert verdicts(alone) == verdicts(pooled)
    assert {n: score for n, (score, _) in verdicts(alone).items()} == {
        "t-clean": 0,
        "t-gbn-loss": 2,
        "t-sender": 0,
        "t-receiver": 2,
    }
    hangs = sorted(s["seconds"] for s in alone["scenarios"])[-2:]
    assert hangs[0] > 5  # each waits out its no-progress window
    assert pooled["execution_time"] < alone["execution_time"] - 0.6 * hangs[0]  # side by side
    assert not [m for m, _ in mounts() if "rdt-grade-" in m]
    assert not [n for n in os.listdir(tempfile.gettempdir()) if n.startswith(f"rdt-grade-{os.getpid()}-")]
