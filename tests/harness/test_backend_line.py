"""The one line a notebook shows about its backend: which one runs and why (the lab
image's notebook says it fell back to local when the container lacks the capabilities)."""

import subprocess
import sys

import pytest

from harness import backends


@pytest.mark.netns
def test_root_here_gets_netns_and_says_why():
    chosen, line = backends.describe("auto")
    assert chosen == "netns" and line.startswith("Backend: netns (") and "\n" not in line
    assert backends.describe("local") == (
        "local",
        "Backend: local (UDP on loopback through the engine: no TCP or iperf3), as asked",
    )


def line_as(*setpriv: str) -> str:
    code = "from harness import backends; print(backends.describe('auto')[1])"
    return subprocess.run(
        ["setpriv", *setpriv, "--", sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()


@pytest.mark.netns
def test_fallback_to_local_says_what_netns_lacks():
    # an unprivileged user: root is what it lacks
    assert line_as("--reuid=65534", "--regid=65534", "--clear-groups").endswith(
        "because the netns backend needs root (network namespaces and TUN devices)"
    )
    # root without the capabilities, as in a container started without --cap-add: those are
    assert line_as("--bounding-set=-net_admin,-sys_admin", "--inh-caps=-all").startswith(
        "Backend: local (UDP on loopback through the engine: no TCP or iperf3), because the netns backend "
        "needs CAP_NET_ADMIN and CAP_SYS_ADMIN (a container: --cap-add NET_ADMIN"
    )
