"""`make lab` for real: JupyterLab on loopback (assignments/lab.py) on a student's copy
of the release, driven by Debian's headless chromium through Playwright (never a
downloaded browser). Runs the notebook's first measured question and checks that its
table and plot appear; the screenshot is kept in out/test-artifacts/."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.request

import pytest

from tests.support import course as C
from bench._browser import CHROMIUM, CHROMIUM_ARGS
from bench._ports import free_port

ARTIFACTS = os.path.join(C.REPO, "out", "test-artifacts")


@pytest.fixture
def lab(course, tmp_path):
    """`assignments/lab.py` on a free port; yields the URL it prints, stops it after."""
    folder = C.student_folder(course, str(tmp_path / "comn"))
    port = free_port()
    proc = subprocess.Popen(
        [os.path.join(C.BIN, "python"), os.path.join(C.ASSIGNMENTS, "lab.py"), "--port", str(port), "--dir", folder],
        env=C.env(),
        stdout=subprocess.PIPE,
        stderr=open(tmp_path / "lab.log", "w"),
        text=True,
        start_new_session=True,
    )
    try:
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/\S+", line)
        assert match, f"lab.py printed {line!r}, not a URL"
        url = match.group(0)
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(url, timeout=5)
                break
            except OSError:
                assert proc.poll() is None, f"JupyterLab exited: {(tmp_path / 'lab.log').read_text()[-500:]}"
                assert time.monotonic() < deadline, "JupyterLab did not answer within 180 s"
                time.sleep(1)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # JupyterLab (lab.py exec'd it) and its kernels
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.timeout(600)
def test_jupyterlab_runs_the_first_measured_question(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), "Debian's chromium is needed (apt-get install chromium)"
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, "lab-q1.png")
    with sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1400},
        )
        try:
            page = browser.new_page()
            page.goto(lab)
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
            q1 = page.locator(".jp-CodeCell", has_text='lab.measure("q1")')
            # run from the top down to the Q1 measurement: intro, MODE, set-up, Q1 text, Q1 cell
            page.wait_for_timeout(2000)  # let the kernel's first idle settle before typing
            page.locator(".jp-Notebook .jp-Cell").first.click()
            page.keyboard.press("Escape")
            for _ in range(5):
                page.keyboard.press("Shift+Enter")
                page.wait_for_timeout(300)
            q1.locator(".jp-OutputArea-output img").wait_for(timeout=150_000)
            q1.locator(".jp-OutputArea-output table").wait_for(timeout=60_000)
            q1.scroll_into_view_if_needed()
            page.screenshot(path=shot, full_page=False)
            table = q1.locator(".jp-OutputArea-output table").inner_text()
            assert "timeout_ms" in table and "throughput_kBps" in table
            rows = q1.locator(".jp-OutputArea-output table tbody tr")
            assert rows.count() == 3  # the tiny plan's timeouts
            assert "not measured" not in q1.inner_text()
        finally:
            if not os.path.exists(shot):
                page.screenshot(path=os.path.join(ARTIFACTS, "lab-q1-failed.png"))
            browser.close()
    assert os.path.getsize(shot) > 10_000
