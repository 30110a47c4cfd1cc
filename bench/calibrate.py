"""Calibrate the grader on a corpus of implementations of an assignment: every correct
one must score full marks, every planted bug must lose points in the scenario that
names its fault (or, in a scenario beyond the spec that the course does not score, fail
it), on every seed.

    python -m bench.calibrate [--assignment NAME] [--seeds 1,2,3] [--jobs N] [--subset fast] [--only NAME ...]
    python -m bench.calibrate --smoke [--only NAME ...]

COMN's corpus is tests/fixtures/corpus/ (corpus.toml: the correct implementations and
the conventions each uses; bugs/bugs.toml: the planted bugs and the scenarios that must
catch each); every other assignment's is tests/fixtures/batteries/<name>/ (corpus.toml
and bugs.toml). Every member is graded by the real grader (grader.protocol.grade.grade_submission,
in the bubblewrap jail where this machine can make one), once per seed: seed k grades a
copy of the member holding one more file, `calibration-seed`, so the submission's digest,
and with it every scenario's seed, differs per k the way a different student's would.

Prints a matrix, implementation x scenario: `ok` full marks, `PEN` a false penalty
(a correct implementation lost points), for bugs `caught` / `MISSED` in the scenarios
that must catch them. Exit status 1 on any false penalty or missed bug (with --allow-expected, not for those
the manifests expect today: `expected` in corpus.toml, a convention the grader does not
detect yet or a limit of the jail; `missed_today` in bugs.toml); 2 on bad usage.

`--smoke` grades nothing: it runs each implementation's own pairs (parts 1-4) through
the harness over lossy links and says whether each file arrived whole.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from harness.engine import REPO
from harness.procs import UsageError
from grader.protocol.planted import plant

CORPUS = Path(REPO) / "tests" / "fixtures" / "corpus"
BATTERY = "comn"  # the assignment calibrated (main's --assignment)


def corpus_of(assignment: str) -> Path:
    """The folder of an assignment's calibration corpus."""
    return CORPUS if assignment == "comn" else Path(REPO) / "tests" / "fixtures" / "batteries" / assignment


@dataclass
class Member:
    name: str
    path: Path
    kind: str  # "correct" | "bug"
    what: str = ""
    conventions: dict = field(default_factory=dict)
    caught_by: list[str] = field(default_factory=list)  # bugs: scenarios that must catch it
    expected: dict = field(default_factory=dict)  # scenario -> why today's grader penalises it
    missed_today: str = ""  # bugs: why today's battery cannot catch it
    fast: bool = False
    patch: dict | None = None  # bugs: grader/protocol/planted.py's find/replace on `path`, the base member

    def copy_to(self, dest: str) -> str:
        """The member's programs at `dest`; a bug's planted in a copy of its base member."""
        ignore = shutil.ignore_patterns("__pycache__", "*.class", "*.o")
        if self.patch is None:
            return shutil.copytree(self.path, dest, ignore=ignore)
        return plant(str(self.path), {"name": self.name, **self.patch}, dest, ignore=ignore)

    def expects(self, scenario: str) -> str | None:
        """Why today's grader penalises this correct member in `scenario` (the manifest's
        `expected`, `"*"` for every scenario), or None: a penalty there is false."""
        return self.expected.get(scenario) or self.expected.get("*")


def load_corpus(root: Path = CORPUS) -> list[Member]:
    """The correct implementations (corpus.toml) and the planted bugs (bugs/bugs.toml)."""
    members = []
    with open(root / "corpus.toml", "rb") as f:
        for name, d in tomllib.load(f)["member"].items():
            members.append(
                Member(
                    name,
                    (root / d.get("path", name)).resolve(),
                    "correct",
                    d.get("what", ""),
                    d.get("conventions", {}),
                    expected=d.get("expected", {}),
                    fast=d.get("fast", False),
                )
            )
    bugs = root / "bugs" / "bugs.toml"
    with open(bugs if bugs.exists() else root / "bugs.toml", "rb") as f:
        for name, d in tomllib.load(f).get("bug", {}).items():
            caught = d["caught_by"] if isinstance(d["caught_by"], list) else [d["caught_by"]]
            members.append(
                Member(
                    name,
                    root / d["from"],
                    "bug",
                    d.get("what", ""),
                    caught_by=caught,
                    missed_today=d.get("missed_today", ""),
                    fast=d.get("fast", False),
                    patch={k: d[k] for k in ("file", "old", "new")},
                )
            )
    for m in members:
        if not m.path.is_dir():
            raise UsageError(f"corpus member {m.name}: no folder {m.path}")
    return members


