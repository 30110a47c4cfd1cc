"""The COMN programs' conventions (reference/comn/conventions.py): every reading of the
spec round-trips through the wire format, a receiver takes any non-zero EOF byte, bad
settings are one line; and the programs speak them over a lossy link."""

import itertools
import sys

import pytest

from harness import Link, Program, run_transfer
from reference.comn.conventions import ConventionError, ConventionFormat, Conventions
from reference.core.api import Ack, Data
from reference.wire import WireError

ALL = [
    Conventions(o, n, f, e, a)
    for o, n, f, e, a in itertools.product(("big", "little"), ("count", "alt"), (0, 1), (1, 255), ("last", "next"))
]


@pytest.mark.parametrize("conv", ALL, ids=lambda c: c.describe())
def test_each_reading_round_trips_through_the_wire(conv):
    fmt = ConventionFormat(conv)
    highest = 0
    for seq in range(0, 70000, 997) if conv.numbering == "count" else range(6):
        wire = fmt.encode_data(Data(seq, b"abc", seq % 2 == 1))
        assert wire[2] == (conv.eof_value if seq % 2 else 0)
        got = fmt.decode_data(wire, max(0, seq - 1) if conv.numbering == "alt" else seq)
        assert (got.seq, got.payload, got.eof) == (seq, b"abc", seq % 2 == 1)
        assert fmt.decode_ack(fmt.encode_ack(Ack(seq)), seq).seq == seq
        highest = seq
    first = fmt.encode_data(Data(0, b"", False))
    assert first[:2] == conv.first_seq.to_bytes(2, conv.byte_order)
    ack = fmt.encode_ack(Ack(0))
    assert int.from_bytes(ack, conv.byte_order) == (conv.first_seq + (conv.ack == "next")) % (
        2 if conv.numbering == "alt" else 65536
    )
    assert highest


def test_any_non_zero_end_of_file_byte_ends_the_file_and_alternating_numbers_stay_bits():
    fmt = ConventionFormat(Conventions(numbering="alt"))
    for flag in (1, 2, 128, 255):
        assert fmt.decode_data(bytes([0, 0, flag]) + b"x").eof
    with pytest.raises(WireError, match="not a alt number"):
        fmt.decode_data(bytes([0, 2, 0]))


@pytest.mark.parametrize(
    "env, words",
    [
        ({"RDT_NUMBERING": "gray"}, "RDT_NUMBERING: numbering must be one of"),
        ({"RDT_EOF_VALUE": "0"}, "RDT_EOF_VALUE: eof_value must be a byte"),
        ({"RDT_FIRST_SEQ": "one"}, "RDT_FIRST_SEQ must be a whole number"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(env, words):
    with pytest.raises(ConventionError) as e:
        Conventions.from_env(env)
    assert words in str(e.value) and "\n" not in str(e.value)
    assert Conventions.from_env({}) == Conventions()
    assert Conventions(byte_order="little", eof_value=255).env() == {"RDT_BYTE_ORDER": "little", "RDT_EOF_VALUE": "255"}


REF = "reference/comn"


@pytest.mark.parametrize(
    "part, env",
    [
        (2, {"RDT_NUMBERING": "alt", "RDT_BYTE_ORDER": "little", "RDT_EOF_VALUE": "255", "RDT_ACK": "next"}),
        (3, {"RDT_FIRST_SEQ": "1", "RDT_ACK": "next"}),
    ],
)
def test_the_programs_speak_them_over_a_lossy_link(part, env):
    args = {2: ("40", ""), 3: ("100 8", "")}[part]
    env = {**env, "RDT_LINGER": "0.3"}
    result = run_transfer(
        Program(
            f"{sys.executable} {REF}/Sender{part}.py {{receiver_host}} {{receiver_port}} {{file}} {args[0]}", env=env
        ),
        Program(f"{sys.executable} {REF}/Receiver{part}.py {{listen_port}} {{output}}", env=env),
        Link("delay 2ms loss 10%", shared_queue=False),
        size=30000,
        seed=5,
        backend="local",
        time_limit=30,
    )
    assert result.ok, result.error


def test_a_receiver_that_leaves_unacked_leaves_its_sender_to_give_up_with_the_file_whole():
    env = {"RDT_ENDING": "leave-unacked"}
    result = run_transfer(
        Program(f"{sys.executable} {REF}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} 20"),
        Program(f"{sys.executable} {REF}/Receiver2.py {{listen_port}} {{output}}", env=env),
        Link("delay 1ms", shared_queue=False),
        size=3000,
        seed=1,
        backend="local",
        time_limit=30,
        no_progress=30,
    )
    assert result.verified and result.receiver.exit_code == 0 and not result.receiver.stopped_when_done
    assert (
        result.sender.exit_code == 1
        and "gave up" in result.sender.stderr_tail
        or "no acknowledgement" in result.sender.stderr_tail
    )
