"""The course on JupyterHub for real (docker/hub/): `make hub`'s images and script, the
hub, DockerSpawner's students' servers, the grader account and the grading container,
driven in Debian's chromium as an instructor and two students use it.

The instructor logs in, approves the students' sign-ups, releases comn from the
formgrader; each student logs in, fetches it, uploads their programs, runs the notebook
(tiny plan) in JupyterLab, validates and submits; bob also hands in a forgery under
alice's name and probes what his server can reach. The instructor grades from the
grader account's terminal (collect, the jailed notebooks and the battery in the grading
container, feedback released); each student fetches their own feedback. `make
hub-down` then leaves no container and keeps the volumes.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import tomllib
import time

import pytest

from assignments.comn.sheet import link_model
from harness.statistics import summarize
from tests.support import course as C
from bench._browser import CHROMIUM, CHROMIUM_ARGS
from bench._ports import free_port
from tests.support.containers import ARTIFACTS, REPO, run

# the class's grading (two students' jailed notebooks and the whole comn battery) takes minutes
pytestmark = pytest.mark.timeout(1800)
HUB = REPO / "docker" / "hub"
VOLUMES = [
    "rdtlab-hub-data",
    "rdtlab-hub-users",
    "rdtlab-hub-course",
    "rdtlab-hub-exchange",
    "rdtlab-hub-home-alice",
    "rdtlab-hub-home-bob",
]
STUDENTS = {"alice": "alice-pass-4821", "bob": "bob-pass-9917"}
# the students' programs: alice's in Python, bob's Java sources with no build file
PROGRAMS = {
    "alice": REPO / "tests" / "fixtures" / "corpus" / "aoife",
    "bob": REPO / "tests" / "fixtures" / "languages" / "java",
}


def hub_sh(*args, env) -> subprocess.CompletedProcess:
    return run(HUB / "hub.sh", *args, env=env, timeout=300, check=False)


@pytest.fixture(scope="module")
def hub_images(images):
    """The hub's images over the session's (docker/hub/build.sh, as `make hub` runs it)."""
    done = run(HUB / "build.sh", timeout=1200, check=False, env={**os.environ, "PY": sys.executable})
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture(scope="module")
def hub(hub_images, tmp_path_factory):
    """`make hub` on a free port, the students' plan tiny; `make hub-down` after, then the
    volumes this test made are removed."""
    if run("docker", "ps", "-aq", "--filter", "name=^rdtlab-hub$").stdout.strip():
        pytest.fail(
            "a course hub runs on this machine (container rdtlab-hub); the test uses the same names: "
            "stop it with make hub-down first"
        )
    state = tmp_path_factory.mktemp("hub-state")
    port = free_port()
    env = {**os.environ, "RDTLAB_HUB_PORT": str(port), "RDTLAB_HUB_STATE": str(state), "RDTLAB_NOTEBOOK_MODE": "tiny"}
    t = time.monotonic()
    done = hub_sh("up", env=env)
    started = time.monotonic() - t
    try:
        assert done.returncode == 0, done.stderr[-2000:]
        assert f"http://127.0.0.1:{port}/hub/" in done.stderr
        secrets = dict(line.split("=", 1) for line in (state / "secrets.env").read_text().split())
        yield {
            "url": f"http://127.0.0.1:{port}",
            "admin": ("instructor", secrets["RDTLAB_ADMIN_PASSWORD"]),
            "started": started,
            "env": env,
        }
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for name in ("rdtlab-hub", "rdtlab-hub-grader"):  # what the hub and the grader said, kept
            logs = run("docker", "logs", "--tail", "300", name, check=False)
            (ARTIFACTS / f"{name}.log").write_text(logs.stdout + logs.stderr)
        down = hub_sh("down", env=env)
        left = (
            run("docker", "ps", "-aq", "--filter", "network=rdtlab-hub").stdout.split()
            + run("docker", "ps", "-aq", "--filter", "name=rdtlab-hub").stdout.split()
        )
        rules = run("iptables", "-S", check=False).stdout.count("rdtlab-hub") + run(
            "iptables", "-S", "DOCKER-USER", check=False
        ).stdout.count("rdtlab-hub")
        kept = [v for v in VOLUMES if run("docker", "volume", "inspect", v, check=False).returncode == 0]
        for v in VOLUMES + ["rdtlab-hub-home-instructor"]:  # the admin's own server, started at log-in
            run("docker", "volume", "rm", "-f", v, check=False)
        assert down.returncode == 0, down.stderr
        assert not left, f"make hub-down left containers running: {left}"
        assert rules == 0, "make hub-down left firewall rules"
        assert kept == VOLUMES, f"make hub-down must keep the volumes; kept only {kept}"


def browser_context(p, profile):
    return p.chromium.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": 1280, "height": 900},
    )


def log_in(page, url, name, password):
    page.goto(f"{url}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")


def xsrf(context) -> str:
    return next(c["value"] for c in context.cookies() if c["name"] == "_xsrf")


def post(context, url, data=None):
    """A POST from the page's session (its cookies and the _xsrf token), as the page's
    own scripts send them. Validate runs the whole notebook again: minutes on a busy
    machine, past Playwright's 30 s default."""
    answer = context.request.post(url, form=data, headers={"X-XSRFToken": xsrf(context)}, timeout=600_000)
    assert answer.ok, f"POST {url}: {answer.status} {answer.text()[:500]}"
    return answer


