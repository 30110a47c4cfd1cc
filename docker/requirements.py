"""The Python requirements of the images, from pyproject.toml.

Prints a requirements file: the project's dependencies plus the extras the images need
(the course: JupyterLab, nbgrader; grading), without tools that only the host's tests
use (Playwright drives the host's browser). docker/build.sh pins them with the host
venv's `pip freeze` as constraints, so the images run the versions the host's tests ran.
Usage: python3 docker/requirements.py PYPROJECT          the requirements
       pip freeze | python3 docker/requirements.py --pins REQUIREMENTS
                                                  the freeze's lines for those packages
"""

import re
import sys
import tomllib

IMAGE_EXTRAS = ("course", "grade", "grader", "hub")
HOST_TEST_ONLY = {"playwright", "pytest", "pytest-timeout", "hypothesis"}
# What `pip install -e` of the kit needs when it cannot fetch build dependencies.
BUILD = ["setuptools>=64,<85", "wheel"]  # <85: editable_mode=compat (pyproject.toml)


def name_of(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def requirements(pyproject: dict) -> list[str]:
    project = pyproject["project"]
    extras = project.get("optional-dependencies", {})
    wanted = list(project.get("dependencies", []))
    for extra in IMAGE_EXTRAS:
        wanted += extras.get(extra, [])
    own = project["name"].lower()
    keep, seen = [], set()
    for req in wanted + BUILD:
        name = name_of(req)
        if name == own or name in HOST_TEST_ONLY or name in seen:
            continue
        seen.add(name)
        keep.append(req)
    return keep


def pins(freeze: str, names: set[str]) -> list[str]:
    """The `name==version` lines of a pip freeze for `names`."""
    return [line.strip() for line in freeze.splitlines() if "==" in line and name_of(line) in names]


def main(argv: list[str]) -> int:
    if argv[1] == "--pins":
        with open(argv[2]) as f:
            names = {name_of(line) for line in f if line.strip()}
        print("\n".join(pins(sys.stdin.read(), names)))
        return 0
    with open(argv[1], "rb") as f:
        reqs = requirements(tomllib.load(f))
    print("\n".join(reqs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
