"""The Docker images for real: a real engine (installed and started here when root, as
in CI on a fresh machine), images built by docker/build.sh with the offline base,
compose, containers with and without the netns capabilities.

Every test is marked `netns` (root): on a developer's machine without root they skip,
in CI a skip is a failure (tests/conftest.py). The images are built once per session;
a second session reuses the wheelhouse, the release and Docker's layer cache. A whole
`make test` has made the base image, the kit's Debian layer, the wheelhouse and the
releases already, beside its first pass (tests/passes.sh): the fixture's build finds
those done.
"""

from __future__ import annotations

import os
import shutil
import sys
import time

import pytest

from tests.support.containers import DOCKER, REPO, remove_stale_projects, run

pytestmark = pytest.mark.netns


@pytest.fixture(scope="session")
def engine():
    if os.geteuid() != 0:
        pytest.skip("needs root (installs and starts the Docker engine)")
    done = run(DOCKER / "engine.sh", timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    remove_stale_projects()
    if not os.path.exists("/usr/bin/chromium"):  # the browser test drives Debian's chromium
        run(
            "sh",
            "-c",
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium",
            timeout=900,
        )
    return True


@pytest.fixture(scope="session")
def images(engine):
    """Build both images (make images); the build's log lines and time, for the record."""
    t = time.monotonic()
    done = run(DOCKER / "build.sh", timeout=1800, check=False, cwd=REPO, env={**os.environ, "PY": sys.executable})
    assert done.returncode == 0, done.stderr[-2000:]
    return {"seconds": time.monotonic() - t, "log": done.stderr}


@pytest.fixture(scope="session")
def compose_cmd(engine):
    if run("docker", "compose", "version", check=False).returncode == 0:
        return ["docker", "compose"]
    assert shutil.which("docker-compose"), "engine.sh installs docker-compose when there is no plugin"
    return ["docker-compose"]