def wait_for(what, check, timeout, every=1.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(every)


def step(what: str) -> None:
    """Say where the class is; kept in the artifacts too, where a whole run's log has it not."""
    line = f"[hub test {time.strftime('%H:%M:%S')}] {what}"
    print(line, flush=True)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / "hub-steps.log", "a") as f:
        print(line, file=f)


def prompts(page) -> dict:
    """How many code cells of the open notebook ran, and how many run or wait."""
    return page.evaluate("""() => {
        const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(e => e.textContent);
        return {busy: p.filter(t => t.includes('*')).length, done: p.filter(t => /\\[\\d+\\]/.test(t)).length};
    }""")


def terminal(page, base, command):
    """Type `command` into a new terminal of the JupyterLab at `base`."""
    page.goto(f"{base}/lab/workspaces/terminal?reset")  # a new workspace: the launcher
    page.wait_for_selector(".jp-Launcher", timeout=60000)
    page.click('.jp-LauncherCard[title*="erminal"], .jp-LauncherCard:has-text("Terminal")')
    page.wait_for_selector(".xterm-helper-textarea", timeout=30000)
    page.wait_for_timeout(1000)
    page.keyboard.type(command)
    page.keyboard.press("Enter")


def contents(context, base, path):
    """A file of a server's, as its Contents API gives it; None when it is not there, or
    when the proxy dropped the connection (a busy machine): the callers poll."""
    from playwright.sync_api import Error

    try:
        answer = context.request.get(f"{base}/api/contents/{path}?content=1", timeout=60_000)
    except Error as e:
        step(f"GET {path}: {str(e).splitlines()[0]}")
        return None
    return answer.json() if answer.ok else None


PROBE = r"""
import json, os, socket, urllib.request
out = {}
def tcp(host, port):
    try:
        socket.create_connection((host, port), timeout=3).close(); return "reached"
    except OSError as e:
        return f"refused: {e.__class__.__name__}"
def listing(path):
    try:
        return f"read: {os.listdir(path)[:3]}"
    except OSError as e:
        return f"refused: {e.__class__.__name__}"
out["other_server"] = tcp("rdtlab-hub-alice", 8888)
out["grader_server"] = tcp("grader", 8888)
out["hub_api"] = tcp("hub", 8081)
gateway = open("/proc/net/route").read().split("\n")[1].split()[2]
out["host_listener"] = tcp(socket.inet_ntoa(bytes.fromhex(gateway)[::-1]), int(os.environ["PROBE_PORT"])) \
    if gateway != "00000000" else "refused: no route to the host"
out["docker_socket"] = "reached" if os.path.exists("/var/run/docker.sock") else "refused: absent"
out["inbound"] = listing("/srv/nbgrader/exchange/rdtlab/inbound")
out["course"] = listing("/home/grader/course")
out["other_home"] = listing("/home/jovyan/../alice") if os.path.exists("/home/alice") else "refused: absent"
out["uid"] = os.getuid()
out["caps"] = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0]
json.dump(out, open("probe.json", "w"))
"""


