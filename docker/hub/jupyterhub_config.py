"""The course's JupyterHub (docker/hub/compose.yaml; settings in settings.toml).

- Students sign up (NativeAuthenticator; the admin approves them at /hub/authorize) and
  each gets a server from the students' image (DockerSpawner): a uid of their own, no
  added capability, CPU, memory and task limits, a home volume kept between servers,
  nbgrader's exchange volume, on a network where they reach the hub and nothing else
  (docker/hub/hub.sh holds the firewall rules).
- The grader account `grader-<course>` is an external service (the compose service
  `grader`): the formgrader and the course folder, for the group `instructors`.
- The grading service (grading_service.py, run here) starts the grading container, which
  has the privileges the jail needs, when the grader account asks.
- The idle culler stops servers idle for `cull_timeout`.
"""

import os
import sys
import tomllib
from pathlib import Path

import nativeauthenticator

c = get_config()  # noqa: F821 (JupyterHub provides it)
HERE = Path(__file__).resolve().parent
S = tomllib.loads((HERE / "settings.toml").read_text())
DATA = Path(os.environ.get("RDTLAB_HUB_DATA", "/srv/jupyterhub/data"))
COURSE = S["course_id"]
GRADER = f"grader-{COURSE}"
USERS_FILE = os.environ.get("RDTLAB_HUB_USERS", "/srv/rdtlab/users/passwd")

# -- the hub and its proxy -------------------------------------------------------------
c.JupyterHub.bind_url = "http://:8000"
c.JupyterHub.hub_bind_url = "http://0.0.0.0:8081"
c.JupyterHub.hub_connect_url = "http://hub:8081"  # the compose service's name
c.JupyterHub.db_url = f"sqlite:///{DATA}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = str(DATA / "jupyterhub_cookie_secret")
c.JupyterHub.cleanup_servers = False  # a hub restart leaves students' servers up
c.ConfigurableHTTPProxy.pid_file = str(DATA / "jupyterhub-proxy.pid")

# -- who logs in -------------------------------------------------------------------------
# NativeAuthenticator: accounts sign up and wait for the admin's approval. A course with
# an LMS uses LTI 1.3 instead (docs/operator/hub.md): its roles map to these groups.
c.JupyterHub.authenticator_class = "nativeauthenticator.NativeAuthenticator"
c.Authenticator.admin_users = {S["admin"]}
c.Authenticator.allow_all = True  # approval is NativeAuthenticator's
c.NativeAuthenticator.minimum_password_length = 8
c.NativeAuthenticator.check_common_password = True
c.JupyterHub.template_paths = [str(Path(nativeauthenticator.__file__).parent / "templates")]
c.JupyterHub.load_groups = {
    "instructors": {"users": [S["admin"]]},
    "students": {"users": []},
}

# -- the students' servers ---------------------------------------------------------------
c.JupyterHub.spawner_class = "dockerspawner.DockerSpawner"
c.DockerSpawner.image = os.environ.get("RDTLAB_HUB_LAB_IMAGE") or "rdtlab/lab-hub:latest"
c.DockerSpawner.network_name = "rdtlab-hub"
c.DockerSpawner.use_internal_ip = True
c.DockerSpawner.remove = True  # the home volume stays, the container goes
c.DockerSpawner.name_template = "rdtlab-hub-{username}"
c.DockerSpawner.volumes = {
    "rdtlab-hub-home-{username}": "/home/jovyan/work",
    "rdtlab-hub-exchange": "/srv/nbgrader/exchange",
}
c.DockerSpawner.notebook_dir = "/home/jovyan/work"
c.Spawner.default_url = "/lab"
c.DockerSpawner.cpu_limit = float(S["cpu_limit"])
c.DockerSpawner.mem_limit = S["mem_limit"]
# The start script (root, Docker's default set minus what it does not need) writes the
# passwd entry and hands the home over, then drops to the student's uid with no
# capability at all and no way back (no_new_privs).
c.DockerSpawner.extra_host_config = {
    "pids_limit": int(S["pids_limit"]),
    "cap_drop": ["ALL"],
    "cap_add": list(S["start_capabilities"]),
    "security_opt": ["no-new-privileges:true"],
}
c.Spawner.start_timeout = int(S["start_timeout"])
c.Spawner.http_timeout = 30


def student_uid(spawner) -> int:
    return int(S["uid_base"]) + spawner.user.id


c.Spawner.environment = {
    "NB_UID": lambda spawner: str(student_uid(spawner)),
    "NB_GID": str(S["gid"]),
    "NB_USER": lambda spawner: spawner.user.name,
    "RDTLAB_COURSE_ID": COURSE,
    # the notebooks' plan (quick | full | tiny); empty: the notebook's own MODE
    "RDTLAB_NOTEBOOK_MODE": os.environ.get("RDTLAB_NOTEBOOK_MODE", ""),
}


def record_uid(spawner) -> None:
    """Write the student's name and uid where the grader's collect reads them: a
    submission in the exchange is collected only if its owner is its student's uid."""
    from rdtlab_hub_users import record

    record(USERS_FILE, spawner.user.name, student_uid(spawner), int(S["gid"]))


c.Spawner.pre_spawn_hook = record_uid

# -- the grader account, the grading service and the culler --------------------------------
c.JupyterHub.services = [
    {
        "name": GRADER,
        "url": "http://grader:8888",
        "api_token": os.environ["RDTLAB_GRADER_TOKEN"],
        "oauth_no_confirm": True,
        "display": True,
        "info": {"description": "the formgrader and the course folder, for instructors"},
    },
    {
        "name": "rdtlab-grading",
        "url": "http://127.0.0.1:9090",
        "command": [sys.executable, str(HERE / "grading_service.py")],
        "environment": {
            "RDTLAB_HUB_SETTINGS": str(HERE / "settings.toml"),
            "RDTLAB_GRADING_IMAGE": os.environ.get("RDTLAB_GRADING_IMAGE", "rdtlab/grader:latest"),
            "RDTLAB_NOTEBOOK_MODE": os.environ.get("RDTLAB_NOTEBOOK_MODE", ""),
        },
        "display": False,
    },
    {
        "name": "idle-culler",
        "command": [
            sys.executable,
            "-m",
            "jupyterhub_idle_culler",
            f"--timeout={int(S['cull_timeout'])}",
            f"--cull-every={int(S['cull_every'])}",
        ],
    },
]
c.JupyterHub.load_roles = [
    {
        "name": "instructors",
        "groups": ["instructors"],
        "scopes": [f"access:services!service={GRADER}", "access:services!service=rdtlab-grading"],
    },
    {"name": GRADER, "services": [GRADER], "scopes": ["access:services!service=rdtlab-grading"]},
    {
        "name": "idle-culler",
        "services": ["idle-culler"],
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    },
]
