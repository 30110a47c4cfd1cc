"""The hub's grading service: starts the grading container for the grader account.

The grader account's server is unprivileged (instructors get no root terminal); the jail
that grading runs students' programs and kernels in needs NET_ADMIN, SYS_ADMIN,
SYS_PTRACE, the TUN device, and seccomp, AppArmor and Docker's masked /proc paths off
(docker/grader.Dockerfile). This service, which the hub starts and which holds the
Docker socket as the hub does, runs `rdtlab grade` in such a container on the course
volume, with no network, and hands the course folder back to the grader account.

  POST /services/rdtlab-grading/api/grade/ASSIGNMENT   a job (202, {"id": ...}); 409 if one runs
  GET  /services/rdtlab-grading/api/jobs/ID?since=N    {"state", "exit", "log": lines N..}

Callers need the scope access:services!service=rdtlab-grading (the grader account and the
group instructors have it: jupyterhub_config.py).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import tomllib

import docker
from jupyterhub.services.auth import HubAuthenticated
from jupyterhub.utils import url_path_join
from tornado import web
from tornado.ioloop import IOLoop

SETTINGS = tomllib.load(open(os.environ["RDTLAB_HUB_SETTINGS"], "rb"))
IMAGE = os.environ.get("RDTLAB_GRADING_IMAGE", "rdtlab/grader:latest")
COURSE_VOLUME = "rdtlab-hub-course"
GRADER_UID = int(os.environ.get("RDTLAB_GRADER_UID", "2000"))
ASSIGNMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# the grading image's documented run (docker/grader.Dockerfile), as the Engine API spells it
PRIVILEGES = {
    "CapAdd": ["NET_ADMIN", "SYS_ADMIN", "SYS_PTRACE"],
    "Devices": [{"PathOnHost": "/dev/net/tun", "PathInContainer": "/dev/net/tun", "CgroupPermissions": "rwm"}],
    "SecurityOpt": ["apparmor=unconfined", "seccomp=unconfined"],
    "MaskedPaths": [],
    "ReadonlyPaths": [],  # --security-opt systempaths=unconfined
}
JOBS: dict[str, dict] = {}


def grading_command(assignment: str) -> list[str]:
    """`rdtlab grade` on the collected submissions, notebooks into nbgrader's gradebook,
    then the course folder handed back to the grader account (its exit status kept)."""
    out = f"/course/graded/{assignment}"
    script = f'rdtlab-grade-start "$@"; status=$?; chown -R {GRADER_UID}:{int(SETTINGS["gid"])} /course; exit $status'
    return [
        "sh",
        "-c",
        script,
        "rdtlab-grade",
        "/course/submitted",
        "--assignment",
        assignment,
        "--gradebook",
        "/course",
        "--out",
        out,
        "--jobs",
        str(max(1, int(SETTINGS["grading_cpus"]))),
    ]


def run_job(job: dict) -> None:
    """The grading container, start to end, its log lines into the job (a thread)."""
    client = docker.from_env()
    api = client.api
    host = api.create_host_config(
        binds={COURSE_VOLUME: {"bind": "/course", "mode": "rw"}},
        network_mode="none",
        mem_limit=SETTINGS["grading_mem_limit"],
        nano_cpus=int(float(SETTINGS["grading_cpus"]) * 1e9),
        pids_limit=4096,
        init=False,
    )
    host.update(PRIVILEGES)
    mode = os.environ.get("RDTLAB_NOTEBOOK_MODE", "")
    container = api.create_container(
        IMAGE,
        entrypoint=["tini", "--"],
        command=grading_command(job["assignment"]),
        host_config=host,
        name=f"rdtlab-grading-{job['id']}",
        environment={"RDTLAB_NOTEBOOK_MODE": mode} if mode else {},
        labels={"rdtlab.hub": "grading"},
    )
    job["container"] = container["Id"]
    try:
        api.start(container)
        for chunk in api.logs(container, stream=True, follow=True):
            job["log"].extend(chunk.decode(errors="replace").splitlines())
        job["exit"] = api.wait(container)["StatusCode"]
        job["state"] = "done" if job["exit"] == 0 else "failed"
    except Exception as e:  # the Engine's answer, in one line, to the caller
        job["log"].append(f"rdtlab-grading: {e}")
        job["state"], job["exit"] = "failed", -1
    finally:
        try:
            api.remove_container(container, force=True)
        except docker.errors.APIError:
            pass


class GradeHandler(HubAuthenticated, web.RequestHandler):
    @web.authenticated
    async def post(self, assignment: str):
        if not ASSIGNMENT.match(assignment):
            raise web.HTTPError(400, f"{assignment!r} is not an assignment's name")
        if any(j["state"] == "running" for j in JOBS.values()):
            raise web.HTTPError(409, "a grading job is running; wait for it")
        job = {
            "id": secrets.token_hex(6),
            "assignment": assignment,
            "state": "running",
            "exit": None,
            "log": [],
            "by": self.current_user.get("name"),
        }
        JOBS[job["id"]] = job
        IOLoop.current().run_in_executor(None, run_job, job)
        self.set_status(202)
        self.finish({"id": job["id"]})


class JobHandler(HubAuthenticated, web.RequestHandler):
    @web.authenticated
    def get(self, job_id: str):
        job = JOBS.get(job_id)
        if job is None:
            raise web.HTTPError(404, f"no grading job {job_id}")
        since = int(self.get_argument("since", "0"))
        self.finish({"state": job["state"], "exit": job["exit"], "log": job["log"][since:]})


def main() -> None:
    prefix = os.environ["JUPYTERHUB_SERVICE_PREFIX"]
    app = web.Application(
        [
            (url_path_join(prefix, r"api/grade/([^/]+)"), GradeHandler),
            (url_path_join(prefix, r"api/jobs/([0-9a-f]+)"), JobHandler),
        ]
    )
    host_port = os.environ["JUPYTERHUB_SERVICE_URL"].rsplit(":", 1)[1].strip("/")
    app.listen(int(host_port), address="127.0.0.1")
    print(json.dumps({"rdtlab-grading": "listening", "port": host_port, "image": IMAGE}), flush=True)
    IOLoop.current().start()


if __name__ == "__main__":
    main()
