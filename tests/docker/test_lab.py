"""The students' lab for real: `docker/lab.sh up` (docker compose with docker/compose.yaml)
starts the lab image, prints the URL with its token, Debian's headless chromium opens
JupyterLab in the container, opens the comn notebook and runs its first measured
question with a student's programs on the netns backend; the table and the plot appear
(screenshot in out/test-artifacts/). `down` leaves no container, network or namespace,
and the student's work survives in its volume."""

import json
import os
import re
import time

import pytest

from bench._ports import free_port
from tests.support.containers import ARTIFACTS, DOCKER, LAB, PROJECT, REPO, leftovers, run
from bench._browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.netns, pytest.mark.timeout(1800)]
STUDENT = REPO / "tests" / "fixtures" / "students"  # stand-alone, like a student's hand-in
VOLUME = f"{PROJECT}_rdtlab-work"
WORK = "/home/jovyan/work/comn"


def lab_env(port: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_TOKEN"}
    return {**env, "COMPOSE_PROJECT_NAME": PROJECT, "RDTLAB_PORT": str(port), "RDTLAB_NOTEBOOK_MODE": "tiny"}


def hand_in(container: str, *names: str) -> None:
    """The student's own programs over the starter code, written as the notebook user."""
    for name in names:
        run(
            "docker",
            "exec",
            "-i",
            "-u",
            "1000:100",
            container,
            "sh",
            "-c",
            f"cat > {WORK}/{name}",
            input=(STUDENT / name).read_text(),
        )


def run_first_question(url: str, profile: str, shot: str) -> str:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1400},
        )
        try:
            page = browser.new_page()
            page.goto(url.replace("/lab?", "/lab/tree/comn/results_sheet.ipynb?"))
            q1 = page.locator(".jp-CodeCell", has_text='lab.measure("q1")')
            q1.wait_for(timeout=120_000)
            # the notebook is shown and its kernel started ("No Kernel | Initializing" before)
            page.locator(".jp-StatusBar-Widget", has_text="(ipykernel) | Idle").first.wait_for(timeout=180_000)
            # Run > Run All Cells: MODE, set-up, Q1 (and its picture), then the first answer
            # cell still raises NotImplementedError, which stops the run there.
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
            try:
                q1.locator(".jp-OutputArea-output img").wait_for(timeout=600_000)
            except Exception:
                page.screenshot(path=shot.replace(".png", "-failed.png"))  # what the student would see
                raise
            q1.locator(".jp-OutputArea-output table").wait_for(timeout=60_000)
            q1.scroll_into_view_if_needed()
            page.screenshot(path=shot)
            table = q1.locator(".jp-OutputArea-output table").inner_text()
            assert "timeout_ms" in table and "throughput_kBps" in table
            assert q1.locator(".jp-OutputArea-output table tbody tr").count() == 3  # the tiny plan's timeouts
            return q1.inner_text()
        finally:
            browser.close()


def test_compose_lab_runs_the_first_question_in_chromium_and_down_leaves_only_the_work(images, tmp_path):
    assert os.path.exists(CHROMIUM), "Debian's chromium is needed (apt-get install chromium)"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = str(ARTIFACTS / "docker-lab-q1.png")
    port = free_port()
    env = lab_env(port)
    run("docker", "volume", "rm", "-f", VOLUME)  # a fresh student
    before = leftovers()
    t = time.monotonic()
    up = run(DOCKER / "lab.sh", "up", env=env, timeout=300, check=False)
    started = time.monotonic() - t
    try:
        assert up.returncode == 0, up.stderr
        url = up.stdout.strip().splitlines()[-1]
        assert re.fullmatch(rf"open http://127\.0\.0\.1:{port}/lab\?token=[0-9a-f]{{48}}", url), url
        url = url.split()[-1]
        print(f"\ndocker/lab.sh up -> JupyterLab answering: {started:.1f} s")
        container = run("docker", "ps", "-q", "--filter", f"label=com.docker.compose.project={PROJECT}").stdout.strip()
        logs = run("docker", "logs", container).stdout
        assert "local backend" not in logs and "copied the assignment 'comn'" in logs
        hand_in(container, "Sender2.py", "Receiver2.py")
        text = run_first_question(url, str(tmp_path / "profile"), shot)
        assert "not measured" not in text and "failed runs" not in text, text
        rows = [
            json.loads(line)
            for line in run("docker", "exec", container, "sh", "-c", f"cat {WORK}/.rdtlab/*.jsonl").stdout.splitlines()
            if line.strip()
        ]
        assert rows and all(r["ok"] for r in rows), [r.get("error") for r in rows if not r["ok"]]
        assert {r["backend"] for r in rows} == {"netns"}  # the capabilities reached the notebook user
    finally:
        down = run(DOCKER / "lab.sh", "down", env=env, timeout=120, check=False)
    assert down.returncode == 0, down.stderr
    assert os.path.getsize(shot) > 10_000
    assert leftovers() == before
    # The student's work outlives the containers: their programs and measurements are in the volume.
    kept = run(
        "docker",
        "run",
        "--rm",
        "--label",
        "rdtlab-test",
        "-v",
        f"{VOLUME}:/w",
        "--entrypoint",
        "sh",
        LAB,
        "-c",
        "ls -a /w/comn /w/comn/.rdtlab",
    ).stdout.split()
    assert "Sender2.py" in kept and any(w.endswith(".jsonl") for w in kept)
    run("docker", "volume", "rm", VOLUME)
