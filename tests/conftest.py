"""Shared pytest set-up.

The unit tier (``pytest -m unit``, `make test-unit`): the modules that say
``pytestmark = pytest.mark.unit`` test pure code (protocol cores, models, statistics, the
grading rules, the monitor, battery parsing) with no root, no network and no programs of
their own, in seconds. A socket a unit test opens is an error, so the tier stays what
it says; a new pure test module joins it by its mark. Everything else is the
integration tier: real engines, namespaces, kernels, Docker and a browser.

Tests that need network namespaces and TUN devices are marked ``netns``. On a
developer's machine without root they skip with the reason. In CI (``CI`` set, run as
root) a skip of such a test is a failure: the namespace tests are the ones that show
TCP and the TUN mode work, so they must run there.

The together tier (``-m together``): the folders in TOGETHER assert what programs and
the harness do (bytes, ends, reasons, bounds with seconds of slack), not how fast or how
a grade comes out on a crowded machine, and mostly wait on timers (one at a time they
keep two cores 30% busy). `make test` runs them three at a time (pytest-xdist), then
the rest one at a time: the grader's and the course's tests decide grades by whether
the machine was crowded, and the engine's and the experiments' tests measure timings,
so a neighbour would change what they assert. ALONE names the modules of those folders
that measure. The unit tier, wherever it is, runs with the together tier: pure code
does not care what runs beside it.
"""

import os
import socket

import pytest

TOGETHER = ("reference/", "harness/", "plots/")
# parallel runs against serial ones (their timings compared); and what a harness process
# sweeps at its first run (a dead run's namespaces and control sockets, by pid), which
# a neighbour's first run would sweep first
ALONE = {"harness/test_parallel.py", "harness/test_hard_kill.py", "harness/test_transfer_netns.py"}
HERE = os.path.dirname(os.path.abspath(__file__))


def netns_available() -> tuple[bool, str]:
    if os.geteuid() != 0:
        return False, "needs root (network namespaces and TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return False, "needs /dev/net/tun"
    return True, ""


def pytest_collection_modifyitems(config, items):
    for item in items:
        where = os.path.relpath(str(item.path), HERE)
        if item.get_closest_marker("unit") or (where.startswith(TOGETHER) and where not in ALONE):
            item.add_marker(pytest.mark.together)
    ok, why = netns_available()
    if ok:
        return
    for item in items:
        if "netns" in item.keywords:
            if os.environ.get("CI"):
                item.add_marker(pytest.mark.xfail(reason=f"CI must run netns tests: {why}", run=False, strict=True))
            else:
                item.add_marker(pytest.mark.skip(reason=why))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI a skipped netns test (e.g. pytest.skip inside a fixture) fails the run."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") and "netns" in item.keywords and report.skipped:
        report.outcome = "failed"
        report.longrepr = f"netns test skipped in CI: {report.longrepr}"


@pytest.fixture(autouse=True)
def _unit_tests_open_no_sockets(request, monkeypatch):
    """A unit test that reaches for the network belongs in the integration tier."""
    if "unit" not in request.keywords:
        return

    def refused(*args, **kwargs):
        raise AssertionError(f"{request.node.nodeid} is marked unit (pure code) but opens a socket")

    for name in ("bind", "connect", "connect_ex", "sendto"):
        monkeypatch.setattr(socket.socket, name, refused)
