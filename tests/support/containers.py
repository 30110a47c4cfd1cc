"""What the Docker tests share: the images' names and options, the tests' compose project,
commands with one-line failures, and what a test may leave behind in Docker
(tests/docker/conftest.py builds the images and starts the engine)."""

from __future__ import annotations

import os
import re
import subprocess
import time

from tests.support import REPO

DOCKER = REPO / "docker"
ARTIFACTS = REPO / "out" / "test-artifacts"
# The tests' compose project: never a student's `rdtlab`, and one per test session, so two
# sessions on one Docker engine (a developer's run beside CI's) never share a lab.
PROJECT_PREFIX = "rdtlabtest"
PROJECT = f"{PROJECT_PREFIX}{os.getpid()}"
LAB, GRADER = "rdtlab/lab:latest", "rdtlab/grader:latest"
NETNS_OPTS = [
    "--cap-add",
    "NET_ADMIN",
    "--cap-add",
    "SYS_ADMIN",
    "--device",
    "/dev/net/tun",
    "--security-opt",
    "apparmor:unconfined",
]
# The grader's bubblewrap jail inside the container also needs: pivot_root and its own
# /proc (seccomp and Docker's masked /proc paths off), and SYS_PTRACE to see the jailed
# programs' sockets (another uid's /proc/PID/fd).
GRADER_OPTS = [
    *NETNS_OPTS,
    "--cap-add",
    "SYS_PTRACE",
    "--security-opt",
    "seccomp=unconfined",
    "--security-opt",
    "systempaths=unconfined",
]


def run(*argv, timeout=120, check=True, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, **kw)
    if check and done.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, argv))} failed ({done.returncode}): {(done.stderr or done.stdout)[-2000:]}"
        )
    return done


def docker_namespaces() -> list[str]:
    """Docker's live network namespaces (one per running container): nsfs mounts under
    its netns folder. (A removed container's file may stay there, unmounted: no
    namespace. The host's /run/netns belongs to other tests' runs.)"""
    with open("/proc/self/mountinfo") as f:
        return sorted(line.split()[4] for line in f if "/docker/netns/" in line.split()[4])


def leftovers() -> dict[str, list[str]]:
    """The tests' containers and networks, volumes no container uses, Docker's network namespaces."""
    label = f"label=com.docker.compose.project={PROJECT}"
    return {
        "containers": run("docker", "ps", "-aq", "--filter", label).stdout.split()
        + run("docker", "ps", "-aq", "--filter", "label=rdtlab-test").stdout.split(),
        "networks": run("docker", "network", "ls", "-q", "--filter", label).stdout.split(),
        "anonymous volumes": [
            v
            for v in run("docker", "volume", "ls", "-q", "--filter", "dangling=true").stdout.split()
            if re.fullmatch(r"[0-9a-f]{64}", v)
        ],
        "netns": docker_namespaces(),
    }


def wait_for_line(container: str, needle: str, timeout: float = 180) -> str:
    """The container's logs once they hold `needle` (AssertionError if it exits first)."""
    deadline = time.monotonic() + timeout
    while True:
        logs = run("docker", "logs", container, check=False)
        text = logs.stdout + logs.stderr
        if needle in text:
            return text
        state = run("docker", "inspect", "-f", "{{.State.Running}}", container, check=False).stdout.strip()
        assert state == "true", f"{container} stopped before saying {needle!r}: {text[-800:]}"
        assert time.monotonic() < deadline, f"{container} did not say {needle!r} within {timeout} s: {text[-800:]}"
        time.sleep(0.3)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_projects() -> list[str]:
    """Take down the labs of test sessions that were killed before their `down` (their
    pytest process is gone): containers, networks and volumes of that compose project."""
    key = "com.docker.compose.project"
    listed = run(
        "docker", "ps", "-a", "--filter", f"label={key}", "--format", f'{{{{.Label "{key}"}}}} {{{{.ID}}}}'
    ).stdout.split("\n")
    stale: dict[str, list[str]] = {}
    for line in filter(None, listed):
        project, cid = line.split()
        # `rdtlabtest` alone: the one project all sessions shared before, always stale now
        m = re.fullmatch(rf"{PROJECT_PREFIX}(\d*)", project)
        if m and not (m.group(1) and pid_alive(int(m.group(1)))):
            stale.setdefault(project, []).append(cid)
    for project, ids in stale.items():
        run("docker", "rm", "-f", "-v", *ids, check=False)
        for kind in ("network", "volume"):
            names = run("docker", kind, "ls", "-q", "--filter", f"label={key}={project}").stdout.split()
            if names:
                run("docker", kind, "rm", *names, check=False)
    return sorted(stale)
