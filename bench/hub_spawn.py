"""Students' servers started at once on the course hub (docker/hub/): does every one start,
is any killed for memory, does the hub's API answer in under a second throughout?

``python -m bench.hub_spawn [--students 20]``

Brings the hub up (docker/hub/hub.sh) on a free port, makes the students through the
hub's API with the admin's token, asks for every server at once, and polls the hub's API
every 0.25 s until all are ready; then stops everything and removes what it made.
Needs root, the hub's images (`make hub-images`) and no hub on this machine (the same
names). Figures go in BENCHMARKS.md ("The course hub").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from bench._ports import free_port
from rdtlab.hub.signin import log_in, session

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HUB_SH = os.path.join(REPO, "docker", "hub", "hub.sh")
HUB_VOLUMES = ["rdtlab-hub-data", "rdtlab-hub-users", "rdtlab-hub-course", "rdtlab-hub-exchange"]


def docker(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True).stdout


class Hub:
    def __init__(self, url: str, admin: str, password: str):
        self.url = url
        opener, jar = session()
        if not log_in(opener, url, admin, password):
            raise SystemExit(f"bench.hub_spawn: {admin} could not sign in to {url}")
        xsrf = next(c.value for c in jar if c.name == "_xsrf")
        request = urllib.request.Request(
            f"{url}/hub/api/users/{admin}/tokens",
            method="POST",
            data=json.dumps({"note": "bench.hub_spawn", "expires_in": 3600}).encode(),
            headers={"X-XSRFToken": xsrf, "Content-Type": "application/json"},
        )
        self.token = json.load(opener.open(request, timeout=30))["token"]

    def api(self, method: str, path: str, body=None, timeout: float = 30):
        request = urllib.request.Request(
            f"{self.url}/hub/api/{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            text = answer.read()
            return json.loads(text) if text else None


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench.hub_spawn", description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=int, default=20)
    p.add_argument("--timeout", type=float, default=300, help="seconds for every server to be ready")
    return p


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if os.geteuid() != 0:
        print("bench.hub_spawn: needs root (the hub's firewall rules)", file=sys.stderr)
        return 2
    if docker("ps", "-aq", "--filter", "name=^rdtlab-hub$").strip() or any(
        docker("volume", "ls", "-q", "--filter", f"name=^{v}$").strip() for v in HUB_VOLUMES
    ):
        print(
            "bench.hub_spawn: a course hub (or its volumes) is on this machine; it uses the same names", file=sys.stderr
        )
        return 2
    names = [f"stu{i:03d}" for i in range(args.students)]
    state = tempfile.mkdtemp(prefix="rdtlab-hub-bench-")
    env = {**os.environ, "RDTLAB_HUB_PORT": str(free_port()), "RDTLAB_HUB_STATE": state}
    t0 = time.monotonic()
    up = subprocess.run([HUB_SH, "up"], env=env, capture_output=True, text=True)
    hub_up = time.monotonic() - t0
    try:
        if up.returncode != 0:
            print(f"bench.hub_spawn: the hub did not start: {up.stderr.strip().splitlines()[-1]}", file=sys.stderr)
            return 1
        secrets = dict(line.split("=", 1) for line in open(os.path.join(state, "secrets.env")).read().split())
        hub = Hub(f"http://127.0.0.1:{env['RDTLAB_HUB_PORT']}", "instructor", secrets["RDTLAB_ADMIN_PASSWORD"])
        hub.api("POST", "users", {"usernames": names})

        latencies: list[float] = []
        stop = threading.Event()

        def poll_api():
            while not stop.is_set():
                t = time.monotonic()
                try:
                    hub.api("GET", "users?limit=1", timeout=10)
                    latencies.append(time.monotonic() - t)
                except OSError:
                    latencies.append(float("inf"))
                stop.wait(0.25)

        poller = threading.Thread(target=poll_api, daemon=True)
        poller.start()
        asked = time.monotonic()
        # all at once: the hub answers a spawn's POST only when it is ready or after 10 s
        askers = [
            threading.Thread(
                target=hub.api, args=("POST", f"users/{name}/server"), kwargs={"timeout": 120}, daemon=True
            )
            for name in names
        ]
        for asker in askers:
            asker.start()
        ready: dict[str, float] = {}
        while len(ready) < len(names) and time.monotonic() - asked < args.timeout:
            for user in hub.api("GET", "users?state=active&limit=200") or []:
                server = user.get("servers", {}).get("")
                if user["name"] in names and server and server.get("ready") and user["name"] not in ready:
                    ready[user["name"]] = time.monotonic() - asked
            time.sleep(0.5)
        for asker in askers:
            asker.join(timeout=1)
        stop.set()
        poller.join()
        killed = [
            n for n in names if docker("inspect", "-f", "{{.State.OOMKilled}}", f"rdtlab-hub-{n}").strip() == "true"
        ]
        memory = docker("stats", "--no-stream", "--format", "{{.Name}} {{.MemUsage}}")
        load = open("/proc/loadavg").read().split()[:3]
        finite = [x for x in latencies if x != float("inf")]
        print(
            json.dumps(
                {
                    "students": len(names),
                    "cores": os.cpu_count(),
                    "hub_up_s": round(hub_up, 1),
                    "ready": len(ready),
                    "all_ready_s": round(max(ready.values()), 1) if ready else None,
                    "first_ready_s": round(min(ready.values()), 1) if ready else None,
                    "median_ready_s": round(statistics.median(ready.values()), 1) if ready else None,
                    "oom_killed": killed,
                    "api_polls": len(latencies),
                    "api_failed": len(latencies) - len(finite),
                    "api_max_s": round(max(finite), 3) if finite else None,
                    "api_p95_s": round(sorted(finite)[int(0.95 * (len(finite) - 1))], 3) if finite else None,
                    "load": load,
                },
                indent=1,
            )
        )
        print(memory)
        ok = len(ready) == len(names) and not killed and finite and max(finite) < 1.0 and len(finite) == len(latencies)
        return 0 if ok else 1
    finally:
        subprocess.run([HUB_SH, "down"], env=env, capture_output=True, text=True)
        for volume in HUB_VOLUMES + [f"rdtlab-hub-home-{n}" for n in [*names, "instructor"]]:
            docker("volume", "rm", "-f", volume)
        subprocess.run(["rm", "-rf", state])


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