def seeded_copy(member: Member, seed: int, dest: str) -> str:
    """A copy of the member whose digest (so every scenario's seed) depends on `seed`."""
    folder = member.copy_to(os.path.join(dest, f"{member.name}-seed{seed}"))
    with open(os.path.join(folder, "calibration-seed"), "w") as f:
        f.write(f"{seed}\n")
    return folder


def scenarios_for(member: Member, battery, subset: str | None) -> list[str]:
    """The scenarios a member is graded on. A bug: those that must catch it and are in
    the battery (the rest of it is a correct member, graded as such). A correct
    member: every scenario, or FAST_SCENARIOS in the fast subset."""
    names = [s.name for s in battery.scenarios]
    if member.kind == "bug":
        return [n for n in member.caught_by if n in names]
    if subset != "fast":
        return names
    # COMN's list, else each battery's public scenarios and its interop with the reference
    return [n for n in FAST_SCENARIOS if n in names] or [
        s.name for s in battery.scenarios if s.public or s.meet != "student"
    ]


# Where a convention, a design or the jail trips a correct member: the part 1 link and
# each part's interop with the reference both ways, and a lossy SR transfer.
FAST_SCENARIOS = [
    "p1-clean",
    "p2-reference-receiver",
    "p2-reference-sender",
    "p3-reference-receiver",
    "p3-reference-sender",
    "p4-loss-5",
    "p4-reference-receiver",
    "p4-reference-sender",
]


@dataclass
class Cell:
    score: float
    max_score: float
    reason: str
    passed: bool = True  # a scenario beyond the spec, not scored: 0 of 0 points, failed or not

    @property
    def full(self) -> bool:
        return self.score >= self.max_score and self.passed


def grade_corpus(
    members: list[Member],
    seeds: list[int],
    jobs: int,
    subset: str | None,
    backend: str = "auto",
    sandbox: bool | None = None,
    done=None,
    out: str | None = None,
    assignment: str | None = None,
) -> dict[tuple[str, int], dict[str, Cell]]:
    """{(member, seed): {scenario: Cell}} from the real grader, as `rdtlab grade` grades a
    class (grader.parallel.grade_all): a pool of `jobs`, and what the machine disturbed or
    failed in a crowded pool graded again alone at the end (`done` is told again then).
    `out`: write each grading's feedback there, with its failing runs' pictures;
    `assignment`: whose battery (default the one main calibrates)."""
    from grader.protocol.battery import load_battery
    from grader.collect import Submission
    from grader.protocol.grade import Options
    from grader.parallel import grade_all

    battery = load_battery(assignment or BATTERY)
    options = Options(backend=backend, sandbox=sandbox, pcaps=out is not None)
    with tempfile.TemporaryDirectory(prefix="rdt-calibrate-") as tmp:
        work, chosen, results = [], {}, {}
        for m in sorted(members, key=lambda m: m.kind != "bug"):  # the bugs first: they are quick
            selection = battery.select(names=scenarios_for(m, battery, subset))
            if not selection.scenarios:  # a bug whose scenarios are not in the battery yet
                results.update({(m.name, seed): {} for seed in seeds})
                continue
            for seed in seeds:
                sub = Submission(f"{m.name}-seed{seed}", seeded_copy(m, seed, tmp))
                work.append((m, seed, sub))
                chosen[sub.student] = selection
        of = {sub.student: (m, seed) for m, seed, sub in work}

        def finished(r):
            if done:
                done(*of[r["student"]], r)

        graded = grade_all(
            [sub for _, _, sub in work],
            battery,
            out,
            options,
            jobs,
            finished,
            battery_of=lambda sub: chosen[sub.student],
        )
    for (m, seed, _), r in zip(work, graded):
        results[(m.name, seed)] = {
            s["name"]: Cell(s["score"], s["max_score"], s["reason"] or "", s["passed"] or bool(s.get("ungraded")))
            for s in r["scenarios"]
        }
    return results


@dataclass
class Verdict:
    false_penalties: list[tuple[str, int, str, str]]  # member, seed, scenario, reason
    expected: list[tuple[str, int, str, str]]  # penalties (or misses) the manifest expects today
    missed: list[tuple[str, int, str]]  # bug, seed, why


def judge(members: list[Member], results: dict, seeds: list[int]) -> Verdict:
    """A correct member: every scenario at full marks on every seed. A bug: on every
    seed, at least one of the scenarios that must catch it loses points."""
    v = Verdict([], [], [])
    for m in members:
        for seed in seeds:
            cells = results.get((m.name, seed))
            if cells is None:
                continue
            if m.kind == "correct":
                for scen, c in cells.items():
                    if not c.full:
                        (v.expected if m.expects(scen) else v.false_penalties).append((m.name, seed, scen, c.reason))
                continue
            if any(not c.full for c in cells.values()):
                continue
            why = (
                ("full marks in " + ", ".join(cells))
                if cells
                else "none of its scenarios (" + ", ".join(m.caught_by) + ") is in the battery"
            )
            if m.missed_today:
                v.expected.append((m.name, seed, "/".join(m.caught_by), f"{why}: {m.missed_today}"))
            else:
                v.missed.append((m.name, seed, why))
    return v


