"""The conventions probe (grader/protocol/conventions.py): what the wire shows, read for every
combination at once; and student-style programs (tests/fixtures/conventions/), each
speaking one or two readings of the spec other than the reference's defaults, graded
at full marks where they meet the reference, the conventions said in the result."""

import itertools
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.protocol.battery import parse_battery
from grader.protocol.conventions import _read_wire, _space
from harness.plots.capture import Copy
from harness.procs import UsageError
from reference.comn.conventions import ConventionFormat, Conventions
from reference.core.api import Ack, Data

from tests.support.grading import grade, lost_points, verdicts

CONV = Path(__file__).resolve().parents[1] / "fixtures" / "conventions"


def wire(conv: Conventions, messages: int = 3, acks: bool = True) -> list[Copy]:
    """What a pair speaking `conv` puts on a clean link: data 0, ACK, data 1, ACK, ..."""
    fmt = ConventionFormat(conv)
    copies, t = [], 0.0
    for k in range(messages):
        data = fmt.encode_data(Data(k, b"x" * 40, k == messages - 1))
        copies.append(Copy("forward", 0, data[:32], t, t + 0.001, "delivered"))
        if acks:
            copies.append(Copy("reverse", 0, fmt.encode_ack(Ack(k)), t + 0.001, t + 0.002, "delivered"))
        t += 0.01
    return copies


SPACE = [
    Conventions(o, n, f, e, a)
    for o, n, f, e, a in itertools.product(("big", "little"), ("count", "alt"), (0, 1), (1, 255), ("last", "next"))
]


@pytest.mark.parametrize("conv", SPACE, ids=lambda c: "-".join(map(str, c)))
def test_one_run_of_a_pair_tells_every_convention_at_once(conv):
    kept, eof, why = _read_wire(wire(conv), _space(alternating=True, acks=True), student_acks=True)
    assert kept == [Conventions(conv.byte_order, conv.numbering, conv.first_seq, 1, conv.ack)], why
    assert eof == conv.eof_value


def test_a_sender_stuck_on_its_first_message_leaves_the_rest_to_the_tries():
    conv = Conventions(numbering="alt")
    kept, eof, why = _read_wire(wire(conv, messages=1), _space(True, True), student_acks=False)
    assert eof is None and "not enough to tell" in why
    assert conv in kept and len(kept) > 1


def test_a_battery_fixes_a_convention_and_rejects_a_bad_one():
    base = {
        "programs": {"2": {"sender": "Sender2 x", "receiver": "Receiver2 y"}},
        "scenario": [{"name": "a", "part": 2}],
    }
    assert parse_battery({**base, "conventions": {"byte_order": "big"}}).conventions == {"byte_order": "big"}
    with pytest.raises(UsageError, match=r"\[conventions\].*eof_value"):
        parse_battery({**base, "conventions": {"eof_value": 0}})
    with pytest.raises(UsageError, match="unknown convention"):
        parse_battery({**base, "conventions": {"endianness": "big"}})


def variant(tmp_path, name: str, edits: dict) -> Path:
    """A fixture with constants changed as the student's own choice would."""
    dest = shutil.copytree(CONV / name, tmp_path / f"{name}-{len(list(tmp_path.iterdir()))}")
    applied = set()
    for path in dest.glob("*.py"):
        text = path.read_text()
        for old, new in edits.items():
            if old in text:
                applied.add(old)
                text = text.replace(old, new)
        path.write_text(text)
    assert applied == set(edits), f"{name}: edits not found: {set(edits) - applied}"
    return dest


