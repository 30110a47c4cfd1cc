"""Shared pytest set-up.

Tests that need network namespaces and TUN devices are marked ``netns``. On a
developer's machine without root they skip with the reason. In CI (``CI`` set, run as
root) a skip of such a test is a failure: the namespace tests are the ones that show
TCP and the TUN mode work, so they must run there.
"""
import os

import pytest


def netns_available() -> tuple[bool, str]:
    if os.geteuid() != 0:
        return False, "needs root (network namespaces and TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return False, "needs /dev/net/tun"
    return True, ""


def pytest_collection_modifyitems(config, items):
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
