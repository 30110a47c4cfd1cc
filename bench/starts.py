"""What each jailed program start costs in CPU: the launcher that sets up the
jail (`python -S -c "...from grader.jail.launcher import main; main()"`; in older trees
`grader.launcher`, started as `-S grader/launcher.py`, `-m grader.launcher` or
`-m grader.sandbox`) and the reference
programs' interpreters, in the jail's conditions.

    python -m bench starts [--reps 40] [--tree DIR]

`--tree`: a checkout of the kit to measure (default: this one), so an older commit's
worktree can be measured beside this one with the same bench. Per start, the CPU of the
child (user + system, from rusage), the mean over `--reps` starts, interleaved in rounds:
  - `python -c pass` under the kit's interpreter and the system's python3 (the floor);
  - the launcher up to its first check (its imports and options: what every jailed
    program pays before bwrap), started as the tree's Sandbox.prefix() starts it, given
    every option and a uid it refuses;
  - a reference COMN program (Sender2, Receiver3, Sender4 handed in with the reference
    package beside them, grader.protocol.planted) under the system's python3, as a jail runs it:
    from a fresh copy with no bytecode cache and without writing one (a jail that
    cannot write one), and with the cache its first start writes. Each program exits at its usage
    check: what is measured is its start, not its transfer.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile

from grader.jail.launcher import SAFE_PATH

SYSTEM_PYTHON = shutil.which("python3", path=SAFE_PATH)  # what a jail's PATH finds
ROUNDS = 4
# every option, and uid 1, which the launcher refuses once it has parsed them
LAUNCHER_OPTIONS = [
    "--uid",
    "1",
    "--scratch",
    "/nonexistent",
    "--memory",
    "1",
    "--processes",
    "1",
    "--cpu",
    "1",
    "--file-size",
    "1",
    "--open-files",
    "1",
    "--group-memory",
    "1",
    "--group-cpus",
    "1",
    "--group-tasks",
    "1",
    "--",
    "true",
]


def cpu_ms(argv: list[str], reps: int, cwd: str | None = None, env: dict | None = None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(reps):
        subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / reps * 1000


def launcher_start(tree: str, env: dict) -> list[str]:
    """How the tree's Sandbox.prefix() starts its launcher, after the interpreter
    (`-S -c ...`; in older trees `-m grader.launcher` or `-S .../grader/launcher.py`)."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json\n"
            "try:\n    from grader.jail.sandbox import Sandbox\n"
            "except ImportError:  # an older tree: the grader's modules side by side\n"
            "    from grader.sandbox import Sandbox\n"
            "print(json.dumps(Sandbox(1, '/nonexistent').prefix()[1:]))",
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    words = json.loads(done.stdout)
    return words[: words.index("--uid")]


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench starts")
    p.add_argument("--reps", type=int, default=40)
    p.add_argument("--tree", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return p


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    tree = os.path.abspath(args.tree)
    if SYSTEM_PYTHON is None:
        print(f"bench starts: no python3 on {SAFE_PATH} (the interpreter a jail finds)", file=sys.stderr)
        return 2
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    kit_env = dict(plain, PYTHONPATH=tree)
    no_cache = dict(plain, PYTHONDONTWRITEBYTECODE="1")
    reps = max(1, args.reps // ROUNDS)
    launcher = launcher_start(tree, kit_env)
    sums: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="rdt-starts-") as tmp:
        sub = os.path.join(tmp, "sub")
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from grader.protocol.planted import reference_submission; reference_submission(sys.argv[1])",
                sub,
            ],
            cwd=tree,
            env=kit_env,
            check=True,
        )

        def clear_cache() -> None:
            for root, dirs, _ in os.walk(sub):
                for d in dirs:
                    if d == "__pycache__":
                        shutil.rmtree(os.path.join(root, d), ignore_errors=True)

        cases = [
            ("python -c pass (kit's interpreter)", lambda: cpu_ms([sys.executable, "-c", "pass"], reps, env=plain)),
            ("python3 -c pass (system)", lambda: cpu_ms([SYSTEM_PYTHON, "-c", "pass"], reps, env=plain)),
            (
                f"launcher ({' '.join(launcher)}, to its first check)",
                lambda: cpu_ms([sys.executable, *launcher, *LAUNCHER_OPTIONS], reps, cwd=tmp, env=kit_env),
            ),
        ]
        for name in ("Sender2", "Receiver3", "Sender4"):

            def fresh(name=name) -> float:
                clear_cache()
                return cpu_ms([SYSTEM_PYTHON, f"{name}.py"], reps, cwd=sub, env=no_cache)

            def cached(name=name) -> float:
                clear_cache()
                subprocess.run([SYSTEM_PYTHON, f"{name}.py"], cwd=sub, env=plain, capture_output=True)
                return cpu_ms([SYSTEM_PYTHON, f"{name}.py"], reps, cwd=sub, env=plain)

            cases += [(f"{name}.py, no bytecode cache", fresh), (f"{name}.py, cached", cached)]
        for _ in range(ROUNDS):
            for name, measure in cases:
                sums[name] = sums.get(name, 0.0) + measure()
        shim = open(os.path.join(sub, "Sender2.py")).read()
    print(
        f"bench starts: {tree}, {reps * ROUNDS} starts each, load {os.getloadavg()[0]:.1f}; the shim "
        f"{'runs runpy on' if 'import runpy' in shim else 'execs'} its program"
    )
    for name, _ in cases:
        print(f"  {name:48} {sums[name] / ROUNDS:6.1f} CPU-ms a start")
    return 0
