"""The calibration corpus (tests/fixtures/corpus): correct COMN
implementations written the ways students write them must get full marks, planted
bugs must lose points in the scenario that names their fault. Here the fast subset
(the members and bugs marked `fast` in the manifests, one seed, the scenarios of
bench.calibrate.FAST_SCENARIOS), graded side by side by the real grader in the jail;
`make bench` runs the whole matrix on three seeds (python -m bench.calibrate).

A member the manifest says the grader may still penalise (`expected`, none today) is
xfail, not strict."""

import pytest

from grader.collect import HEADER
from bench.calibrate import FAST_SCENARIOS, Cell, Member, judge, load_corpus, main, matrix, grade_corpus

from tests.support.grading import lost_points

pytestmark = pytest.mark.netns
MEMBERS = load_corpus()
FAST = [m for m in MEMBERS if m.fast]
SEED = 1


def _mark(m: Member):
    why = sorted({m.expects(s) for s in FAST_SCENARIOS if m.expects(s)})
    return pytest.param(m, id=m.name, marks=[pytest.mark.xfail(strict=False, reason="; ".join(why))] if why else [])


@pytest.fixture(scope="module")
def graded():
    return grade_corpus(FAST, [SEED], jobs=2, subset="fast", backend="netns")


def test_the_corpus_covers_what_the_spec_leaves_open():
    correct = [m for m in MEMBERS if m.kind == "correct"]
    seen = lambda key: {str(m.conventions.get(key)) for m in correct}
    assert len(correct) >= 20 and sum(m.kind == "bug" for m in MEMBERS) >= 10
    assert {"alternating", "counting"} <= seen("p2")
    assert {"0", "1"} <= seen("first") and {"1", "255"} <= seen("eof")
    assert {"last", "next"} <= seen("gbn_ack") and {"big", "little"} <= seen("order")
    assert {"localhost", "", "0.0.0.0"} <= seen("bind")
    assert {"java", "c"} <= seen("language")
    for m in correct:
        for src in m.path.rglob("*"):
            if src.suffix in (".py", ".java", ".c", ".h", ".go"):
                first = src.read_text().splitlines()[0]
                matric = HEADER.match(first)
                assert matric and matric.group(2).startswith("s2"), (m.name, src.name, first)


def test_the_fast_subset_has_members_and_bugs_of_different_styles():
    assert len({m.conventions.get("timers") for m in FAST if m.kind == "correct"}) >= 3
    assert sum(m.kind == "bug" for m in FAST) >= 3


@pytest.mark.parametrize("member", [_mark(m) for m in FAST if m.kind == "correct"])
def test_a_correct_implementation_gets_full_marks(graded, member):
    cells = graded[(member.name, SEED)]
    assert cells, member.name
    assert lost_points((s, c.full, c.reason) for s, c in cells.items()) == {}


@pytest.mark.parametrize("bug", [pytest.param(m, id=m.name) for m in FAST if m.kind == "bug"])
def test_a_planted_bug_loses_points_where_its_fault_is_named(graded, bug):
    cells = graded[(bug.name, SEED)]
    assert cells, f"{bug.name}: none of {bug.caught_by} is in the battery"
    assert any(not c.full for c in cells.values()), {s: (c.score, c.max_score) for s, c in cells.items()}
    for c in cells.values():
        if not c.full:
            assert c.reason and "\n" not in c.reason


def test_the_verdicts_and_the_matrix():
    """judge/matrix on made-up cells: a false penalty, an expected one, a caught and a
    missed bug, and a bug no scenario of today's battery can catch."""
    ok, lost = Cell(2, 2, ""), Cell(0, 2, "delivered: output differs")
    good = Member("good", None, "correct")
    conv = Member("conv", None, "correct", expected={"p2-reference-sender": "alternating bit"})
    caught = Member("caught", None, "bug", caught_by=["p2-ack-loss", "p2-duplication"])
    missed = Member("missed", None, "bug", caught_by=["p2-eof-lost"])
    later = Member("later", None, "bug", caught_by=["p4-wrap-reference-sender"], missed_today="needs conv")
    results = {
        ("good", 1): {"p2-clean": ok, "p2-reference-sender": lost},
        ("conv", 1): {"p2-clean": ok, "p2-reference-sender": lost},
        ("caught", 1): {"p2-ack-loss": ok, "p2-duplication": lost},
        ("missed", 1): {"p2-eof-lost": ok},
        ("later", 1): {},
    }
    members = [good, conv, caught, missed, later]
    v = judge(members, results, [1])
    assert [(n, s) for n, _, s, _ in v.false_penalties] == [("good", "p2-reference-sender")]
    assert [n for n, *_ in v.expected] == ["conv", "later"]
    assert [n for n, *_ in v.missed] == ["missed"]
    rows = {line.split()[0]: line.split() for line in matrix(members, results, [1]).splitlines()}
    assert rows["good"][-1] == "PENALISED" and rows["conv"][-1] == "pen*" and "-2*" in rows["conv"]
    assert rows["caught"][-1] == "caught" and rows["missed"][-1] == "MISSED" and rows["later"][-1] == "miss*"


@pytest.mark.parametrize(
    "argv, message", [(["--seeds", "1,x"], "--seeds"), (["--only", "nobody"], "nobody"), (["--jobs", "0"], "--jobs")]
)
def test_bad_usage_is_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