def test_a_class_on_the_hub(hub, tmp_path):
    from playwright.sync_api import sync_playwright

    url = hub["url"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "hub-steps.log").unlink(missing_ok=True)  # this run's steps only
    # a service on the host's address that no student's server may reach
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", 0))
    listener.listen()
    threading.Thread(target=lambda: [listener.accept()[0].close() for _ in range(5)], daemon=True).start()
    spawn_seconds = {}
    with sync_playwright() as p:
        staff = browser_context(p, tmp_path / "instructor")
        page = staff.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        log_in(page, url, *hub["admin"])
        page.wait_for_url(re.compile(r".*/(hub/spawn-pending|user|hub/home).*"), timeout=60000)

        step("the instructor is in; the students sign up")
        # the students sign up; the instructor approves them
        students = {}
        for name, password in STUDENTS.items():
            ctx = browser_context(p, tmp_path / name)
            spage = ctx.new_page()
            spage.goto(f"{url}/hub/signup")
            spage.fill("#username_input", name)
            spage.fill("#password_input", password)
            spage.fill("#password_confirmation_input", password)
            spage.click("#signup_submit")
            spage.wait_for_selector("text=sent to the admin", timeout=30000)
            page.goto(f"{url}/hub/authorize/{name}")
            students[name] = (ctx, spage)
        page.goto(f"{url}/hub/authorize")
        assert "alice" in page.inner_text("body") and "bob" in page.inner_text("body")

        step("the instructor releases comn")
        # the instructor releases comn from the formgrader, opened in its own tab
        grader = f"{url}/services/grader-rdtlab"
        page.goto(f"{grader}/formgrader")
        page.wait_for_selector("text=Manage Assignments", timeout=60000)
        page.screenshot(path=str(ARTIFACTS / "hub-formgrader.png"))
        post(staff, f"{grader}/formgrader/api/assignment/comn/assign")
        answer = post(staff, f"{grader}/formgrader/api/assignment/comn/release").json()
        assert answer.get("success"), answer

        # each student logs in (their server starts), fetches, uploads programs, runs, validates, submits
        for name, (ctx, spage) in students.items():
            t = time.monotonic()
            log_in(spage, url, name, STUDENTS[name])
            spage.wait_for_url(re.compile(rf".*/user/{name}/lab.*"), timeout=120000)
            spawn_seconds[name] = time.monotonic() - t
            spage.wait_for_selector(".jp-Launcher", timeout=60000)
        for name, (ctx, spage) in students.items():
            base = f"{url}/user/{name}"
            listed = post(ctx, f"{base}/assignments/fetch", {"course_id": "rdtlab", "assignment_id": "comn"}).json()
            assert listed["success"] and any(
                a["assignment_id"] == "comn" and a["status"] == "fetched" for a in listed["value"]
            ), listed
            if name == "bob":  # his are in Java: the starter's Python programs go
                for starter in contents(ctx, base, "comn")["content"]:
                    if re.fullmatch(r"(Sender|Receiver)\d\.py", starter["name"]):
                        assert ctx.request.delete(
                            f"{base}/api/contents/comn/{starter['name']}", headers={"X-XSRFToken": xsrf(ctx)}
                        ).ok
            for program in sorted(f for f in PROGRAMS[name].iterdir() if f.suffix in (".py", ".java")):
                answer = ctx.request.put(
                    f"{base}/api/contents/comn/{program.name}",
                    headers={"X-XSRFToken": xsrf(ctx)},
                    data=json.dumps({"type": "file", "format": "text", "content": program.read_text()}),
                )
                assert answer.ok, answer.text()
            # the student's answers typed into the answer cells
            nb = contents(ctx, base, "comn/results_sheet.ipynb")["content"]
            answers = {**C.SOLUTIONS, **C.DISCUSSIONS}
            for cell in nb["cells"]:
                grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
                if grade_id in answers:
                    cell["source"] = answers[grade_id]
            answer = ctx.request.put(
                f"{base}/api/contents/comn/results_sheet.ipynb",
                headers={"X-XSRFToken": xsrf(ctx)},
                data=json.dumps({"type": "notebook", "format": "json", "content": nb}),
            )
            assert answer.ok, answer.text()
            spage.goto(f"{base}/lab/tree/comn/results_sheet.ipynb")
            spage.wait_for_selector(".jp-Notebook", timeout=60000)
            spage.wait_for_selector(".jp-StatusBar-TextItem:has-text('| Idle')", timeout=120000)
            spage.click('.lm-MenuBar-itemLabel:text-is("Run")')
            spage.click('.lm-Menu-itemLabel:text-is("Run All Cells")')
            wait_for(f"{name}'s notebook starting", lambda: prompts(spage)["done"] + prompts(spage)["busy"], 60)
            step(f"{name} runs the notebook")
        for name, (ctx, spage) in students.items():
            base = f"{url}/user/{name}"
            wait_for(f"{name}'s notebook run", lambda: prompts(spage)["busy"] == 0, timeout=900, every=2)
            spage.keyboard.press("Control+s")
            spage.wait_for_timeout(1500)
            spage.screenshot(path=str(ARTIFACTS / f"hub-{name}-notebook.png"))
            nb = contents(ctx, base, "comn/results_sheet.ipynb")["content"]
            (ARTIFACTS / f"hub-{name}-results_sheet.ipynb").write_text(json.dumps(nb))  # as run, for a failure's why
            ran = [c for c in nb["cells"] if c["cell_type"] == "code" and c.get("execution_count")]
            assert len(ran) > 5, f"{name}'s notebook ran {len(ran)} cells"
            valid = post(ctx, f"{base}/assignments/validate", {"path": "comn/results_sheet.ipynb"}).json()
            assert valid["success"], valid
            listed = post(ctx, f"{base}/assignments/submit", {"course_id": "rdtlab", "assignment_id": "comn"}).json()
            assert listed["success"], listed

        step("submitted; bob forges and probes")
        # bob forges a submission under alice's name and probes what his server reaches
        bob_ctx, bob_page = students["bob"]
        bob = f"{url}/user/bob"
        bob_ctx.request.put(
            f"{bob}/api/contents/probe.py",
            headers={"X-XSRFToken": xsrf(bob_ctx)},
            data=json.dumps({"type": "file", "format": "text", "content": PROBE}),
        )
        terminal(
            bob_page,
            bob,
            "d=/srv/nbgrader/exchange/rdtlab/inbound/alice+comn+$(date -u +'%Y-%m-%d %H:%M:%S.%6N UTC')+forged; "
            f'cp -R comn "$d"; PROBE_PORT={listener.getsockname()[1]} python3 probe.py; echo done > forged.txt',
        )
        wait_for("bob's probe", lambda: contents(bob_ctx, bob, "forged.txt"), timeout=60)
        probe = json.loads(contents(bob_ctx, bob, "probe.json")["content"])
        assert probe["hub_api"] == "reached", probe
        for what in (
            "other_server",
            "grader_server",
            "host_listener",
            "docker_socket",
            "inbound",
            "course",
            "other_home",
        ):
            assert probe[what].startswith("refused"), (what, probe)
        assert probe["uid"] >= 10000 and int(probe["caps"], 16) == 0, probe

        step("the instructor grades")
        # the instructor grades from the grader account's terminal
        terminal(page, grader, "rdtlab-hub-grade comn > grade.log 2>&1; echo $? > grade.exit")
        wait_for("grading", lambda: contents(staff, grader, "grade.exit"), timeout=1500, every=5)
        log = contents(staff, grader, "grade.log")["content"]
        (ARTIFACTS / "hub-grade.log").write_text(log)
        assert contents(staff, grader, "grade.exit")["content"].strip() == "0", log[-3000:]
        assert re.search(r"not collected: alice\+comn\+.*\+forged is named for alice .* handed in by bob", log), log[
            -3000:
        ]
        assert "feedback released" in log
        grades = contents(staff, grader, "graded/comn/grades.csv")["content"]
        assert "alice" in grades and "bob" in grades
        page.goto(f"{grader}/files/graded/comn/class.html")
        page.screenshot(path=str(ARTIFACTS / "hub-class-view.png"), full_page=True)
        assert "alice" in page.inner_text("body")

        step("the students fetch their feedback")
        # each student fetches their own feedback: the notebook's and the programs'
        for name, (ctx, spage) in students.items():
            base = f"{url}/user/{name}"
            post(ctx, f"{base}/assignments/fetch_feedback", {"course_id": "rdtlab", "assignment_id": "comn"})
            folder = contents(ctx, base, "comn/feedback")
            assert folder and folder["content"], f"{name} got no feedback"
            stamp = folder["content"][0]["name"]
            spage.goto(f"{base}/files/comn/feedback/{stamp}/results_sheet.html")
            text = spage.inner_text("body")
            spage.screenshot(path=str(ARTIFACTS / f"hub-{name}-feedback.png"), full_page=True)
            assert "results_sheet" in text and "Sender" in text, text[:500]
        # alice's server cannot be opened by bob's session
        answer = bob_ctx.request.get(f"{url}/user/alice/api/contents", max_redirects=0)
        assert answer.status in (302, 403, 404), answer.status

        staff.close()
        for ctx, _ in students.values():
            ctx.close()
    listener.close()
    print(
        f"hub up in {hub['started']:.1f} s; students' servers in "
        + ", ".join(f"{n} {s:.1f} s" for n, s in spawn_seconds.items())
    )
    assert hub["started"] < 60
    assert max(spawn_seconds.values()) < 60


