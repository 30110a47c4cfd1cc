"""The quick COMN notebook run top to bottom in JupyterLab, in Debian's chromium, on a
student's programs in Python and on the same assignment handed in as Java (or C, or Go)
sources with no build file, side by side on one machine: the time from "Run All Cells"
to the last cell's end, and the cells that raised.

    python -m bench.notebook_languages [--languages python,java] [--rounds 2] [--mode quick]

Each language gets a student's copy of the release (the reference answers typed in) with
its programs in place of the starters: Python, the reference's; the others, the
languages' fixtures (tests/fixtures/languages/). `make lab`'s JupyterLab serves it
(assignments/lab.py), a fresh copy each round (the lab keeps what it measured and
built), and the rounds alternate the languages so the machine's drift falls on each
alike. Java's time includes javac.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from assignments.course_copy import BIN, NOTEBOOK, REPO, env, make_course, student_folder
from bench._browser import launch
from bench._ports import free_port

LANGUAGES = os.path.join(REPO, "tests", "fixtures", "languages")
RUN_LIMIT_S = 1800  # a notebook still running then is stuck: the benchmark stops there
# how many code cells of the open notebook ran, and how many run or wait
PROMPTS = """() => {
  const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(e => e.textContent);
  return {busy: p.filter(t => t.includes('*')).length, done: p.filter(t => /\\[\\d+\\]/.test(t)).length};
}"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.notebook_languages", description=__doc__.split("\n\n")[0])
    p.add_argument("--languages", default="python,java", help="comma-separated: python, java, c, go")
    p.add_argument("--rounds", type=int, default=2, help="runs of each language, alternated (default 2)")
    p.add_argument("--mode", default="quick", choices=["tiny", "quick"], help="the notebook's plan (default quick)")
    return p


def folder_for(course: str, language: str, dest: str) -> str:
    """A student's comn folder: the release with the language's programs in it."""
    if language == "python":
        return student_folder(course, dest)
    folder = student_folder(course, dest, programs=None)
    for name in os.listdir(folder):  # the Python starters go: rdt.py is for Python programs only
        if name.endswith(".py") and (name[0] in "SR" or name == "rdt.py"):
            os.remove(os.path.join(folder, name))
    shutil.copytree(os.path.join(LANGUAGES, language), folder, dirs_exist_ok=True)
    return folder


def run_all(folder: str, mode: str, profile: str, shot: str) -> tuple[float, int, int]:
    """(seconds from Run All Cells to the last cell's end, cells run, cells that raised)."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    log = open(os.path.join(os.path.dirname(folder), "lab.log"), "w")
    lab = subprocess.Popen(
        [os.path.join(BIN, "python"), os.path.join(REPO, "assignments", "lab.py"), "--port", str(port)]
        + ["--dir", folder],
        env=env(RDTLAB_NOTEBOOK_MODE=mode),
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        start_new_session=True,
    )
    try:
        line = lab.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/\S+", line)
        if not url:
            raise SystemExit(f"lab.py printed {line!r}, not a URL")
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(url.group(0), timeout=5)
                break
            except OSError:
                if lab.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"JupyterLab did not start: see {log.name}")
                time.sleep(1)
        with sync_playwright() as p:
            browser = launch(p, profile, 1280, 720)
            try:
                page = browser.new_page()
                page.goto(url.group(0))
                page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
                page.wait_for_selector(".jp-StatusBar-TextItem:has-text('| Idle')", timeout=120_000)
                page.click('.lm-MenuBar-itemLabel:text-is("Run")')
                started = time.monotonic()
                page.click('.lm-Menu-itemLabel:text-is("Run All Cells")')
                while page.evaluate(PROMPTS)["busy"] == 0:  # until the run has begun
                    if time.monotonic() - started > 60:
                        raise SystemExit(f"Run All Cells started nothing in 60 s ({folder})")
                    page.wait_for_timeout(200)
                while page.evaluate(PROMPTS)["busy"] > 0:
                    if time.monotonic() - started > RUN_LIMIT_S:
                        raise SystemExit(f"the notebook still ran after {RUN_LIMIT_S} s ({folder})")
                    page.wait_for_timeout(500)
                seconds = time.monotonic() - started
                page.keyboard.press("Control+s")
                page.wait_for_timeout(1500)
                page.screenshot(path=shot, full_page=False)
            finally:
                browser.close()
    finally:
        os.killpg(lab.pid, signal.SIGTERM)  # JupyterLab and its kernel
        lab.wait(timeout=30)
        log.close()
    with open(os.path.join(folder, NOTEBOOK)) as f:
        cells = [c for c in json.load(f)["cells"] if c["cell_type"] == "code"]
    ran = sum(1 for c in cells if c.get("execution_count"))
    raised = sum(1 for c in cells if any(o.get("output_type") == "error" for o in c.get("outputs", [])))
    return seconds, ran, raised


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    languages = args.languages.split(",")
    unknown = [x for x in languages if x != "python" and not os.path.isdir(os.path.join(LANGUAGES, x))]
    if unknown:
        print(f"error: no fixture for {', '.join(unknown)} in {LANGUAGES}", file=sys.stderr)
        return 2
    times: dict = {x: [] for x in languages}
    bad = 0
    with tempfile.TemporaryDirectory(prefix="rdt-nb-languages-") as tmp:
        course = make_course(tmp)
        for k in range(args.rounds):
            for x in languages if k % 2 == 0 else languages[::-1]:
                # a fresh copy each round: the lab keeps what it measured (and built) in its folder
                folder = folder_for(course, x, os.path.join(tmp, f"{x}-{k}", "comn"))
                shot = os.path.join(REPO, "out", "bench", f"notebook-{x}-{k + 1}.png")
                os.makedirs(os.path.dirname(shot), exist_ok=True)
                seconds, ran, raised = run_all(folder, args.mode, os.path.join(tmp, f"profile-{x}-{k}"), shot)
                times[x].append(seconds)
                bad += raised
                print(f"  {x} round {k + 1}: {seconds:.0f} s, {ran} cells ran, {raised} raised", flush=True)
    base = min(times[languages[0]])
    print(f"the {args.mode} comn notebook in JupyterLab (chromium), best of {args.rounds}:")
    for x in languages:
        print(f"  {x:8} {min(times[x]):6.0f} s  ({min(times[x]) / base:.2f}x {languages[0]}'s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
