"""Every assignment graded on its programs: the batteries of tcp-like, multihoming,
gbn-vs-tcp and stop-and-wait-crc (assignments/<name>/battery.toml), each through the
real grader in the jail. The reference at full marks on its whole battery; each
assignment's calibration set (tests/fixtures/batteries/<name>/: correct programs written
apart from the reference, the way students write them) at full marks on the public and
interop scenarios (the whole matrix on three seeds is `python -m bench.calibrate
--assignment NAME`, in `make bench`); each planted bug losing points in the scenario that
names its fault; a hostile sender scoring 0 where it runs; `rdtlab check` on the
starter folder saying what is not written yet."""

from __future__ import annotations

import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import assignments
from grader.protocol.battery import batteries, load_battery
from grader.protocol.planted import plant, reference_submission
from harness.engine import REPO

from tests.support import TESTS
from tests.support.grading import grade, lost_points, rdtlab, verdicts

CORPORA = TESTS / "fixtures" / "batteries"
NEW = ["gbn-vs-tcp", "multihoming", "stop-and-wait-crc", "tcp-like"]


def programs_of(name: str) -> tuple[str, ...]:
    """The battery's program names (Sender, Receiver3, ...)."""
    b = load_battery(name)
    return tuple(sorted({p.name(role) for p in b.programs.values() for role in ("sender", "receiver")}))


def members(name: str) -> list[str]:
    with open(CORPORA / name / "corpus.toml", "rb") as f:
        return sorted(tomllib.load(f)["member"])


def bugs_of(name: str) -> list[dict]:
    """The planted bugs ([bug.NAME] tables, as the COMN corpus's), each with its name."""
    with open(CORPORA / name / "bugs.toml", "rb") as f:
        return [{**d, "name": n} for n, d in tomllib.load(f)["bug"].items()]


def quick(name: str) -> list[str]:
    """A battery's public scenarios and its interop with the reference both ways."""
    return [s.name for s in load_battery(name).scenarios if s.public or s.meet != "student"]


def test_every_assignment_has_a_battery_found_through_the_registry():
    assert set(batteries()) == set(assignments.names())
    for name in NEW:
        b = load_battery(name)
        assert b.name == name and b.scenarios and all(s.what for s in b.scenarios)
        assert any(s.public for s in b.scenarios), name  # `rdtlab check` has something to run
        assert {s.meet for s in b.scenarios} == {"student", "sender", "receiver"}, name  # graded apart
        for program in programs_of(name):
            assert (Path(REPO) / b.reference / f"{program}.py").is_file(), (name, program)
        assert len(members(name)) >= 3 and len([b for b in bugs_of(name) if not b.get("missed_today")]) >= 5, name


@pytest.mark.netns
@pytest.mark.parametrize("name", NEW)
def test_the_reference_scores_full_marks_on_its_whole_battery(name, tmp_path):
    b = load_battery(name)
    folder = reference_submission(str(tmp_path / "ref"), programs_of(name), package=Path(b.reference).name)
    result = grade(folder, battery=name)
    assert result["sandbox"] == "bubblewrap" and len(result["scenarios"]) == len(b.scenarios)
    assert lost_points(verdicts(result)) == {}


def first_catch(path, name: str, scenarios: list[str]) -> dict:
    """`path` graded on `scenarios` one at a time until one fails it (a grade: not one the
    machine left ungraded): whether any of them catches the bug, as grading them all
    together says, without the time of the rest (a stalled program costs its limit)."""
    graded: list[dict] = []
    for scenario in scenarios:
        graded += grade(path, battery=name, names=[scenario])["scenarios"]
        if not graded[-1]["passed"] and not graded[-1].get("ungraded"):
            break
    return {"scenarios": graded}


