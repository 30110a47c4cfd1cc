"""What `delivered` makes of how a run ended (grader/protocol/checks.py): the spec puts
termination on the sender, so a sender that ends on its own once its receiver has
gone, with the file whole, passes whatever its exit status; one still running at the
limit fails with a reason saying so; a sender that fails while its receiver is still
there fails as before. A wrap scenario's failure names the wrap."""

from harness.monitor import ErrorKind
from harness.transfer import ProgramResult, TransferResult

from grader.protocol.checks import delivered


def run(ok, verified, error, tx_exit, tx_timed_out, rx_exit, rx_stopped=False) -> TransferResult:
    kind, error = error if error else (None, None)
    return TransferResult(
        ok=ok,
        verified=verified,
        error=error,
        error_kind=kind,
        backend="netns",
        seed=7,
        size_bytes=4096,
        sender=ProgramResult(tx_exit, "", "", tx_timed_out),
        receiver=ProgramResult(rx_exit, "", "", False, rx_stopped),
    )


def test_a_sender_that_gives_up_once_its_receiver_has_gone_passes():
    gave_up = run(False, True, (ErrorKind.SENDER_FAILED, "sender failed (exit status 1: gave up)"), 1, False, 0)
    check = delivered([run(True, True, None, 0, False, 0, rx_stopped=True), gave_up])
    assert check.passed and "sender gave up in 1 run" in check.detail


def test_a_sender_still_running_after_its_receiver_left_fails_naming_termination():
    hung = run(
        False, True, (ErrorKind.TIME_LIMIT, "timed out after 40 s (the sender was still running; ...)"), -9, True, 0
    )
    check = delivered([hung])
    assert not check.passed and "never ended on its own" in check.detail


def test_a_sender_that_fails_beside_a_receiver_still_there_fails():
    # the harness stopped the receiver after the sender failed: a signal's status, not 0
    crashed = run(False, True, (ErrorKind.SENDER_FAILED, "sender failed (exit status 1)"), 1, False, -15)
    assert not delivered([crashed]).passed
    whole_missing = run(False, False, (ErrorKind.SENDER_FAILED, "sender failed (exit status 1)"), 1, False, 0)
    assert not delivered([whole_missing]).passed


def test_a_failure_across_the_wrap_names_it():
    check = delivered(
        [run(False, False, (ErrorKind.OUTPUT_DIFFERS, "output differs from input at byte 67108864"), 0, False, 0)],
        wraps=True,
    )
    assert not check.passed and "across the wrap" in check.detail and "65535" in check.detail
