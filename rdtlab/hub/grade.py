"""`rdtlab-hub-grade ASSIGNMENT`: the grader account grades an assignment on the hub.

  1. nbgrader collect (rdtlab.hub.exchange.CheckedCollect: a submission not owned by its
     student is refused, one line each);
  2. the grading service runs `rdtlab grade --gradebook` in the grading container (the
     jailed notebooks and the battery), this prints its log as it goes;
  3. nbgrader generate_feedback, the programs' feedback put into each page, and
     nbgrader release_feedback: students fetch it from their Assignments tab.
The class view is then graded/ASSIGNMENT/class.html in the course folder.
Run in the course folder (the grader account's server starts there).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

from rdtlab.hub.feedback import merge_class


def say(line: str) -> None:
    print(f"rdtlab-hub-grade: {line}", flush=True)


def nbgrader(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--log-level=WARN"], capture_output=True, text=True)
    for line in (done.stdout + done.stderr).splitlines():
        if line.strip():
            print(f"  {line}", flush=True)
    if done.returncode != 0:
        raise SystemExit(f"rdtlab-hub-grade: nbgrader {args[0]} failed (exit {done.returncode}); its lines are above")


class GradingService:
    """The hub's grading service, reached through the hub's proxy with this server's token."""

    def __init__(self, base: str, token: str):
        self.base, self.token = base.rstrip("/"), token

    def call(self, method: str, path: str) -> dict:
        request = urllib.request.Request(
            f"{self.base}/{path}",
            method=method,
            data=b"" if method == "POST" else None,
            headers={"Authorization": f"token {self.token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return json.load(answer)
        except urllib.error.HTTPError as e:
            reason = e.read().decode(errors="replace")
            try:
                reason = json.loads(reason).get("message", reason)
            except ValueError:
                pass
            raise SystemExit(f"rdtlab-hub-grade: the grading service answered {e.code}: {reason.strip()[:300]}")
        except OSError as e:
            raise SystemExit(f"rdtlab-hub-grade: the grading service at {self.base} does not answer ({e})")

    def grade(self, assignment: str, poll: float = 1.0) -> int:
        job = self.call("POST", f"api/grade/{assignment}")["id"]
        seen = 0
        while True:
            state = self.call("GET", f"api/jobs/{job}?since={seen}")
            for line in state["log"]:
                print(f"  {line}", flush=True)
            seen += len(state["log"])
            if state["state"] != "running":
                return state["exit"]
            time.sleep(poll)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rdtlab-hub-grade", description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment")
    parser.add_argument("--course", default=".", help="the course folder (default: here)")
    parser.add_argument("--no-collect", action="store_true", help="grade what is in submitted/ already")
    parser.add_argument("--no-release", action="store_true", help="make the feedback, do not release it")
    args = parser.parse_args(argv)
    course = os.path.abspath(args.course)
    if not os.path.isfile(os.path.join(course, "nbgrader_config.py")):
        parser.error(f"{course} is not a course folder (no nbgrader_config.py)")
    os.chdir(course)
    service = GradingService(
        os.environ.get("RDTLAB_GRADING_URL", "http://hub:8000/services/rdtlab-grading"),
        os.environ.get("JUPYTERHUB_API_TOKEN", ""),
    )
    if not args.no_collect:
        say(f"collecting {args.assignment}")
        nbgrader("collect", args.assignment, "--update")
    say("grading in the grading container (the notebooks jailed, then the battery)")
    status = service.grade(args.assignment)
    if status != 0:
        say(f"grading failed (exit {status}); its log is above")
        return 1
    say("feedback")
    nbgrader("generate_feedback", args.assignment, "--force")
    pages = merge_class(course, args.assignment, os.path.join(course, "graded", args.assignment))
    say(f"the programs' feedback put into {len(pages)} page(s)")
    if not args.no_release:
        nbgrader("release_feedback", args.assignment)
        say("feedback released: students fetch it in their Assignments tab")
    say(f"the class view: {os.path.join(course, 'graded', args.assignment, 'class.html')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