@pytest.mark.netns
@pytest.mark.parametrize("name", NEW)
def test_the_calibration_set_keeps_full_marks_and_every_planted_bug_is_caught(name, tmp_path):
    """Correct members, written apart and each choosing its own structure, timers and (where
    the assignment leaves it open) byte order, score full marks; each bug planted in one of
    them loses points (or fails, beyond the spec) in a scenario that names its fault
    (`first_catch`; `python -m bench.calibrate` grades every such scenario, on every seed)."""
    bugs = [b for b in bugs_of(name) if not b.get("missed_today")]  # those say why the battery misses them
    assert len(bugs) >= 5, name
    planted = [plant(str(CORPORA / name / bug["from"]), bug, str(tmp_path / bug["name"])) for bug in bugs]
    with ThreadPoolExecutor(2) as pool:  # one queue: no worker waits for the members' last to start the bugs
        members_graded = [
            pool.submit(grade, CORPORA / name / m, battery=name, names=quick(name)) for m in members(name)
        ]
        bugs_graded = [pool.submit(first_catch, p, name, b["caught_by"]) for p, b in zip(planted, bugs)]
        good, caught = [f.result() for f in members_graded], [f.result() for f in bugs_graded]
    for member, result in zip(members(name), good):
        assert lost_points(verdicts(result)) == {}, member
    for bug, result in zip(bugs, caught):
        failed = [s for s in result["scenarios"] if not s["passed"] and not s.get("ungraded")]
        print(f"{bug['name']}: " + "; ".join(f"{s['name']}: {s['reason']}" for s in result["scenarios"]))
        assert failed, (bug["name"], [s["reason"] for s in result["scenarios"]])
        assert all(s["reason"] and "\n" not in s["reason"] for s in failed)


FORK_BOMB = TESTS / "fixtures" / "submissions" / "hostile" / "fork-bomb" / "Sender2.py"


@pytest.mark.netns
@pytest.mark.parametrize("name", NEW)
def test_a_hostile_sender_scores_zero_where_it_runs_and_the_receiver_keeps_its_marks(name, tmp_path):
    b = load_battery(name)
    folder = Path(reference_submission(str(tmp_path / "bomb"), programs_of(name), package=Path(b.reference).name))
    sender = b.programs[min(b.programs)].name("sender")
    (folder / f"{sender}.py").write_text(FORK_BOMB.read_text())
    receiver_alone = next(s.name for s in b.scenarios if s.meet == "receiver")
    sender_alone = next(s.name for s in b.scenarios if s.meet == "sender" and s.part == min(b.programs))
    result = grade(folder, battery=name, names=[sender_alone, receiver_alone])
    by = {s["name"]: s for s in result["scenarios"]}
    why = by[sender_alone]["reason"]
    assert by[sender_alone]["score"] == 0 and ("no progress" in why or "timed out" in why) and "\n" not in why, why
    assert lost_points([(receiver_alone, by[receiver_alone]["passed"], by[receiver_alone]["reason"])]) == {}


@pytest.mark.netns
@pytest.mark.parametrize("name", NEW)
def test_check_on_the_starter_says_what_is_not_written_yet(name):
    entry = assignments.get(name)
    todo = entry and __import__(entry.package, fromlist=["STARTER_TODO"]).STARTER_TODO[0]
    done = rdtlab(
        "check", "--assignment", name, "--backend", "netns", Path(REPO) / "assignments" / "source" / name, timeout=600
    )
    assert done.returncode == 1, done.stderr  # not full marks, and no crash
    assert "Traceback" not in done.stdout + done.stderr
    assert todo in done.stdout, done.stdout


@pytest.mark.parametrize("name", NEW)
def test_the_gradescope_package_grades_the_reference_at_full_marks(name, tmp_path):
    """`rdtlab grade --gradescope-package` for the assignment, packaged with its public
    scenarios and interop only (the whole battery is graded in the jail above); its
    run_autograder in a scratch root laid out as Gradescope's, on the local backend as there."""
    import jsonschema
    from grader.export_gradescope_package import unpack_package
    from tests.support.grading import SCHEMA, gradescope_verdicts, run_autograder

    package = tmp_path / f"{name}.zip"
    scenarios = (arg for scenario in quick(name) for arg in ("--scenario", scenario))
    done = rdtlab("grade", "--gradescope-package", package, "--assignment", name, *scenarios, timeout=60)
    assert done.returncode == 0, done.stderr
    root = tmp_path / "autograder"
    unpack_package(str(package), str(root / "source"))
    b = load_battery(name)
    reference_submission(str(root / "submission"), programs_of(name), package=Path(b.reference).name)
    results = run_autograder(root)
    jsonschema.validate(results, SCHEMA)
    assert sorted(t["name"].split(": ", 1)[1] for t in results["tests"]) == sorted(quick(name))
    assert results["extra_data"]["battery"] == name
    assert lost_points(gradescope_verdicts(results)) == {}