P2 = ["p2-reference-receiver", "p2-reference-sender"]
P3 = ["p3-reference-receiver", "p3-reference-sender"]
CASES = [  # fixture, edits, scenarios, what must be detected
    ("rdt30", {}, P2, {"numbering": "alt"}),
    ("rdt30", {'ORDER = "!"': 'ORDER = "<"'}, P2, {"numbering": "alt", "byte_order": "little"}),
    ("rdt30", {"FIRST_BIT = 0": "FIRST_BIT = 1"}, P2, {"numbering": "alt", "first_seq": 1}),
    ("eof255", {"(k + 1) % 65536": "k % 65536", "want = 1": "want = 0"}, P2, {"eof_value": 255}),
    (
        "eof255",
        {'b"\\xff" if last': 'b"\\x01" if last', "msg[2] == 255": "msg[2] == 1"},
        P2,
        {"eof_value": 1, "first_seq": 1},
    ),
    ("eof255", {}, P2, {"eof_value": 255, "first_seq": 1}),
    ("eof255", {"LITTLE = False": "LITTLE = True"}, P2, {"eof_value": 255, "first_seq": 1, "byte_order": "little"}),
    ("gbn-next", {}, P3, {"ack": "next"}),
    ("gbn-next", {'">HB"': '"<HB"', '">H"': '"<H"'}, P3, {"ack": "next", "byte_order": "little"}),
]


@pytest.mark.netns
def test_student_style_programs_of_each_convention_get_full_marks_against_the_reference(tmp_path):
    folders = [variant(tmp_path, name, edits) for name, edits, _, _ in CASES]
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda fc: grade(fc[0], battery="comn", names=fc[1][2]), zip(folders, CASES)))
    for (name, edits, _, want), result in zip(CASES, results):
        part = str(result["scenarios"][0]["part"])
        found = result["conventions"][part]
        got = {k: found[k] for k in want}
        assert got == want, (name, edits, found["why"])
        assert found["how"] == "wire", (name, edits, found["why"])
        assert lost_points(verdicts(result)) == {}, (name, edits)


@pytest.mark.netns
@pytest.mark.parametrize("machine", ["as it is", "late on every run"])
def test_a_departure_from_a_fixed_convention_fails_the_interop_with_a_reason_naming_it(tmp_path, monkeypatch, machine):
    """The departure is seen on the wire, so it fails its scenarios at the first try
    whatever the machine did to the runs: never "not graded", even where a host that
    steals CPU time makes every try late."""
    from grader import disturbance

    if machine != "as it is":
        monkeypatch.setattr(
            disturbance,
            "why",
            lambda run: (
                None
                if run is None
                else "the engine sent packets up to "
                "3.2 ms late (p99 lag > 1 ms): the machine was busy, timings are disturbed"
            ),
        )
    battery = tmp_path / "fixed.toml"
    text = (Path(__file__).resolve().parents[2] / "assignments" / "comn" / "battery.toml").read_text()
    battery.write_text(text.replace("[defaults]", '[conventions]\nnumbering = "count"\n\n[defaults]', 1))
    result = grade(CONV / "rdt30", battery=str(battery), names=P2, out=tmp_path / "out")
    assert result["conventions"]["2"]["departures"]
    for s in result["scenarios"]:
        assert s["score"] == 0 and s["reason"].startswith("conventions: the battery fixes the numbering as count")
        assert not s.get("retried") and not s.get("ungraded"), s
    md = (tmp_path / "out" / "rdt30" / "feedback.md").read_text()
    assert "## Conventions" in md and "the battery fixes the numbering as count, your programs use alt" in md


@pytest.mark.netns
def test_a_sender_without_its_receiver_is_probed_by_trying_what_the_wire_left_open(tmp_path):
    """Only a Sender3 whose ACKs name the next message: the wire shows its numbers and
    EOF byte; the ACK meaning is found by trying it against the reference receiver."""
    folder = variant(tmp_path, "gbn-next", {})
    (folder / "Receiver3.py").unlink()
    result = grade(folder, battery="comn", names=["p3-reference-receiver"])
    found = result["conventions"]["3"]
    assert (found["how"], found["ack"]) == ("tried", "next"), found["why"]
    assert "worked with" in found["why"] and lost_points(verdicts(result)) == {}


def test_a_fixed_convention_wins_and_a_departure_is_one_line_naming_it():
    """Only a departure that was seen counts: nothing seen (the default) is no departure."""
    from grader.protocol.conventions import Detected, _against_fixed

    found = _against_fixed(Detected(Conventions(byte_order="little"), "wire", "seen"), {"byte_order": "big"})
    assert found.conventions.byte_order == "big"
    assert found.departures == ["the battery fixes the byte order as big, your programs use little"]
    assert _against_fixed(Detected(Conventions(), "default", "nothing"), {"byte_order": "little"}).departures == []
