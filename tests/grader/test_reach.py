"""What a jailed program must not reach, on the local backend (its run in a
network namespace of its own) and the netns backend: the grader's environment (a
planted secret, hunted through /proc), a service on the host's loopback, Unix sockets of
the host by path and by abstract name, and another jail graded at the same time. Each
hostile program says what it found as its reason line; the secret shows in no output,
the host's listener is never called, and a correct submission graded beside them keeps
full marks. A control run without the jail shows the same programs do reach what they
look for when nothing stops them."""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
from pathlib import Path

import pytest

from grader.protocol.battery import load_battery
from grader.collect import Submission
from grader.protocol.grade import Options
from grader.parallel import grade_all

from tests.support.grading import (
    FIXTURES,
    STUDENT,
    TINY,
    HostServices,
    laid_over_student,
    unique_name,
    lost_points,
    verdicts,
)

pytestmark = pytest.mark.netns
REACH = FIXTURES / "reach"
SECRET_NAME = "JUPYTERHUB_API_TOKEN"
SECRET = f"rdt-planted-{os.getpid()}-c0ffee"
LISTEN_SECONDS = "6"


def free_tcp_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


def submissions(root: Path, host: HostServices) -> list[Submission]:
    jail = [str(free_tcp_port()), unique_name("rdtlab-jail"), LISTEN_SECONDS]
    return [
        laid_over_student(REACH / "jail-listener", root, jail),
        laid_over_student(REACH / "jail-prober", root, jail),
        laid_over_student(REACH / "secrets", root, [SECRET_NAME, "DASK_SCHEDULER_ADDRESS"]),
        laid_over_student(REACH / "host-services", root, host.targets()),
    ]


def battery():
    b = load_battery(TINY).select(names=["t-clean"])
    b.scenarios[0] = dataclasses.replace(b.scenarios[0], time_limit=15, no_progress=15)
    return b


def reasons(results: list[dict]) -> dict[str, str]:
    """What each hunter said: its reason line is `delivered: sender failed (exit 3: ...)`."""
    said = {r["student"]: r["scenarios"][0]["reason"] for r in results}
    assert all("exit 3: " in said[name] for name in said if name != "good"), said
    return {name: reason.split("exit 3: ", 1)[-1] for name, reason in said.items()}


def outputs_text(out: Path) -> str:
    return "".join(p.read_bytes().decode(errors="replace") for p in out.rglob("*") if p.is_file())


@pytest.mark.parametrize("backend", ["local", "netns"])
def test_a_jail_reaches_no_secret_no_host_service_and_no_other_jail(backend, tmp_path, monkeypatch, host):
    monkeypatch.setenv(SECRET_NAME, SECRET)
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", f"tcp://127.0.0.1:{host.tcp.getsockname()[1]}")
    root, out = tmp_path / "submissions", tmp_path / "out"
    root.mkdir(), out.mkdir()
    good = Submission("good", str(shutil.copytree(STUDENT, root / "good")))
    results = grade_all(
        submissions(root, host) + [good],
        battery(),
        str(out),
        Options(backend=backend, hidden=[str(root), str(out)]),
        jobs=5,
    )
    said = reasons(results)
    assert said["secrets"].startswith("found nothing to steal in "), said["secrets"]
    assert said["host-services"].startswith("reached nothing: tcp 127.0.0.1"), said["host-services"]
    assert "abstract rdtlab-host-" in said["host-services"]
    assert said["jail-prober"].startswith("reached nothing of another jail"), said["jail-prober"]
    assert "nobody called" in said["jail-listener"], said["jail-listener"]
    assert host.calls == []
    assert SECRET not in outputs_text(out)
    assert lost_points(verdicts(next(r for r in results if r["student"] == "good"))) == {}


def test_without_the_jail_the_same_programs_reach_what_they_look_for(tmp_path, monkeypatch, host):
    # The control: unjailed on the plain local backend (no namespace of the run's own, as
    # where the harness may not make one), the hunters find their targets, so the test
    # above would fail if the jail let them through.
    from harness import backends
    from grader import disturbance

    monkeypatch.setattr(backends, "isolation_unavailable_reason", lambda: "not root")
    # The prober reaches the listener only while both are graded at once: its failure must
    # not be graded again alone for a crowded machine (grader/disturbance.py) here.
    monkeypatch.setattr(disturbance, "crowded_failure", lambda checks, runs, pressure, at_once: "")
    monkeypatch.setenv(SECRET_NAME, SECRET)
    root = tmp_path / "submissions"
    root.mkdir()
    results = grade_all(submissions(root, host), battery(), None, Options(backend="local", sandbox=False), jobs=4)
    said = reasons(results)
    assert SECRET in said["secrets"]
    assert said["host-services"].startswith("reached tcp 127.0.0.1"), said["host-services"]
    assert said["jail-prober"].startswith("reached the other jail's"), said["jail-prober"]
    assert "tcp" in host.calls and "abstract" in host.calls


def test_no_grading_on_a_local_backend_that_cannot_isolate_unless_the_runner_does(tmp_path, monkeypatch):
    from harness import backends
    from harness.procs import UsageError
    from grader.protocol.grade import grade_submission

    monkeypatch.setattr(backends, "isolation_unavailable_reason", lambda: "no CAP_SYS_ADMIN here")
    sub = Submission("ada", str(shutil.copytree(STUDENT, tmp_path / "ada")))
    with pytest.raises(
        UsageError,
        match="refusing to grade untrusted programs on the local backend: "
        "no CAP_SYS_ADMIN here.*--runner-isolates-network",
    ):
        grade_submission(sub, battery(), None, Options(backend="local"))
    graded = grade_submission(sub, battery(), None, Options(backend="local", runner_isolates_network=True))
    assert lost_points(verdicts(graded)) == {}
