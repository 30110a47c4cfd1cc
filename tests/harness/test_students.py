"""Student-like COMN programs (tests/fixtures/students) on the local and netns backends:
each gets the same verdict on both, and each failure's line names its cause.

Small files and short delays keep each run to a second or a few; the runs that must
stall use a short no-progress window (its derivation is tested in test_time_limits.py).
"""

import pytest

from harness import ErrorKind, Link, Program, run_transfer
from harness.procs import UsageError
from tests.support.runs import FIXTURES

STUDENTS = FIXTURES / "students"
BACKENDS = ["local", pytest.param("netns", marks=pytest.mark.netns)]
LOSSY = Link("delay 2ms loss 10% rate 10mbit", shared_queue=True)


def prog(name: str, args: str) -> Program:
    return Program(f"python3 {STUDENTS}/{name} {args}")


SEND = "{receiver_host} {receiver_port} {file}"
RECV = "{listen_port} {output}"


def run(sender, receiver, link=LOSSY, backend="local", **kw):
    kw.setdefault("size", 20_000)
    kw.setdefault("seed", 3)
    kw.setdefault("no_progress", 3)
    return run_transfer(sender, receiver, link, backend=backend, **kw)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "sender,receiver,bound",
    [
        (prog("Sender2.py", SEND + " 30"), prog("Receiver2.py", RECV), "UDP 127.0.0.1"),  # "localhost"
        (prog("Sender3.py", SEND + " 30 8"), prog("Receiver3.py", RECV), "UDP 127.0.0.1"),  # little-endian
        (prog("Sender4.py", SEND + " 30 8"), prog("Receiver4.py", RECV + " 8"), "UDP 127.0.0.1"),  # socket timeout
    ],
    ids=["sw-localhost", "gbn-little-endian-to-localhost", "sr-127.0.0.1"],
)
def test_loopback_bound_receivers_pass_on_every_backend(backend, sender, receiver, bound):
    res = run(sender, receiver, backend=backend)
    assert res.ok and res.verified, res.error
    assert res.startup["bound"].startswith(bound)
    # netns: the link's packets reach the loopback socket through the receiver's DNAT;
    # local: the engine relays to loopback anyway.
    assert res.endpoints["loopback_nat"] is (backend == "netns")
    # Every data packet crossed the engine (Sender3 sends to "localhost" whatever host
    # it is given: on netns the sender's own DNAT puts it on the link).
    assert res.link["forward"]["delivered"] >= 20


@pytest.mark.parametrize("backend", BACKENDS)
def test_receiver_that_quits_on_an_out_of_order_eof(backend):
    # 20 ms delay: the whole 20-packet window is in before any ACK; with seed 3 the third
    # packet (not the EOF) is lost, on both backends: the link draws by the payload.
    res = run(
        prog("Sender4.py", SEND + " 100 20"),
        prog("Receiver4EofQuits.py", RECV + " 20"),
        Link("delay 20ms loss 10% rate 10mbit", shared_queue=True),
        backend=backend,
    )
    assert not res.ok
    assert res.error.startswith(
        "receiver exited (exit 0) while the sender was still sending, "
        "with 2048 of 20000 bytes in its output; link: forward"
    ), res.error


