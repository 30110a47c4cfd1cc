"""run_transfer on the local backend: real programs, a real engine, bad input."""

import os
import signal
import threading
import time

import pytest

from harness import BackendUnavailable, ErrorKind, Link, Program, SpecError, UsageError, run_transfer
from tests.support.runs import FIXTURES, REPO, bad, interrupted_run, sw_receiver, sw_sender

LOSSY = Link("delay 2ms loss 10%")
TALK = bad("talk", "1")  # a "sender" that exits at once


def test_stop_and_wait_over_a_lossy_link_is_verified_and_measured_from_the_wire():
    res = run_transfer(sw_sender(), sw_receiver(), LOSSY, size=60_000, seed=3, backend="local")
    assert res.ok and res.verified and res.error is None, res.error
    chunks = -(-60_000 // 1024)
    # Every timeout of this sender resends once: the wire's repeats are its retransmissions.
    assert res.retransmissions == res.printed["retransmissions"] > 0
    assert res.packets["forward"] == chunks + res.retransmissions
    assert res.link["forward"]["lost"] > 0 and res.link["reverse"]["lost"] > 0
    assert 0 < res.wire_time_s <= res.process_time_s
    assert res.goodput_kBps == pytest.approx(60_000 / 1024 / res.wire_time_s)
    assert res.sender.exit_code == 0 and res.seed == 3 and res.backend == "local"


def test_same_seed_same_link_decisions():
    # A timeout far above the 4 ms round trip: a resend the scheduler caused (a program held
    # off the CPU past its timer) would move every later draw, and is not the seed's doing.
    a, b = (
        run_transfer(sw_sender(timeout_ms=250), sw_receiver(), LOSSY, size=30_000, seed=11, backend="local")
        for _ in range(2)
    )
    assert a.ok and b.ok
    for d in ("forward", "reverse"):
        assert a.link[d]["lost"] == b.link[d]["lost"]
    assert a.retransmissions == b.retransmissions


def test_a_made_up_throughput_does_not_change_the_measured_goodput():
    res = run_transfer(sw_sender(extra="--lie"), sw_receiver(), Link("delay 5ms"), size=20_000, seed=1, backend="local")
    assert res.ok and res.printed["throughput_kBps"] == 99999.0
    # 20 messages, each a 10 ms round trip at least: no more than 20000/1024/0.2 = 98 KB/s.
    assert res.goodput_kBps < 100


def test_ipv6():
    res = run_transfer(sw_sender(), sw_receiver(), Link("delay 1ms"), size=10_000, seed=1, backend="local", ipv6=True)
    assert res.ok, res.error
    assert res.endpoints["targets"][0].startswith("::1:")


@pytest.mark.skipif(not (REPO / "reference/comn/Sender2.py").exists(), reason="reference COMN programs not there")
def test_reference_comn_stop_and_wait_over_the_comn_link():
    ref = REPO / "reference" / "comn"
    res = run_transfer(
        Program(
            f"python3 {ref}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} {{timeout}}",
            output_format="comn-sw",
        ),
        Program(f"python3 {ref}/Receiver2.py {{listen_port}} {{output}}"),
        Link("delay 5ms loss 5% rate 10mbit", shared_queue=True),
        params={"timeout": 40},
        size=40_000,
        seed=5,
        backend="local",
    )
    assert res.ok, res.error
    # every resend of the sender's entered the link, and the figure the grader uses counts
    # them up to the later of the last new payload's delivery and the receiver's last answer
    fwd = res.link["forward"]
    assert res.printed is not None and fwd["repeats"] == res.printed["retransmissions"] > 0
    assert res.retransmissions == max(fwd["repeats_to_last_fresh"], fwd["repeats_to_last_answer"])
    assert res.retransmissions == fwd["repeats"]  # the receiver answered every resend


# ---- bad input: a failed result naming the cause, nothing left (see conftest) ----


def failed(sender, receiver, **kw):
    kw.setdefault("size", 5000)
    res = run_transfer(sender, receiver, Link("delay 1ms"), seed=1, backend="local", **kw)
    assert not res.ok and not res.verified
    return res


def test_sender_command_not_found():
    res = failed(Program("no-such-sender-rdt {receiver_port}"), sw_receiver())
    assert (res.error, res.error_kind) == ("sender command not found: 'no-such-sender-rdt'", ErrorKind.NOT_FOUND)


def test_receiver_command_not_found():
    assert (
        failed(sw_sender(), Program("no-such-receiver-rdt {listen_port}")).error
        == "receiver command not found: 'no-such-receiver-rdt'"
    )


def test_receiver_crashing_at_start():
    res = failed(sw_sender(), bad("crash"))
    assert res.error.startswith("receiver exited (exit 3: badprog: crashing on purpose) before binding port")
    assert res.error_kind is ErrorKind.NOT_BOUND


def test_sender_crashing_at_start():
    res = failed(bad("crash"), sw_receiver())
    assert res.error == "sender failed (exit 3: badprog: crashing on purpose)"
    assert res.sender.exit_code == 3 and "crashing" in res.sender.stderr_tail


def test_hanging_sender_is_killed_at_the_time_limit():
    res = failed(bad("hang"), sw_receiver(), time_limit=1.5)
    assert res.error_kind is ErrorKind.TIME_LIMIT
    assert (
        res.error
        == "timed out after 1.5 s (the sender was still running; the receiver has 0 of 5000 bytes in its output)"
    )
    assert res.sender.timed_out and res.sender.exit_code == -9  # it ignores SIGTERM


def test_flooding_sender_is_bounded_by_the_time_limit():
    # 4 s: Python's start-up alone can take over a second on the loaded machine.
    res = failed(bad("flood", "{receiver_host}", "{receiver_port}"), sw_receiver(), time_limit=4)
    assert res.error.startswith("timed out after 4 s")
    assert res.packets["forward"] > 1000


def test_receiver_writing_without_end_hits_the_file_cap():
    res = failed(TALK, bad("fill", "{listen_port}", "{output}"), file_cap=2 << 20)
    # "receiver exited (...) while the sender was still sending" if it hits the cap first
    assert res.error.startswith(
        (
            "receiver failed (exit 1, it wrote past the file-size cap of 2097152 bytes",
            "receiver exited (exit 1, it wrote past the file-size cap of 2097152 bytes",
        )
    ), res.error


def test_receiver_that_writes_nothing():
    error = failed(TALK, bad("nothing", "{listen_port}", "{output}")).error
    assert error in (
        "receiver wrote nothing to its output file",  # it left after the sender, or before:
        "receiver exited (exit 0) while the sender was still sending, "
        "and the receiver wrote nothing to its output file",
    )


def test_corrupted_output_names_the_first_differing_byte():
    # Corruption lands in the relayed payload; this receiver has no checksum.
    res = run_transfer(
        sw_sender(), sw_receiver(), Link("corrupt 100%", reverse=""), size=3000, seed=2, backend="local", time_limit=10
    )
    assert not res.ok and res.error.startswith("output differs from input at byte ")
    assert res.error_kind is ErrorKind.OUTPUT_DIFFERS


def test_engine_failure_is_a_failed_result(monkeypatch):
    monkeypatch.setenv("RDTLAB_LINKEMU", str(FIXTURES / "broken_linkemu.py"))
    res = failed(sw_sender(), sw_receiver())
    assert (
        res.error_kind is ErrorKind.ENGINE
        and res.error
        == "engine failed: linkemu exited before it was ready: linkemu: cannot open /dev/net/tun: Operation not permitted"
    )


# ---- bad usage: raised before anything starts ----


def test_spec_typo_is_reported_before_anything_starts():
    with pytest.raises(SpecError, match="dely"):
        run_transfer(sw_sender(), sw_receiver(), Link("dely 5ms"), size=10, backend="local")


def test_unknown_placeholder():
    with pytest.raises(UsageError, match=r"\{windw\}"):
        run_transfer(Program("python3 x.py {windw}"), sw_receiver(), Link(""), size=10, backend="local")


def test_param_clashing_with_a_placeholder():
    with pytest.raises(UsageError, match=r"\['file'\] clash"):
        run_transfer(sw_sender(), sw_receiver(), Link(""), size=10, backend="local", params={"file": "x"})


def test_missing_file():
    with pytest.raises(UsageError, match="file to send not found"):
        run_transfer(sw_sender(), sw_receiver(), Link(""), file="/nonexistent/rdt", backend="local")


def test_unknown_backend():
    with pytest.raises(UsageError, match="unknown backend 'mininet'"):
        run_transfer(sw_sender(), sw_receiver(), Link(""), size=10, backend="mininet")


def test_kernel_backend_says_what_is_missing():
    from harness.backends.kernel import unavailable_reason

    if unavailable_reason() is None:
        pytest.skip("this kernel has sch_netem")
    with pytest.raises(BackendUnavailable) as e:
        run_transfer(sw_sender(), sw_receiver(), Link("delay 1ms"), size=10, backend="kernel")
    assert str(e.value) == unavailable_reason()
    if os.geteuid() == 0:
        assert "sch_netem" in str(e.value)


def test_ctrl_c_mid_run_leaves_nothing():
    interrupted_run("local")  # the clean_run fixture checks what is left


def test_auto_picks_netns_with_root_and_tun_else_local():
    from harness.backends import netns_unavailable_reason, resolve

    assert resolve("auto") == ("local" if netns_unavailable_reason() else "netns")


def test_engine_dying_mid_run_ends_the_run_at_once(clean_run):
    def kill_engine():
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read()
            except OSError:
                continue
            if b"linkemu" in cmd and str(clean_run).encode() in cmd:
                os.kill(int(pid), signal.SIGKILL)

    timer = threading.Timer(1.0, kill_engine)
    timer.start()
    t = time.monotonic()
    try:
        res = failed(bad("hang"), sw_receiver(), time_limit=30)
    finally:
        timer.cancel()
    assert res.error == "engine failed: it exited during the transfer (killed by SIGKILL)"
    assert not res.sender.timed_out
    assert time.monotonic() - t < 10


def test_a_scheduled_outage_stalls_the_transfer_and_is_counted():
    res = run_transfer(
        sw_sender(),
        sw_receiver(),
        Link("delay 10ms"),
        size=30_000,
        seed=1,
        backend="local",
        schedule=[{"at_ms": 200, "cmd": "down", "path": "p0"}, {"at_ms": 700, "cmd": "up", "path": "p0"}],
    )
    assert res.ok, res.error
    assert res.link["paths"]["p0"]["forward"]["down_drops"] + res.link["paths"]["p0"]["reverse"]["down_drops"] > 0
    assert res.wire_time_s > 0.5 + 30 * 0.02 * 0.9  # the outage plus 30 round trips of 20 ms


def test_progress_is_reported_each_second_with_link_counters():
    seen = []
    res = run_transfer(
        sw_sender(), sw_receiver(), Link("delay 10ms"), size=60_000, seed=1, backend="local", progress=seen.append
    )
    assert res.ok and len(seen) >= 1
    assert seen[-1]["forward_packets"] > 0 and 0.9 < seen[0]["elapsed_s"] < 2.0


def test_without_root_auto_is_local_and_netns_says_why(monkeypatch):
    from harness.backends import resolve

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert resolve("auto") == "local"
    with pytest.raises(BackendUnavailable, match="netns backend needs root"):
        resolve("netns")


def test_a_port_taken_in_between_is_retried_with_another(monkeypatch):
    import socket
    from harness.backends import local

    taken = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)  # another program's socket
    taken.bind(("::", 0))
    ports = iter([taken.getsockname()[1]])
    real = local.free_udp_port
    monkeypatch.setattr(local, "free_udp_port", lambda host: next(ports, None) or real(host))
    try:
        res = run_transfer(sw_sender(), sw_receiver(), Link(""), size=5000, seed=1, backend="local")
        assert res.ok, res.error
        assert res.endpoints["listen_port"] != taken.getsockname()[1]
    finally:
        taken.close()