def test_a_students_sheet_on_the_hub_matches_the_netns_backend(hub_images, tmp_path):
    """Q1 of the quick COMN sheet with a student's programs, in a student's server as the
    hub starts it (the local backend: no capability; the hub's CPU, memory and task
    limits) and on this host's netns backend: each cell's 95% intervals of goodput and of
    retransmissions overlap where the timer is at least the round trip. Below it, a stop-
    and-wait sender resends as often as its timer wakes, so both measure the CPU it gets
    (the host's two cores against the hub's one), not the link. (Under a cgroup of the
    hub's share the host's sheet is no fairer: its engine loses its real-time priority
    and its interpreters use more CPU than the image's.)"""
    settings = tomllib.loads((HUB / "settings.toml").read_text())
    programs = REPO / "tests" / "fixtures" / "students"
    work = tmp_path / "work"
    (work / "progs").mkdir(parents=True)
    for name in [f"{role}{part}.py" for role in ("Sender", "Receiver") for part in range(1, 5)]:
        shutil.copy(programs / name, work / "progs" / name)
    os.chmod(tmp_path, 0o755)
    sheet = ["rdtlab", "sheet", "comn", "--quick", "--questions", "q1", "--runs", "4", "--no-progress"]
    hub_run = run(
        "docker",
        "run",
        "--rm",
        "--cap-drop",
        "ALL",
        *[x for cap in settings["start_capabilities"] for x in ("--cap-add", cap)],
        "--security-opt",
        "no-new-privileges:true",
        "--pids-limit",
        str(settings["pids_limit"]),
        "--memory",
        settings["mem_limit"].lower(),
        "--cpus",
        str(settings["cpu_limit"]),
        "-e",
        "NB_UID=10001",
        "-e",
        "NB_USER=student",
        "-v",
        f"{work}:/home/jovyan/work",
        "rdtlab/lab-hub:latest",
        *sheet,
        "--impl",
        "progs",
        "--out",
        "out",
        timeout=900,
        check=False,
    )
    assert hub_run.returncode == 0, hub_run.stderr[-2000:]
    assert "backend local" in hub_run.stderr + hub_run.stdout
    host_run = run(
        os.path.join(os.path.dirname(sys.executable), "rdtlab"),
        *sheet[1:],
        "--impl",
        str(work / "progs"),
        "--backend",
        "netns",
        "--out",
        str(tmp_path / "host"),
        timeout=900,
        check=False,
    )
    assert host_run.returncode == 0, host_run.stderr[-2000:]

    def cells(path):
        rows = list(csv.DictReader(open(path)))
        assert rows and all(r["ok"] == "True" for r in rows), path
        return {
            t: {
                m: summarize(float(r[m]) for r in rows if r["timeout"] == t)
                for m in ("goodput_kBps", "retransmissions")
            }
            for t in {r["timeout"] for r in rows}
        }

    on_hub, on_host = cells(work / "out" / "comn" / "q1.csv"), cells(tmp_path / "host" / "comn" / "q1.csv")
    assert on_hub.keys() == on_host.keys()
    rows = list(csv.DictReader(open(tmp_path / "host" / "comn" / "q1.csv")))
    round_trip_ms = 1000 * link_model({"delay": float(rows[0]["delay"]), "loss": float(rows[0]["loss"])}).rtt
    apart = []
    for timeout in sorted(on_hub, key=int):
        for metric, a in on_hub[timeout].items():
            if int(timeout) < round_trip_ms:
                continue
            b = on_host[timeout][metric]
            line = (
                f"timeout {timeout} ms {metric}: hub {a.mean:.1f} [{a.ci_low:.1f}, {a.ci_high:.1f}], "
                f"netns {b.mean:.1f} [{b.ci_low:.1f}, {b.ci_high:.1f}]"
            )
            print(line)
            if a.ci_high < b.ci_low or b.ci_high < a.ci_low:
                apart.append(line)
    assert not apart, "the hub's local backend and the netns backend disagree:\n" + "\n".join(apart)