@pytest.mark.parametrize("backend", BACKENDS)
def test_unpaced_burst_loses_its_eof_at_the_queue_and_the_wire_time_counts(backend):
    # 59 packets at once into a 1 Mbit/s link with a 20-packet queue: the tail of the
    # burst, EOF included, is dropped, so the part-1 receiver never ends.
    res = run(
        prog("Sender1.py", SEND),
        prog("Receiver1.py", RECV),
        Link("delay 2ms rate 1mbit limit 20"),
        backend=backend,
        size=60_000,
        receiver_grace=1.5,
    )
    fwd, rev = res.link["forward"], res.link["reverse"]
    assert res.error.startswith("receiver did not exit within 1.5 s after the sender finished"), res.error
    assert f"{fwd['queue_drops']} queue drops, which took the end of the file; reverse 0 in" in res.error
    assert fwd["queue_drops"] >= 30
    # The wire time runs from the first packet in to the last one out, though the sender
    # exited long before (the COMN Sender1 leaves once its burst is sent).
    assert fwd["last_fresh_out_ns"] == fwd["last_out_ns"]  # a burst sent once: every delivery is fresh
    assert res.wire_time_s == pytest.approx((fwd["last_out_ns"] - fwd["first_in_ns"]) / 1e9, abs=1e-6)
    # at least the delivered packets' serialisation at 1 Mbit/s. (Not against the sender's
    # life, start to exit, which a loaded machine stretches far beyond the serialisation.)
    assert res.wire_time_s > (fwd["delivered"] - 1) * 1027 * 8 / 1e6
    assert rev["packets_in"] == 0 and res.goodput_kBps is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_resends_after_the_receiver_left_are_not_in_the_wire_time(backend):
    # The receiver leaves without ACKing the last message; the sender resends it every
    # 30 ms, 20 times, then gives up: both valid. The data had all arrived before those
    # resends, so the wire time (and the goodput) ends where it arrived, and they are
    # not counted as retransmissions.
    res = run(
        prog("Sender2.py", SEND + " 30"),
        prog("Receiver2Leaves.py", RECV),
        Link("delay 2ms rate 10mbit"),
        backend=backend,
    )
    fwd = res.link["forward"]
    assert res.ok, res.error
    # the last message's 20 resends, all after it arrived; resends before it are the
    # retransmissions (none on a quiet machine, but an ACK held past 30 ms on a loaded
    # one makes one)
    assert fwd["repeats"] - fwd["repeats_to_last_fresh"] == 20
    assert res.retransmissions == fwd["repeats_to_last_fresh"]
    assert res.wire_time_s == pytest.approx((fwd["last_fresh_out_ns"] - fwd["first_in_ns"]) / 1e9, abs=1e-6)
    assert (fwd["last_out_ns"] - fwd["last_fresh_out_ns"]) / 1e9 > 19 * 0.030  # the 20 resends' span: not counted
    assert res.goodput_kBps == pytest.approx(20_000 / 1024 / res.wire_time_s)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sender_that_never_ends_is_stopped_for_no_progress(backend):
    res = run(prog("Sender2Forever.py", SEND + " 30"), prog("Receiver2.py", RECV), backend=backend)
    assert res.error.startswith("stopped: no progress for 3 s (the sender has sent nothing for"), res.error
    assert "had exited with 20000 of 20000 bytes in its output" in res.error
    assert res.sender.exit_code == -15 and res.wire_time_s > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_sender_with_a_timing_bug_is_stopped_for_no_progress(backend):
    # RetryTimeout 30 given to settimeout as seconds: the first loss stalls it for 30 s.
    res = run(prog("Sender2SecondsBug.py", SEND + " 30"), prog("Receiver2.py", RECV), backend=backend)
    assert res.error.startswith("stopped: no progress for 3 s (the sender has sent nothing for"), res.error
    assert " is running with " in res.error and res.startup["no_progress_s"] == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_receiver_bound_to_ipv6_loopback_fails_at_once(backend):
    res = run(prog("Sender2.py", SEND + " 30"), prog("Receiver2Ipv6.py", RECV), backend=backend)
    assert res.error.startswith("receiver bound UDP [::1]:"), res.error
    assert "where the link cannot deliver" in res.error and res.link is None
    assert res.error_kind is ErrorKind.UNREACHABLE
    if backend == "netns":
        assert "IPv6 loopback is reachable only from the host's own lo" in res.error


@pytest.mark.parametrize("backend", BACKENDS)
def test_receiver_bound_to_v4_mapped_localhost_passes(backend):
    # Java's DatagramSocket(port, localhost) binds a dual-stack socket to ::ffff:127.0.0.1
    res = run(prog("Sender2.py", SEND + " 30"), prog("Receiver2V4Mapped.py", RECV), backend=backend)
    assert res.ok, res.error
    assert "::ffff:127.0.0.1" in res.startup["bound"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_receiver_bound_to_another_port_names_it(backend):
    res = run(prog("Sender2.py", SEND + " 30"), prog("Receiver2FixedPort.py", RECV), backend=backend, bind_timeout=1.5)
    assert res.error.startswith("receiver did not bind port "), res.error
    assert res.error.endswith("({listen_port}) within 1.5 s; it bound UDP 127.0.0.1:12000 instead")


def test_receiver_given_the_senders_port_is_told_which_placeholder_to_bind():
    with pytest.raises(
        UsageError,
        match=r"uses \{receiver_port\}, the port the sender sends to; "
        r"a receiver must bind \{listen_port\}",
    ):
        run(prog("Sender2.py", SEND + " 30"), prog("Receiver2.py", "{receiver_port} {output}"))


@pytest.mark.netns
def test_without_the_loopback_nat_the_netns_failure_comes_back(monkeypatch):
    """The cause of 'passes on local, fails on netns': a receiver bound to
    127.0.0.1 in its own namespace gets nothing from the link, and the SR receiver's
    own socket timeout ends it. With the NAT step patched out, that failure returns,
    and the report says where the receiver bound and that nothing was delivered."""
    monkeypatch.setattr("harness.backends.netns.deliver_to_loopback", lambda *a: None)
    res = run(prog("Sender4.py", SEND + " 30 8"), prog("Receiver4.py", RECV + " 8"), backend="netns")
    assert not res.ok and res.receiver.stderr_tail.strip().endswith("TimeoutError: timed out")
    assert res.error.startswith(
        "receiver exited (exit 1: TimeoutError: timed out) while the sender was still sending, "
        "and the receiver wrote nothing to its output file"
    ), res.error
    assert res.startup["bound"] == "UDP 127.0.0.1:5001"