def matrix(members: list[Member], results: dict, seeds: list[int]) -> str:
    """Implementation x scenario. A cell: `ok` (full marks on every seed), or the points
    lost summed over the seeds (`-2`); `*` where the manifest expects it today; `.` not
    graded. Last column, the verdict: correct members `full` / `PENALISED` (`pen*`:
    only expected penalties); bugs `caught` / `MISSED` (`miss*`: expected today)."""
    from grader.protocol.battery import load_battery

    order = {s.name: k for k, s in enumerate(load_battery(BATTERY).scenarios)}
    scenarios = sorted({s for cells in results.values() for s in cells}, key=lambda s: (order.get(s, len(order)), s))
    v = judge(members, results, seeds)
    width = max([len(m.name) for m in members] + [10])
    short = [s.replace("reference-", "ref-") for s in scenarios]
    lines = ["  ".join(["member".ljust(width)] + short + ["verdict"])]
    for m in members:
        row = [m.name.ljust(width)]
        for s, label in zip(scenarios, short):
            cells = [results[(m.name, k)][s] for k in seeds if s in results.get((m.name, k), {})]
            lost = sum(c.max_score - c.score for c in cells)
            text = (
                "."
                if not cells
                else "ok"
                if all(c.full for c in cells)
                else (f"-{lost:g}" if lost else "fail") + ("*" if m.expects(s) else "")
            )
            row.append(text.ljust(len(label)))
        if m.kind == "correct":
            verdict = (
                "PENALISED"
                if any(x[0] == m.name for x in v.false_penalties)
                else "pen*"
                if any(x[0] == m.name for x in v.expected)
                else "full"
            )
        else:
            verdict = (
                "MISSED"
                if any(x[0] == m.name for x in v.missed)
                else "miss*"
                if any(x[0] == m.name for x in v.expected)
                else "caught"
            )
        row.append(verdict)
        lines.append("  ".join(row))
    return "\n".join(lines)


def load_results(path: str) -> dict[tuple[str, int], dict[str, Cell]]:
    """The gradings `--json` saved (a run stopped early leaves the ones that finished)."""
    results = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                results[(d["member"], d["seed"])] = {s: Cell(*c) for s, c in d["cells"].items()}
    return results


# ---- --smoke: each pair over a lossy link through the harness, no grader --------------

SMOKE_LINKS = {
    1: ("delay 5ms rate 10mbit", None, True, {}),
    2: ("delay 5ms loss 10% rate 10mbit", None, True, {"timeout": 40}),
    3: ("delay 10ms loss 10% reorder 10% 50% gap 5 rate 10mbit", None, False, {"timeout": 100, "window": 16}),
    4: ("delay 10ms loss 10% reorder 10% 50% gap 5 rate 10mbit", None, False, {"timeout": 100, "window": 16}),
}


