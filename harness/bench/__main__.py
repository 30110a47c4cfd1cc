"""Run benchmarks: ``python -m harness.bench all|NAME [args]``."""
import importlib
import pkgutil
import sys

import harness.bench as bench_pkg

ORDER = ["engine", "reference", "transfer", "sheet"]


def available() -> list[str]:
    names = [m.name for m in pkgutil.iter_modules(bench_pkg.__path__) if not m.name.startswith("_")]
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def main(argv: list[str]) -> int:
    names = available()
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: python -m harness.bench all|{'|'.join(names)} [args]")
        return 0 if argv else 2
    which, rest = argv[0], argv[1:]
    if which != "all" and which not in names:
        print(f"harness.bench: no benchmark named {which!r}; expected one of: all, {', '.join(names)}", file=sys.stderr)
        return 2
    status = 0
    for name in names if which == "all" else [which]:
        print(f"== bench {name}", flush=True)
        status |= importlib.import_module(f"harness.bench.{name}").run(rest)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
