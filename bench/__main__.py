"""Run benchmarks: ``python -m bench all|NAME [args]``."""

import importlib
import pkgutil
import sys

import bench as bench_pkg

ORDER = ["engine", "reference", "transfer", "sheet"]
# Commands of their own, with their own arguments (make bench runs each): the grader's
# class rate, the notebooks' autograde rate, the corpus calibration matrix, ...
SEPARATE = (
    "grader",
    "classes",
    "notebooks",
    "calibrate",
    "instructions",
    "hub_spawn",
    "planted_pictures",
    "notebook_languages",
)


def available() -> list[str]:
    names = [
        m.name
        for m in pkgutil.iter_modules(bench_pkg.__path__)
        if not m.name.startswith("_") and m.name not in SEPARATE
    ]
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def main(argv: list[str]) -> int:
    names = available()
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: python -m bench all|{'|'.join(names)} [args]")
        return 0 if argv else 2
    which, rest = argv[0], argv[1:]
    if which != "all" and which not in names:
        print(f"bench: no benchmark named {which!r}; expected one of: all, {', '.join(names)}", file=sys.stderr)
        return 2
    status = 0
    for name in names if which == "all" else [which]:
        print(f"== bench {name}", flush=True)
        status |= importlib.import_module(f"bench.{name}").run(rest)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
