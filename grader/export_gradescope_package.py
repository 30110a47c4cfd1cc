"""A Gradescope autograder package (`rdtlab grade --gradescope-package comn.zip`).

Gradescope unpacks the zip into /autograder/source, runs `setup.sh` once on its
Ubuntu image, then `run_autograder` for each submission (copied into
/autograder/submission), which must write /autograder/results/results.json. Ours
installs the kit from the package (rdtlab/) and grades with the local backend (no
privileges: the Gradescope container is the sandbox). The link engine goes in built
when it is built here (same Linux x86-64 ABI), else setup.sh builds it with cargo.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import zipfile

from harness.engine import REPO
from harness.procs import UsageError

from grader.protocol.battery import load_battery

KIT = ("pyproject.toml", "Makefile", "README.md", "harness", "reference", "grader")
SKIP = ("__pycache__", "target", ".pytest_cache", "bench")
ENGINE = os.path.join("harness", "linkemu", "target", "release", "linkemu")

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, on its Ubuntu image.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# the toolchains students' programs are built with (harness/resolver.py)
apt-get install -y -qq python3 python3-venv python3-pip make gcc g++ default-jdk-headless golang-go cargo >/dev/null
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install -q /autograder/source/rdtlab
cd /autograder/source/rdtlab
if [ ! -x harness/linkemu/target/release/linkemu ]; then
  apt-get install -y -qq cargo >/dev/null
  make build
fi
"""

RUN = """#!/usr/bin/env bash
# Gradescope runs this for each submission. AUTOGRADER_ROOT, RDTLAB_PYTHON and
# RDTLAB_LINKEMU override where things are (a scratch root in tests).
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
KIT="$ROOT/source/rdtlab"
PY="${RDTLAB_PYTHON:-$ROOT/venv/bin/python}"
export PYTHONPATH="$KIT"
export RDTLAB_LINKEMU="${RDTLAB_LINKEMU:-$KIT/harness/linkemu/target/release/linkemu}"
mkdir -p "$ROOT/results"
cd "$KIT"
if ! "$PY" -m grader.protocol.job "$ROOT/submission" --assignment %(assignment)s --battery "$ROOT/source/battery.toml" \\
     %(only)s--student submission --backend local --no-sandbox --results "$ROOT/results/results.json" 2>"$ROOT/results/error.txt"; then
  why="$(tail -n 1 "$ROOT/results/error.txt" | sed 's/\\\\/\\\\\\\\/g; s/"/\\\\"/g')"
  printf '{"score": 0, "output": "The autograder could not grade this submission: %%s"}\\n' "$why" > "$ROOT/results/results.json"
fi
"""


def write_package(
    zip_path: str, assignment: str, battery: str | None = None, scenarios: list[str] | None = None
) -> None:
    """The package for `assignment` (its battery, or the TOML file `battery`); with
    `scenarios`, its run_autograder grades only those (a course that hands out one part)."""
    loaded = load_battery(battery or assignment)  # checked before anything is written
    source = loaded.source
    if scenarios is not None:
        unknown = sorted(set(scenarios) - {s.name for s in loaded.scenarios})
        if unknown or not scenarios:
            raise UsageError(
                f"no scenario {', '.join(unknown)} in battery {loaded.name}"
                if unknown
                else "the package would grade no scenario"
            )
    only = "".join(f"--scenario {shlex.quote(name)} " for name in scenarios or ())
    tmp = zip_path + ".part"
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            _add_text(z, "setup.sh", SETUP, executable=True)
            _add_text(z, "run_autograder", RUN % {"assignment": assignment, "only": only}, executable=True)
            z.write(source, "battery.toml")
            for top in KIT:
                _add_tree(z, os.path.join(REPO, top), os.path.join("rdtlab", top))
            engine = os.path.join(REPO, ENGINE)
            if os.path.exists(engine):
                _add_file(z, engine, os.path.join("rdtlab", ENGINE))
    except OSError as e:
        raise UsageError(f"cannot write {zip_path}: {e}") from None
    os.replace(tmp, zip_path)


def _add_text(z: zipfile.ZipFile, name: str, text: str, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, text)


def _add_file(z: zipfile.ZipFile, path: str, name: str) -> None:
    z.write(path, name)  # keeps the mode bits (the engine stays executable)


def _add_tree(z: zipfile.ZipFile, path: str, name: str) -> None:
    if os.path.isfile(path):
        _add_file(z, path, name)
        return
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in SKIP and not d.startswith("."))
        for f in sorted(files):
            if not f.endswith((".pyc", ".pcap")):
                full = os.path.join(root, f)
                _add_file(z, full, os.path.join(name, os.path.relpath(full, path)))


def unpack_package(zip_path: str, dest: str) -> None:
    """Unzip as Gradescope does, keeping the executable bits (zipfile drops them)."""
    with zipfile.ZipFile(zip_path) as z:
        for info in z.infolist():
            target = z.extract(info, dest)
            mode = info.external_attr >> 16
            if mode & 0o111:
                os.chmod(target, os.stat(target).st_mode | 0o755)
    if not os.path.exists(os.path.join(dest, "run_autograder")):
        raise UsageError(f"{zip_path}: not an autograder package (no run_autograder)")
    shutil.copy2(os.path.join(dest, "run_autograder"), os.path.join(os.path.dirname(dest), "run_autograder"))
