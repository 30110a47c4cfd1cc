"""What the grader's tests share: the tiny battery, the correct student and submissions
laid over it, grade(), services on the host no jail may reach, and the jailed processes a
grade may leave behind (tests/grader/conftest.py's fixtures check them)."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
import shutil
import tempfile
from pathlib import Path

from grader.protocol.battery import load_battery
from grader.collect import Submission
from grader.disturbance import UNGRADED
from grader.notebook.remeasure import NOT_GRADED
from grader.protocol.grade import Options, allocate_uid, grade_again_alone, grade_submission
from grader.jail.sandbox import UID_BASE, kill_uid, mount_scratch, unmount_scratch
from tests.support import TESTS

GRADER_TESTS = TESTS / "grader"  # tests/grader: its battery and schema
FIXTURES = TESTS / "fixtures" / "submissions"
STUDENT = FIXTURES / "student"
TINY = str(GRADER_TESTS / "tiny.toml")
HOSTILE_REASONS = {  # fixtures/submissions/hostile/: what each one's reason must say
    "fork-bomb": "timed out",
    "busy-loop": "timed out",
    "memory-hog": "MemoryError",
    "disk-filler": "No space left on device",
    "datagram-flood": "timed out",
    "outbound-connect": "no outbound connection",
    "read-hidden": "nothing readable",
    "write-results": "nothing writable",
    "kill-parent": "timed out",
    # its daemon dies with its jail: whether its one EOF-flagged datagram got out first
    # depends on the load, so either the receiver ended with nothing or it waited for data
    "leftover-daemon": ("receiver wrote nothing", "receiver did not exit within"),
    "not-executable": "Sender2 is not executable",
    "endless-makefile": "the build (make) did not finish within 3 s",
}


def jail_processes() -> list[int]:
    """Processes running under a jail uid of this test process (none after a grade)."""
    low = UID_BASE + (os.getpid() % 100_000) * 100
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if low <= os.stat(f"/proc/{entry}").st_uid < low + 100:
                    with open(f"/proc/{entry}/stat") as f:
                        if f.read().rsplit(")", 1)[1].split()[0] != "Z":  # zombies hold nothing
                            found.append(int(entry))
            except OSError:
                pass
    return found


@contextlib.contextmanager
def jail_scratch(prefix: str, size: int):
    """(a jail uid, a size-capped tmpfs folder for it); afterwards the uid's processes
    are killed and the tmpfs unmounted and removed."""
    uid = allocate_uid()
    scratch = tempfile.mkdtemp(prefix=prefix)
    mount_scratch(scratch, size)
    try:
        yield uid, scratch
    finally:
        kill_uid(uid)
        unmount_scratch(scratch)
        os.rmdir(scratch)


def grade(path, battery="tiny", names=None, out=None, **options) -> dict:
    """One submission graded as `rdtlab grade` grades it (grader.parallel.grade_all): a
    scenario the machine disturbed on every try is graded again alone once the rest is
    done (grader.disturbance.AGAIN_ALONE times at most)."""
    b = load_battery(TINY if battery == "tiny" else battery)
    if names:
        b = b.select(names=names)
    sub = Submission(Path(path).name, str(path))
    opts, out_dir = Options(backend="netns", **options), str(out) if out else None
    return grade_again_alone(sub, b, out_dir, opts, grade_submission(sub, b, out_dir, opts))


AGAIN = 3


RDTLAB = str(Path(sys.executable).parent / "rdtlab")  # the installed command


def rdtlab(*args, cwd=None, timeout: float = 300) -> subprocess.CompletedProcess:
    """The installed `rdtlab ARGS...`, its output captured as text."""
    return subprocess.run([RDTLAB, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def grade_class_cli(submissions, out, *args: str, timeout: float = 600) -> tuple[subprocess.CompletedProcess, Path]:
    """`rdtlab grade SUBMISSIONS --out OUT ARGS...`, then, while it warns that the machine
    left scenarios ungraded, `--compare` with the last grading into OUT-again-N, up to
    AGAIN times, as its warning tells an instructor to. The last run and its folder."""
    done, last = rdtlab("grade", submissions, *args, "--out", out, timeout=timeout), Path(out)
    for n in range(1, AGAIN + 1):
        if done.returncode != 0 or "not graded, the machine disturbed every try" not in done.stderr:
            break
        again = Path(f"{out}-again-{n}")
        done, last = rdtlab("grade", submissions, *args, "--compare", last, "--out", again, timeout=timeout), again
    return done, last


def lost_points(verdicts) -> dict[str, str]:
    """{scenario: reason} of the (name, passed, reason) `verdicts` of a correct
    submission (or a notebook's test cells) that lost points for its own sake. One the
    machine disturbed on every try is not graded (0 points, said as such:
    grader.disturbance, grader.notebook.remeasure): no verdict on the submission, and on a host
    that steals CPU time a correct one can be so. At most half of them may be: a grade
    of mostly nothing shows nothing."""
    verdicts = list(verdicts)
    not_graded = (UNGRADED, NOT_GRADED)  # a scenario's; a notebook's re-measured cell's
    ungraded = [name for name, passed, why in verdicts if not passed and why.startswith(not_graded)]
    assert len(ungraded) * 2 <= len(verdicts), f"the machine disturbed too much to tell: {ungraded} not graded"
    return {name: why for name, passed, why in verdicts if not passed and not why.startswith(not_graded)}


def verdicts(result: dict) -> list[tuple[str, bool, str]]:
    """(name, passed, reason) of each scenario of a grade_submission result."""
    return [(s["name"], s["passed"], s["reason"]) for s in result["scenarios"]]


def gradescope_verdicts(results: dict) -> list[tuple[str, bool, str]]:
    """(name, full marks, output) of each test of a Gradescope results.json."""
    return [(t["name"], t["score"] == t["max_score"], t.get("output") or "") for t in results["tests"]]


_names = itertools.count()


def unique_name(prefix: str) -> str:
    return f"{prefix}-{os.getpid()}-{next(_names)}"


class HostServices:
    """A TCP listener on the host's loopback and an abstract Unix socket, counting calls."""

    def __init__(self):
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abstract = unique_name("rdtlab-host")
        self.unix.bind("\0" + self.abstract)
        self.unix.listen()
        self.calls: list[str] = []
        for s, what in ((self.tcp, "tcp"), (self.unix, "abstract")):
            threading.Thread(target=self._serve, args=(s, what), daemon=True).start()

    def _serve(self, s: socket.socket, what: str) -> None:
        while True:
            try:
                s.accept()[0].close()
            except OSError:
                return
            self.calls.append(what)

    def targets(self) -> list[str]:
        paths = [
            p for p in ("/var/run/docker.sock", "/run/docker.sock", "/run/dbus/system_bus_socket") if os.path.exists(p)
        ]
        return [f"tcp 127.0.0.1 {self.tcp.getsockname()[1]}", f"abstract {self.abstract}"] + [
            f"unix {p}" for p in paths
        ]

    def close(self) -> None:
        for s in (self.tcp, self.unix):
            s.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread, which lets go
            s.close()


def laid_over_student(fixture: Path, root: Path, targets: list[str]) -> Submission:
    """A submission: a copy of the correct student with `fixture`'s files laid over it
    (`remove.txt` lists files of the copy to delete) and `targets.txt` for its program."""
    folder = root / fixture.name
    shutil.copytree(STUDENT, folder)
    for item in fixture.iterdir():
        if item.name == "remove.txt":
            for gone in item.read_text().split():
                (folder / gone).unlink()
        else:
            shutil.copy2(item, folder / item.name)
    (folder / "targets.txt").write_text("\n".join(targets) + "\n")
    return Submission(fixture.name, str(folder))


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return str(pid)


SCHEMA = json.loads((GRADER_TESTS / "gradescope_schema.json").read_text())  # Gradescope's results.json


def run_autograder(root: Path) -> dict:
    """A Gradescope package's run_autograder in the scratch root `root` (source/, submission/):
    its results.json."""
    from harness.engine import find_linkemu

    env = {
        **os.environ,
        "AUTOGRADER_ROOT": str(root),
        "RDTLAB_PYTHON": sys.executable,
        "RDTLAB_LINKEMU": find_linkemu(),
        "PYTHONPATH": "",
    }
    done = subprocess.run([str(root / "run_autograder")], env=env, capture_output=True, text=True, timeout=300, cwd="/")
    assert done.returncode == 0, done.stderr
    return json.loads((root / "results" / "results.json").read_text())
