"""The no-progress rule (harness/monitor.py, run by harness/transfer.py): a run whose answers the link
withholds is waiting on the link, not stuck; a sender that repeats although answered,
or a receiver that no longer answers what reaches it, is.

The reference stop-and-wait pair (COMN Sender2/Receiver2), 4 KiB, RetryTimeout 100 ms,
local backend, a no-progress window of 2 s.
"""

from harness import Link, Program, run_transfer
from tests.support.runs import FIXTURES, REPO

COMN = REPO / "reference" / "comn"
SENDER = Program(f"python3 {COMN}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} 100", output_format="comn-sw")
RECEIVER = Program(f"python3 {COMN}/Receiver2.py {{listen_port}} {{output}}", env={"RDT_LINGER": "0.5"})


def test_a_run_whose_answers_are_all_lost_for_a_while_is_not_stopped():
    """Every ACK is lost for the first 4 s: the sender repeats packet 0 (only repeats
    enter the link) and the receiver re-acknowledges it into the void. The old rule
    (new forward payload or output growth) stopped this healthy run after 2 s."""
    res = run_transfer(
        SENDER,
        RECEIVER,
        Link("delay 5ms", "delay 5ms loss 100%"),
        size=4096,
        seed=1,
        backend="local",
        no_progress=2,
        schedule=[{"at_ms": 4000, "cmd": "change", "path": "p0", "direction": "reverse", "spec": "delay 5ms"}],
    )
    assert res.ok, res.error
    assert res.printed["retransmissions"] >= 30  # it did repeat for the 4 s


def test_a_sender_that_repeats_although_answered_is_stopped():
    """A sender deaf to the ACKs that reach it repeats one packet for ever."""
    deaf = Program(f"python3 {FIXTURES}/badprog.py repeat {{receiver_host}} {{receiver_port}}")
    res = run_transfer(deaf, RECEIVER, Link("delay 5ms"), size=4096, seed=1, backend="local", no_progress=2)
    assert not res.ok
    assert res.error.startswith(
        "stopped: no progress for 2 s (the sender only repeats packets it sent before, though "
    ), res.error
    assert res.process_time_s < 6


def test_a_receiver_that_stops_answering_is_stopped():
    """A byte-order mismatch, as between two students' programs: the little-endian
    receiver reads the big-endian sender's packet 1 as packet 256, outside its window,
    and never answers it; the sender repeats packet 1, and the link delivers it."""
    little = Program(RECEIVER.command, env={"RDT_LINGER": "0.5", "RDT_BYTE_ORDER": "little"})
    res = run_transfer(SENDER, little, Link("delay 5ms"), size=4096, seed=1, backend="local", no_progress=2)
    assert not res.ok
    assert res.error.startswith("stopped: no progress for 2 s (the sender only repeats packets it sent before); "), (
        res.error
    )
    assert res.process_time_s < 6