def smoke(member: Member, backend: str, size: int, seed: int) -> list[tuple[int, bool, str]]:
    from harness import Link, Program, run_transfer
    from grader.protocol.battery import load_battery
    from grader.jail.build import prepare

    battery = load_battery(BATTERY)
    out = []
    with tempfile.TemporaryDirectory(prefix="rdt-smoke-") as tmp:
        folder = member.copy_to(os.path.join(tmp, "sub"))
        built = prepare(
            folder, sorted({p.name(r) for p in battery.programs.values() for r in ("sender", "receiver")}), None
        )
        for part, (fwd, rev, shared, params) in SMOKE_LINKS.items():
            programs = battery.programs[part]
            cmds = []
            for role in ("sender", "receiver"):
                spec = getattr(programs, role)
                name, _, rest = spec.partition(" ")
                argv = built.programs[name]
                if isinstance(argv, str):
                    out.append((part, False, argv))
                    break
                cmds.append(" ".join(argv) + " " + rest)
            else:
                r = run_transfer(
                    Program(cmds[0], output_format=programs.output_format),
                    Program(cmds[1]),
                    Link(fwd, rev, shared),
                    params=params,
                    size=size,
                    seed=seed,
                    backend=backend,
                )
                detail = (
                    f"{r.goodput_kBps or 0:.0f} KB/s, {r.retransmissions} retx, printed {r.printed}"
                    if r.ok
                    else r.error
                )
                out.append((part, r.ok, detail))
    return out


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench.calibrate", description=__doc__.split("\n\n")[0])
    p.add_argument("--assignment", default="comn", help="whose battery and corpus (default comn)")
    p.add_argument("--seeds", default="1,2,3", help="comma-separated seed numbers (default 1,2,3)")
    p.add_argument("--jobs", type=int, default=2, metavar="N", help="members graded at once (default 2)")
    p.add_argument("--subset", choices=["fast"], help="fast: the members and scenarios marked fast")
    p.add_argument("--only", action="append", metavar="NAME", help="only this member (repeatable)")
    p.add_argument("--backend", default="netns")
    p.add_argument("--no-sandbox", action="store_true", help="run the programs outside the jail")
    p.add_argument(
        "--allow-expected", action="store_true", help="exit 0 despite penalties (and misses) the manifest expects today"
    )
    p.add_argument("--smoke", action="store_true", help="run each member's own pairs over lossy links, grade nothing")
    p.add_argument("--size", type=int, default=200_000, help="--smoke: bytes per transfer")
    p.add_argument(
        "--json", metavar="FILE", help="also append every grading's cells to FILE as it finishes (JSON lines)"
    )
    p.add_argument("--from-json", metavar="FILE", help="grade nothing: the matrix of the gradings saved in FILE")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        print(f"error: --seeds must be comma-separated integers, not {args.seeds!r}", file=sys.stderr)
        return 2
    if not seeds or args.jobs < 1:
        print("error: give at least one seed and --jobs >= 1", file=sys.stderr)
        return 2
    global BATTERY
    BATTERY = args.assignment
    try:
        members = load_corpus(corpus_of(args.assignment))
    except (UsageError, OSError, tomllib.TOMLDecodeError, KeyError) as e:
        print(f"error: the corpus manifest: {e}", file=sys.stderr)
        return 2
    if args.only:
        unknown = set(args.only) - {m.name for m in members}
        if unknown:
            print(f"error: no corpus member named {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        members = [m for m in members if m.name in args.only]
    elif args.subset == "fast":
        members = [m for m in members if m.fast]
    if args.smoke and args.assignment != "comn":
        print("error: --smoke runs COMN's four parts; grade other assignments' corpora", file=sys.stderr)
        return 2
    if args.smoke:
        bad = 0
        for m in members:
            if m.kind != "correct":
                continue
            for part, ok, detail in smoke(m, args.backend, args.size, seeds[0]):
                bad += not ok
                print(f"{m.name:24} part {part}: {'ok  ' if ok else 'FAIL'} {detail}", flush=True)
        return 1 if bad else 0

    again = []

    def done(m, seed, r):
        alone = f", graded again alone: {', '.join(r['graded_again'])}" if r.get("graded_again") else ""
        again.extend(r.get("graded_again", []))
        print(
            f"  {m.name} seed {seed}: {r['score']:g}/{r['max_score']:g} ({r['execution_time']:.0f} s{alone})",
            file=sys.stderr,
            flush=True,
        )
        if args.json:
            with open(args.json, "a") as f:
                f.write(
                    json.dumps(
                        {
                            "member": m.name,
                            "seed": seed,
                            "cells": {
                                s["name"]: [
                                    s["score"],
                                    s["max_score"],
                                    s["reason"] or "",
                                    s["passed"] or bool(s.get("ungraded")),
                                ]
                                for s in r["scenarios"]
                            },
                        }
                    )
                    + "\n"
                )

    if args.from_json:
        results = load_results(args.from_json)
        seeds = sorted({k for _, k in results})
        from grader.protocol.battery import load_battery

        battery = load_battery(BATTERY)
        for m in members:  # a bug none of whose scenarios is in the battery: graded on nothing
            if m.kind == "bug" and not scenarios_for(m, battery, None):
                results.update({(m.name, k): {} for k in seeds})
        members = [m for m in members if any(name == m.name for name, _ in results)]
    else:
        results = grade_corpus(
            members, seeds, args.jobs, args.subset, args.backend, False if args.no_sandbox else None, done
        )
    print(matrix(members, results, seeds))
    v = judge(members, results, seeds)
    for name, seed, scen, why in v.expected:
        print(f"expected today: {name} seed {seed} {scen}: {why}")
    for name, seed, scen, why in v.false_penalties:
        print(f"FALSE PENALTY: {name} seed {seed} {scen}: {why}")
    for name, seed, why in v.missed:
        print(f"MISSED: {name} seed {seed}: {why}")
    failed = v.false_penalties or v.missed or (v.expected and not args.allow_expected)
    print(
        f"{sum(m.kind == 'correct' for m in members)} correct, {sum(m.kind == 'bug' for m in members)} bugs, "
        f"seeds {','.join(map(str, seeds))}: {len(v.false_penalties)} false penalties, {len(v.expected)} expected today, "
        f"{len(v.missed)} missed"
    )
    if again:
        print(f"{len(again)} scenarios graded again alone after the pool (disturbed, or failed beside others)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
