"""nbgrader's file-system exchange as the course hub uses it, with real uids: students
fetch and submit as their own uids through a sticky exchange, the grader collects with
rdtlab.hub.exchange.CheckedCollect. A submission forged under another student's name
is refused with one line and the real one collected; a student can neither list the
inbound nor remove another's submission nor change the release."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile

import pytest

from rdtlab.hub import users
from tests.support import course as C

pytestmark = pytest.mark.netns  # root: uids of their own

GRADER, ALICE, BOB = 2000, 10002, 10003


PASSWD: list[str] = []  # this test's passwd, bind-mounted over /etc/passwd for its commands


def as_uid(uid: int, *args: str, cwd: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`args` as `uid`, in a mount namespace of its own where /etc/passwd names the hub's
    students (as in their containers), the host's passwd untouched."""
    script = 'mount --bind "$1" /etc/passwd && shift && exec setpriv "$@"'
    return subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
            PASSWD[0],
            f"--reuid={uid}",
            "--regid=100",
            "--clear-groups",
            "--",
            *args,
        ],
        cwd=cwd,
        env={**C.env(), "HOME": cwd, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def hub_course():
    if os.geteuid() != 0:
        pytest.skip("needs root (students' and the grader's uids)")
    root = tempfile.mkdtemp(prefix="rdtlab-exchange-test-")
    os.chmod(root, 0o755)
    try:
        course = C.make_course(root)
        exchange = os.path.join(root, "exchange")
        os.mkdir(exchange)
        os.chmod(exchange, 0o1777)
        users_file = os.path.join(root, "users", "passwd")
        users.record(users_file, "alice", ALICE, 100)
        users.record(users_file, "bob", BOB, 100)
        passwd = os.path.join(root, "passwd")
        with open("/etc/passwd") as f, open(passwd, "w") as out:
            out.write(f.read() + open(users_file).read() + f"grader:x:{GRADER}:100::/tmp:/bin/sh\n")
        os.chmod(passwd, 0o644)
        PASSWD[:] = [passwd]
        with open(os.path.join(course, "nbgrader_config.py"), "a") as f:
            f.write(
                f"\nc.Exchange.root = {exchange!r}\n"
                'c.ExchangeFactory.collect = "rdtlab.hub.exchange.CheckedCollect"\n'
                'c.ExchangeFactory.release_assignment = "rdtlab.hub.exchange.StickyRelease"\n'
                f"c.CheckedCollect.users_file = {users_file!r}\n"
            )
        subprocess.run(["chown", "-R", f"{GRADER}:100", root], check=True)
        for who in ("alice", "bob"):
            os.makedirs(os.path.join(root, who))
            os.chown(os.path.join(root, who), {"alice": ALICE, "bob": BOB}[who], 100)
        yield root, course, exchange
    finally:
        shutil.rmtree(root, ignore_errors=True)


def nbgrader_as(uid: int, cwd: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return as_uid(uid, os.path.join(C.BIN, "nbgrader"), *args, cwd=cwd, env=env)


def test_forged_submission_is_refused_and_the_exchange_holds(hub_course):
    root, course, exchange = hub_course
    done = nbgrader_as(GRADER, course, "release_assignment", "comn")
    assert done.returncode == 0, done.stderr[-1500:]
    inbound = os.path.join(exchange, "rdtlab", "inbound")
    assert os.stat(inbound).st_mode & stat.S_ISVTX, "the inbound must be sticky"

    student_args = ["--Exchange.root=" + exchange, "--CourseDirectory.course_id=rdtlab"]
    for who, uid in (("alice", ALICE), ("bob", BOB)):
        home = os.path.join(root, who)
        done = nbgrader_as(uid, home, "fetch_assignment", "comn", *student_args, env={"JUPYTERHUB_USER": who})
        assert done.returncode == 0, done.stderr[-1500:]
        done = nbgrader_as(uid, home, "submit", "comn", *student_args, env={"JUPYTERHUB_USER": who})
        assert done.returncode == 0, done.stderr[-1500:]
    # bob hands his work in again under alice's name (newer than hers), as a student can
    # without nbgrader: a folder named for her in the inbound
    bobs = next(n for n in os.listdir(inbound) if n.startswith("bob+"))
    fake = "alice+comn+" + "+".join(bobs.split("+")[2:])
    done = as_uid(BOB, "cp", "-R", os.path.join(inbound, bobs), os.path.join(inbound, fake), cwd=root)
    assert done.returncode == 0, done.stderr
    forged = [
        n for n in os.listdir(inbound) if n.startswith("alice+") and os.stat(os.path.join(inbound, n)).st_uid == BOB
    ]
    assert len(forged) == 1

    # what bob cannot do to the exchange
    assert as_uid(BOB, "ls", inbound, cwd=root).returncode != 0, "a student lists the inbound"
    alices = next(n for n in os.listdir(inbound) if n.startswith("alice+") and n not in forged)
    assert as_uid(BOB, "mv", os.path.join(inbound, alices), os.path.join(inbound, "gone"), cwd=root).returncode != 0
    release = os.path.join(exchange, "rdtlab", "outbound", "comn", C.NOTEBOOK)
    assert as_uid(BOB, "sh", "-c", f"echo x >> {release}", cwd=root).returncode != 0
    assert as_uid(BOB, "mkdir", os.path.join(exchange, "rdtlab", "evil"), cwd=root).returncode != 0

    done = nbgrader_as(GRADER, course, "collect", "comn")
    assert done.returncode == 0, done.stderr[-1500:]
    refusals = [line for line in done.stderr.splitlines() if "not collected" in line]
    assert len(refusals) == 1 and forged[0] in refusals[0] and "handed in by bob" in refusals[0], done.stderr
    submitted = os.path.join(course, "submitted")
    assert sorted(os.listdir(submitted)) == ["alice", "bob"]
    stamp = open(os.path.join(submitted, "alice", "comn", "timestamp.txt")).read().strip()
    assert stamp in alices, (stamp, alices)  # alice's own, not bob's newer forgery
