"""`make lab`: JupyterLab on loopback on the student's copy of an assignment's release.

    python assignments/lab.py [--assignment comn|tcp-like|multihoming|gbn-vs-tcp|stop-and-wait-crc] [--port 8888] [--dir out/lab/<assignment>]

Generates the release with nbgrader (`nbgrader generate_assignment <assignment>`, in this
course directory) when there is none, copies it to the student's folder once (a later
`make lab` reopens the same copy, work kept), then starts JupyterLab there on
127.0.0.1 with a fresh token and prints the URL to open. The kernel is this Python,
where the rdtlab harness is installed, so the notebook's `from harness import notebook`
works. Ctrl-C (or a signal to this process, which becomes JupyterLab) stops it.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import subprocess
import sys

COURSE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(COURSE)
BIN = os.path.dirname(sys.executable)


def release(assignment: str = "comn") -> str:
    path = os.path.join(COURSE, "release", assignment)
    if not os.path.isdir(path):
        env = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", "")}
        done = subprocess.run(
            [os.path.join(BIN, "nbgrader"), "generate_assignment", assignment, "--force"],
            cwd=COURSE,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            sys.exit(f"make lab: nbgrader generate_assignment {assignment} failed: {tail}")
    return path


def student_copy(folder: str, assignment: str = "comn") -> str:
    if not os.path.isdir(folder):
        shutil.copytree(release(assignment), folder)
        print(f"your copy of the {assignment} release: {folder}")
    return folder


def user_settings(folder: str) -> str:
    """JupyterLab settings beside the student's folder: no "Jupyter news?" prompt (it
    would fetch from the internet and covers the notebook)."""
    root = os.path.join(os.path.dirname(folder), ".jupyterlab-settings")
    path = os.path.join(root, "@jupyterlab", "apputils-extension", "notification.jupyterlab-settings")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write('{"fetchNews": "false"}\n')
    return root


def command(folder: str, port: int, token: str) -> list[str]:
    return [
        os.path.join(BIN, "jupyter"),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--LabApp.user_settings_dir={user_settings(folder)}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={folder}",
        f"--IdentityProvider.token={token}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",  # no PyPI look-ups from the lab
        *(["--allow-root"] if os.geteuid() == 0 else []),
    ]  # containers and CI run as root


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=int(os.environ.get("LAB_PORT", "8888")))
    ap.add_argument(
        "--assignment",
        default=os.environ.get("LAB_ASSIGNMENT", "comn"),
        help="which assignment (a folder of source/; default comn, or LAB_ASSIGNMENT)",
    )
    ap.add_argument(
        "--dir",
        default=None,
        help="the student's folder (made from the release if missing; default out/lab/<assignment>)",
    )
    args = ap.parse_args(argv)
    known = sorted(os.listdir(os.path.join(COURSE, "source")))
    if args.assignment not in known:
        sys.exit(f"make lab: no assignment {args.assignment!r}; the course has {', '.join(known)}")
    folder = student_copy(
        os.path.abspath(args.dir or os.path.join(REPO, "out", "lab", args.assignment)), args.assignment
    )
    token = secrets.token_hex(16)
    print(f"JupyterLab: http://127.0.0.1:{args.port}/lab/tree/results_sheet.ipynb?token={token}", flush=True)
    os.chdir(folder)
    cmd = command(folder, args.port, token)
    os.execv(cmd[0], cmd)  # JupyterLab becomes this process: a signal to it stops the lab, nothing left behind


if __name__ == "__main__":
    sys.exit(main())
