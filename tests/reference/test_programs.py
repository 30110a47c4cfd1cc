"""The reference programs on real UDP sockets on loopback: the COMN programs and the
general command line, byte-exact transfers, exact output formats, robustness against
bad datagrams and strangers, bounded give-up, and one-line usage errors.

Loss, duplication and reordering come from a small seeded relay (tests/support/lossy_relay.py).
Every process started here is reaped (timeouts, then kill in ``finally``).
"""

from __future__ import annotations

import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.procs import bound_sockets
from tests.support.lossy_relay import LossyRelay
from reference.core import CoreConfig, make_sender
from reference.core.api import Data
from reference.wire import get_format

REPO = Path(__file__).resolve().parents[2]
COMN = REPO / "reference" / "comn"
PYTHON = sys.executable
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RDT_BYTE_ORDER", "RDT_LINGER")}
ENV["RDT_LINGER"] = "0.5"  # the COMN receivers' least linger (10 s by default): keep the tests short
CLI_ENV = {**ENV, "PYTHONPATH": str(REPO)}


# ---------------------------------------------------------------- helpers


def free_port() -> int:
    """A UDP port free now, for a receiver to bind a moment later. Drawn below the
    kernel's ephemeral range (ip_local_port_range), so no socket another test opens on
    port 0 in the meantime can take it (port 0 itself is drawn from that range)."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        first_ephemeral = int(f.read().split()[0])
    draw = random.SystemRandom()
    while True:
        port = draw.randrange(10_000, first_ephemeral)
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            try:
                s.bind(("::", port))
            except OSError:
                continue
            return port


def wait_bound(port: int, proc: subprocess.Popen, limit: float = 10.0) -> None:
    """Wait until the receiver `proc` holds UDP ``port``, read from /proc (the kernel's
    socket tables), never by binding the port to see: a probe holding it for a moment
    made a receiver that bound just then fail with "port ... already in use"."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return  # it exited (an error); the caller sees why
        if any(proto == "udp" for proto, _, _ in bound_sockets(proc.pid, proc.pid, port=port)):
            return
        time.sleep(0.02)
    raise AssertionError(f"nothing bound UDP port {port} within {limit} s")


def start(argv, env) -> subprocess.Popen:
    # SIGINT as a terminal gives it: pytest run as a shell's background job inherits it
    # ignored, and a test that sends it would then wait in vain.
    return subprocess.Popen(
        [PYTHON, *map(str, argv)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def finish(proc: subprocess.Popen, timeout: float):
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err


def run_pair(receiver_argv, sender_argv, port, env=ENV, timeout=60.0):
    """Start the receiver, wait for its port, run the sender; both results."""
    receiver = start(receiver_argv, env)
    sender = None
    try:
        wait_bound(port, receiver)
        sender = start(sender_argv, env)
        sent = finish(sender, timeout)
        received = finish(receiver, timeout)
        return sent, received
    finally:
        for proc in (sender, receiver):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.communicate()


def make_file(path: Path, size: int, seed: int = 7) -> bytes:
    data = random.Random(seed).randbytes(size)
    path.write_bytes(data)
    return data


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def assert_no_leftovers(folder: Path) -> None:
    assert not list(folder.glob(".*.part")), "a temporary file was left behind"


def requires_core(protocol: str) -> None:
    try:
        make_sender(protocol, b"x", CoreConfig())
    except NotImplementedError:
        pytest.skip(f"the {protocol} core is not written yet")


def comn_sender(n, host, port, path, timeout=20, window=8):
    extra = {1: [], 2: [timeout], 3: [timeout, window], 4: [timeout, window]}[n]
    return [COMN / f"Sender{n}.py", host, port, path, *extra]


def comn_receiver(n, port, path, window=8):
    return [COMN / f"Receiver{n}.py", port, path, *([window] if n == 4 else [])]


CORE_OF = {1: None, 2: "sw", 3: "gbn", 4: "sr"}
OUTPUT_FORMAT = {1: r"", 2: r"\d+ \d+\.\d\d\n", 3: r"\d+\.\d\d\n", 4: r"\d+\.\d\d\n"}


# ---------------------------------------------------------------- COMN programs


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_comn_pair_transfers_byte_exact_and_prints_the_comn_line(n, tmp_path):
    if CORE_OF[n]:
        requires_core(CORE_OF[n])
    data = make_file(tmp_path / "in.bin", 150_000 + n)
    port = free_port()
    (s_rc, s_out, s_err), (r_rc, r_out, r_err) = run_pair(
        comn_receiver(n, port, tmp_path / "out.bin"), comn_sender(n, "localhost", port, tmp_path / "in.bin"), port
    )
    assert (s_rc, s_err, r_rc, r_err, r_out) == (0, "", 0, "", "")
    assert re.fullmatch(OUTPUT_FORMAT[n], s_out), s_out
    assert (tmp_path / "out.bin").read_bytes() == data
    assert (tmp_path / "out.bin").stat().st_mode & 0o777 == 0o666 & ~current_umask()
    assert_no_leftovers(tmp_path)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_comn_pair_survives_loss_duplication_and_reordering(n, tmp_path):
    requires_core(CORE_OF[n])
    data = make_file(tmp_path / "in.bin", 100_000)
    port = free_port()
    with LossyRelay(("127.0.0.1", port), loss=0.1, duplicate=0.05, reorder=0.05, seed=n) as relay:
        (s_rc, s_out, s_err), (r_rc, _, r_err) = run_pair(
            comn_receiver(n, port, tmp_path / "out.bin"), comn_sender(n, *relay.address, tmp_path / "in.bin"), port
        )
    assert (s_rc, s_err, r_rc, r_err) == (0, "", 0, "")
    assert re.fullmatch(OUTPUT_FORMAT[n], s_out), s_out
    assert (tmp_path / "out.bin").read_bytes() == data
    assert relay.counts["dropped"] > 0 and relay.counts["reordered"] > 0
    if n == 2:  # ~100 packets at 10% loss each way: no retransmission would be p < 1e-8
        assert int(s_out.split()[0]) > 0


def test_comn_little_endian_by_environment(tmp_path):
    data = make_file(tmp_path / "in.bin", 70_000)
    port = free_port()
    env = {**ENV, "RDT_BYTE_ORDER": "little"}
    with LossyRelay(("127.0.0.1", port)) as relay:  # a perfect relay, to look at the bytes
        sniffed = []
        original = relay._pass
        relay._pass = lambda d, datagram, send: (sniffed.append((d, datagram)), original(d, datagram, send))
        (s_rc, _, s_err), (r_rc, _, _) = run_pair(
            comn_receiver(4, port, tmp_path / "out.bin"),
            comn_sender(4, *relay.address, tmp_path / "in.bin"),
            port,
            env=env,
        )
    assert (s_rc, s_err, r_rc) == (0, "", 0)
    assert (tmp_path / "out.bin").read_bytes() == data
    second = next(dg for d, dg in sniffed if d == "forward" and dg[:2] in (b"\x01\x00", b"\x00\x01"))
    assert second[:2] == b"\x01\x00"  # packet 1, little-endian


def test_comn_sender_gives_up_when_the_receiver_never_starts(tmp_path):
    make_file(tmp_path / "in.bin", 10_000)
    began = time.monotonic()
    rc, out, err = finish(start(comn_sender(4, "127.0.0.1", free_port(), tmp_path / "in.bin"), ENV), 30)
    took = time.monotonic() - began
    assert rc == 1 and out == ""
    assert len(err.splitlines()) == 1 and "no acknowledgement" in err
    assert 9 < took < 20  # the COMN programs' bound is 10 s of silence


# ---------------------------------------------------------------- general command line


def cli(*args):
    return ["-m", "reference", *args]


@pytest.mark.parametrize("protocol", ["sw", "gbn", "sr", "tcp", "mh"])
def test_cli_every_protocol_through_a_lossy_relay(protocol, tmp_path):
    requires_core(protocol)
    data = make_file(tmp_path / "in.bin", 120_000)
    port = free_port()
    common = ["--protocol", protocol, "--format", "ext", "--window", "8", "--json"]
    with LossyRelay(("127.0.0.1", port), loss=0.1, duplicate=0.05, reorder=0.05, seed=11) as relay:
        (s_rc, s_out, s_err), (r_rc, r_out, r_err) = run_pair(
            cli("recv", "--port", port, "--file", tmp_path / "out.bin", "--linger", "0.5", *common),
            cli(
                "send",
                "--host",
                relay.address[0],
                "--port",
                relay.address[1],
                "--file",
                tmp_path / "in.bin",
                "--timeout",
                "20",
                *common,
            ),
            port,
            env=CLI_ENV,
        )
    assert (s_rc, s_err, r_rc, r_err) == (0, "", 0, ""), (s_err, r_err)
    assert (tmp_path / "out.bin").read_bytes() == data
    import json

    sent, received = json.loads(s_out), json.loads(r_out)
    assert sent["bytes"] == received["bytes"] == len(data)
    assert sent["retransmissions"] > 0 and sent["throughput_kBps"] > 0


@pytest.mark.parametrize(
    "protocol,fmt,payload,extra",
    [("sr", "comn-le", 1024, []), ("sw", "ext", 65495, ["--adaptive"]), ("sr", "ext", 65495, ["--max-in-flight", "2"])],
)
def test_cli_over_ipv6_including_64k_payloads(protocol, fmt, payload, extra, tmp_path):
    requires_core(protocol)
    data = make_file(tmp_path / "in.bin", 1_000_000)
    port = free_port()
    common = ["--protocol", protocol, "--format", fmt, "--payload", payload, "--window", "4"]
    (s_rc, s_out, s_err), (r_rc, _, r_err) = run_pair(
        cli("recv", "--port", port, "--file", tmp_path / "out.bin", "--bind", "::1", "--linger", "0.3", *common),
        cli("send", "--host", "::1", "--port", port, "--file", tmp_path / "in.bin", *common, *extra),
        port,
        env=CLI_ENV,
    )
    assert (s_rc, s_err, r_rc, r_err) == (0, "", 0, "")
    assert s_out.startswith(f"sent {len(data)} bytes")
    assert (tmp_path / "out.bin").read_bytes() == data


def test_cli_multihomed_survives_the_death_of_a_path(tmp_path):
    requires_core("mh")
    data = make_file(tmp_path / "in.bin", 400_000)
    port = free_port()
    common = ["--protocol", "mh", "--window", "16", "--json"]
    with (
        LossyRelay(("127.0.0.1", port), loss=0.05, seed=1) as one,
        LossyRelay(("127.0.0.1", port), loss=0.05, seed=2) as two,
    ):
        receiver = start(
            cli("recv", "--port", port, "--file", tmp_path / "out.bin", "--linger", "0.5", *common), CLI_ENV
        )
        sender = None
        try:
            wait_bound(port, receiver)
            sender = start(
                cli(
                    "send",
                    "--host",
                    one.address[0],
                    "--port",
                    one.address[1],
                    "--path",
                    f"{two.address[0]}:{two.address[1]}",
                    "--file",
                    tmp_path / "in.bin",
                    "--timeout",
                    "20",
                    "--dead-path-timeouts",
                    "3",
                    *common,
                ),
                CLI_ENV,
            )
            while two.counts["forward"] < 50 and sender.poll() is None:
                time.sleep(0.005)
            two.down()
            s_rc, _, s_err = finish(sender, 60)
            r_rc, _, r_err = finish(receiver, 60)
        finally:
            for proc in (sender, receiver):
                if proc is not None and proc.poll() is None:
                    proc.kill()
                    proc.communicate()
    assert (s_rc, s_err, r_rc, r_err) == (0, "", 0, "")
    assert (tmp_path / "out.bin").read_bytes() == data
    assert one.counts["forward"] > 0 and two.counts["forward"] >= 50


def test_cli_sender_gives_up_within_its_bound(tmp_path):
    make_file(tmp_path / "in.bin", 10_000)
    args = ["--protocol", "sr", "--host", "127.0.0.1", "--port", free_port(), "--file", tmp_path / "in.bin"]
    began = time.monotonic()
    rc, out, err = finish(start(cli("send", *args, "--give-up", "1"), CLI_ENV), 30)
    # 1 s without an ACK and 64 data messages unanswered: window 1, a resend each 100 ms
    assert (rc, out, len(err.splitlines())) == (1, "", 1), err
    said = re.search(r"no acknowledgement for (\d+) s \(64 data messages unanswered\)", err)
    assert said and 6 <= int(said.group(1)) <= 12, err
    assert 6.0 < time.monotonic() - began < 20
    rc, out, err = finish(start(cli("send", *args, "--timeout", "10", "--max-retries", "3"), CLI_ENV), 20)
    assert (rc, out, len(err.splitlines())) == (1, "", 1) and "gave up" in err


# ---------------------------------------------------------------- a receiver under attack


def _attack(fmt_name: str, port: int, data: bytes, stranger_gets: list):
    """Be a sender by hand: garbage, truncated, oversized and corrupt datagrams,
    a stranger sending well-formed lies, and the end-of-file message twice."""
    fmt = get_format(fmt_name)
    payloads = [data[i : i + 1024] for i in range(0, len(data), 1024)]
    messages = [fmt.encode_data(Data(i, p, i == len(payloads) - 1)) for i, p in enumerate(payloads)]
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as me,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger,
    ):
        me.connect(("127.0.0.1", port))
        stranger.connect(("127.0.0.1", port))
        stranger.settimeout(0.2)
        far_ahead = fmt.encode_data(Data(20_000, b"E" * 100))  # beyond any window: impossible
        # (no "bad end-of-file flag": a COMN receiver takes any non-zero byte as end of file)
        for junk in (b"\x07", b"", b"\x00\x00", b"\x00" * 3 + b"x" * 1100, far_ahead):
            me.send(junk)
        if fmt.has_crc:
            corrupt = bytearray(fmt.encode_data(Data(0, b"E" * len(payloads[0]))))
            corrupt[-1] ^= 0x01
            me.send(bytes(corrupt))
        for i, message in enumerate(messages):
            me.send(message)
            stranger.send(fmt.encode_data(Data(i, b"EVIL" * 10, i == 1)))  # well-formed, wrong source
            time.sleep(0.002)
        me.send(messages[-1])  # a duplicate end of file
        me.send(messages[-1])
        try:
            while True:
                stranger_gets.append(stranger.recv(100))
        except (socket.timeout, ConnectionRefusedError):
            pass
        me.settimeout(0.5)
        acks = set()
        try:
            while True:
                acks.add(fmt.decode_ack(me.recv(200), len(payloads)).seq)
        except socket.timeout:
            pass
    return acks, len(payloads)


@pytest.mark.parametrize("fmt_name", ["comn", "ext"])
def test_receiver_ignores_garbage_strangers_and_a_duplicate_eof(fmt_name, tmp_path):
    data = random.Random(3).randbytes(20_000)
    port = free_port()
    argv = (
        comn_receiver(4, port, tmp_path / "out.bin", window=32)
        if fmt_name == "comn"
        else cli(
            "recv",
            "--protocol",
            "sr",
            "--format",
            "ext",
            "--port",
            port,
            "--file",
            tmp_path / "out.bin",
            "--window",
            "32",
            "--linger",
            "1",
            "--json",
        )
    )
    receiver = start(argv, CLI_ENV)
    try:
        wait_bound(port, receiver)
        stranger_gets = []
        acks, packets = _attack(fmt_name, port, data, stranger_gets)
        rc, out, err = finish(receiver, 20)
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.communicate()
    assert (rc, err) == (0, "")
    assert (tmp_path / "out.bin").read_bytes() == data
    assert acks == set(range(packets)) and stranger_gets == []
    if fmt_name == "ext":
        import json

        stats = json.loads(out)
        assert stats["strangers"] == packets and stats["bad_datagrams"] >= 5 and stats["duplicates"] >= 2


def test_receiver_that_hears_nothing_more_fails_and_writes_nothing(tmp_path):
    port = free_port()
    receiver = start(
        cli("recv", "--protocol", "sr", "--port", port, "--file", tmp_path / "out.bin", "--idle-timeout", "0.5"),
        CLI_ENV,
    )
    try:
        wait_bound(port, receiver)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as me:
            me.sendto(get_format("comn").encode_data(Data(0, b"first of many")), ("127.0.0.1", port))
        rc, out, err = finish(receiver, 10)
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.communicate()
    assert rc == 1 and "silent for 0.5 s" in err and len(err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- bad arguments


@pytest.fixture
def busy_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("0.0.0.0", 0))
        yield s.getsockname()[1]


BAD = {
    "missing file": (
        cli("send", "--protocol", "sr", "--host", "127.0.0.1", "--port", "9", "--file", "{missing}"),
        "does not exist",
    ),
    "unreadable file": (
        cli("send", "--protocol", "sr", "--host", "127.0.0.1", "--port", "9", "--file", "{dir}"),
        "is a directory",
    ),
    "window 0": (
        cli("send", "--protocol", "gbn", "--host", "127.0.0.1", "--port", "9", "--file", "{input}", "--window", "0"),
        "--window",
    ),
    "negative timeout": (
        cli("send", "--protocol", "sw", "--host", "127.0.0.1", "--port", "9", "--file", "{input}", "--timeout", "-5"),
        "--timeout",
    ),
    "payload too large": (
        cli("send", "--protocol", "sw", "--host", "127.0.0.1", "--port", "9", "--file", "{input}", "--payload", "2048"),
        "too large for the comn format",
    ),
    "window too large": (
        cli("send", "--protocol", "sr", "--host", "127.0.0.1", "--port", "9", "--file", "{input}", "--window", "40000"),
        "16-bit sequence space",
    ),
    "unknown protocol": (cli("recv", "--protocol", "quic", "--port", "9", "--file", "{output}"), "--protocol"),
    "no such host": (
        cli("send", "--protocol", "sr", "--host", "no.such.host.invalid", "--port", "9", "--file", "{input}"),
        "cannot resolve",
    ),
    "port in use": (cli("recv", "--protocol", "sr", "--port", "{busy}", "--file", "{output}"), "already in use"),
    "output folder missing": (cli("recv", "--protocol", "sr", "--port", "9", "--file", "{nodir}"), "does not exist"),
    "comn sender missing argument": ([COMN / "Sender2.py", "127.0.0.1", "9", "{input}"], "expected 4 arguments"),
    "comn negative timeout": ([COMN / "Sender3.py", "127.0.0.1", "9", "{input}", "-1", "4"], "RetryTimeout"),
    "comn window 0": ([COMN / "Receiver4.py", "9", "{output}", "0"], "WindowSize"),
    "comn bad port": ([COMN / "Receiver2.py", "70000", "{output}"], "Port"),
    "comn port in use": ([COMN / "Receiver3.py", "{busy}", "{output}"], "already in use"),
    "comn missing file": ([COMN / "Sender4.py", "127.0.0.1", "9", "{missing}", "20", "4"], "does not exist"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_arguments_give_one_line_and_exit_2(case, tmp_path, busy_port):
    argv, expected = BAD[case]
    (tmp_path / "input").write_bytes(b"hello")
    (tmp_path / "dir").mkdir()
    names = {
        "missing": tmp_path / "missing",
        "dir": tmp_path / "dir",
        "input": tmp_path / "input",
        "output": tmp_path / "out.bin",
        "nodir": tmp_path / "no" / "out.bin",
        "busy": busy_port,
    }
    argv = [str(a).format(**names) for a in argv]
    rc, out, err = finish(start(argv, CLI_ENV), 15)
    assert rc == 2, err
    assert out == "" and len(err.splitlines()) == 1 and expected in err, err
    assert not (tmp_path / "out.bin").exists()
    assert_no_leftovers(tmp_path)


def test_receiver_lingers_longer_after_a_transfer_with_long_silences(tmp_path):
    """--linger 0.2, but the sender went 0.15 s quiet mid-transfer: the receiver must
    still answer a resend of the last packet 1 s after completion (20 x 0.15 s rule);
    and that 1 s between copies is the sender's retry interval now, so 2.5 s of quiet
    later (more than 20 x 0.15 s after completion) it is still there for the next."""
    import signal

    fmt = get_format("comn")
    port = free_port()
    receiver = start(
        cli(
            "recv",
            "--protocol",
            "sr",
            "--window",
            "4",
            "--port",
            port,
            "--file",
            tmp_path / "out.bin",
            "--linger",
            "0.2",
        ),
        CLI_ENV,
    )
    try:
        wait_bound(port, receiver)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as me:
            me.connect(("127.0.0.1", port))
            me.settimeout(2)
            me.send(fmt.encode_data(Data(0, b"first ")))
            assert me.recv(10) == b"\x00\x00"
            time.sleep(0.15)  # a long silence, like a long retry timeout
            last = fmt.encode_data(Data(1, b"and last", True))
            me.send(last)
            assert me.recv(10) == b"\x00\x01"
            time.sleep(1.0)  # > --linger, < 20 x 0.15 s
            me.send(last)  # "the ACK was lost": resend
            assert me.recv(10) == b"\x00\x01"
            time.sleep(2.5)
            me.send(last)  # lost again: still answered
            assert me.recv(10) == b"\x00\x01"
        assert receiver.poll() is None  # 20 x 1 s of quiet not yet over
        receiver.send_signal(signal.SIGINT)
        rc, _, err = finish(receiver, 10)
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.communicate()
    assert (rc, err) == (130, "")
    assert (tmp_path / "out.bin").read_bytes() == b"first and last"


def test_comn_receiver_rejects_a_bad_rdt_linger(tmp_path):
    rc, out, err = finish(
        start([COMN / "Receiver2.py", free_port(), tmp_path / "out.bin"], {**ENV, "RDT_LINGER": "soon"}), 15
    )
    assert (rc, out) == (2, "") and len(err.splitlines()) == 1 and "RDT_LINGER" in err, err


def test_resend_intervals_track_the_longest_time_between_copies():
    from reference.runtime import ResendIntervals

    seen = ResendIntervals()
    for seq, t in [(0, 0.0), (1, 0.1), (0, 0.9), (2, 1.0), (1, 1.3), (0, 1.4)]:
        seen.arrived(seq, t)
    assert seen.longest == pytest.approx(1.2)  # packet 1: 0.1 -> 1.3
    seen.MEMORY = 2  # forgets the oldest beyond its memory
    seen.arrived(3, 2.0)
    seen.arrived(4, 2.1)
    assert set(seen.last_seen) == {3, 4}


def test_an_empty_file_arrives_as_an_empty_file(tmp_path):
    requires_core("sw")
    (tmp_path / "in.bin").write_bytes(b"")
    port = free_port()
    (s_rc, s_out, s_err), (r_rc, _, r_err) = run_pair(
        comn_receiver(2, port, tmp_path / "out.bin"), comn_sender(2, "127.0.0.1", port, tmp_path / "in.bin"), port
    )
    assert (s_rc, s_err, r_rc, r_err) == (0, "", 0, "")
    assert re.fullmatch(r"0 \d+\.\d\d\n", s_out)
    assert (tmp_path / "out.bin").read_bytes() == b""


def test_a_waiting_sender_sleeps_instead_of_polling(tmp_path):
    """A sender waiting on its timers for 2 s (a receiver that never answers) must
    spend almost no CPU: it sleeps in select() until the next timer."""
    import resource

    make_file(tmp_path / "in.bin", 50_000)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as black_hole:
        black_hole.bind(("127.0.0.1", 0))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        rc, _, err = finish(
            start(
                cli(
                    "send",
                    "--protocol",
                    "sr",
                    "--window",
                    "8",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    black_hole.getsockname()[1],
                    "--file",
                    tmp_path / "in.bin",
                    "--timeout",
                    "200",
                    "--give-up",
                    "2",
                ),
                CLI_ENV,
            ),
            20,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert rc == 1 and "no acknowledgement for 2 s" in err
    assert cpu < 0.8, f"the sender used {cpu:.2f} s of CPU in 2 s of waiting"  # a busy loop: ~2 s


# GBN pays a window and a timeout for every loss or reordering: duplicates only, to stay fast
WRAP_IMPAIRMENTS = {"sr": dict(loss=0.01, duplicate=0.01, reorder=0.01), "gbn": dict(duplicate=0.02)}


@pytest.mark.parametrize("protocol", ["sr", "gbn"])
def test_sixteen_bit_sequence_numbers_wrap_on_real_sockets(protocol, tmp_path):
    """75,000 packets of 16 bytes: the 2-byte sequence number wraps, with duplicates
    (and for SR resends and reordering) across the wrap."""
    requires_core(protocol)
    data = make_file(tmp_path / "in.bin", 75_000 * 16)
    port = free_port()
    common = ["--protocol", protocol, "--format", "comn", "--payload", "16", "--window", "32"]
    with LossyRelay(("127.0.0.1", port), seed=5, **WRAP_IMPAIRMENTS[protocol]) as relay:
        (s_rc, _, s_err), (r_rc, _, r_err) = run_pair(
            cli("recv", "--port", port, "--file", tmp_path / "out.bin", "--linger", "0.5", *common),
            cli(
                "send",
                "--host",
                relay.address[0],
                "--port",
                relay.address[1],
                "--file",
                tmp_path / "in.bin",
                "--timeout",
                "30",
                *common,
            ),
            port,
            env=CLI_ENV,
        )
    assert (s_rc, s_err, r_rc, r_err) == (0, "", 0, "")
    assert (tmp_path / "out.bin").read_bytes() == data
    assert relay.counts["forward"] >= 75_000 and relay.counts["duplicated"] > 0


def requires_engine():
    from harness.engine import find_linkemu

    try:
        find_linkemu()
    except Exception as e:
        pytest.skip(f"link engine not built: {e}")


def test_comn_programs_through_the_link_engine_print_the_harness_throughput():
    """Through the real link engine (netem loss, delay, rate): byte-exact, and the COMN
    throughput the sender prints (first send to last ACK) is the harness's goodput
    (first packet into the link to last packet out) to within 3%."""
    requires_core("sr")
    requires_engine()
    from harness import Link, Program, run_transfer

    r = run_transfer(
        sender=Program("python3 {impl}/Sender4.py {receiver_host} {receiver_port} {file} 40 16", output_format="comn"),
        receiver=Program("python3 {impl}/Receiver4.py {listen_port} {output} 16"),
        link=Link(forward="delay 5ms loss 10% rate 10mbit"),
        params={"impl": str(COMN)},
        size=200_000,
        seed=3,
        backend="local",
        time_limit=60,
    )
    assert r.ok, r.error
    assert r.retransmissions > 0
    assert r.printed["throughput_kBps"] == pytest.approx(r.goodput_kBps, rel=0.03)


def test_extended_format_survives_corruption_through_the_link_engine():
    """netem `corrupt` flips a payload bit; the CRC32 catches it, the packet is resent."""
    requires_core("sr")
    requires_engine()
    from harness import Link, Program, run_transfer

    opts = "--protocol sr --format ext --window 16"
    r = run_transfer(
        sender=Program(
            "python3 -m reference send --host {receiver_host} --port {receiver_port} --file {file} --timeout 40 " + opts
        ),
        receiver=Program("python3 -m reference recv --port {listen_port} --file {output} " + opts),
        link=Link(forward="delay 5ms corrupt 10% rate 10mbit"),
        size=200_000,
        seed=4,
        backend="local",
        time_limit=60,
    )
    assert r.ok, r.error
    assert r.link["forward"]["corrupted"] > 0 and r.link["reverse"]["corrupted"] > 0
    assert r.retransmissions >= r.link["forward"]["corrupted"] * 0.5


@pytest.mark.parametrize("kind,seed", [("sr-ext", 3), ("sr-comn-little", 4)])
def test_the_end_of_a_transfer_holds_at_50_percent_loss_each_way_through_the_link_engine(kind, seed):
    """The receiver has everything and the last ACKs are lost; it must stay
    until the sender has one (PROTOCOL.md "How a transfer ends"). A sample of the
    20-run benchmark (`python -m bench reference_ending`); the simulator covers
    200 seeds per protocol (test_ending.py)."""
    requires_core("sr")
    requires_engine()
    from dataclasses import replace

    from harness import Link, run_transfer
    from bench.reference import programs

    sender, receiver = programs("sr-ext", 1024, 96) if kind == "sr-ext" else programs("sr", 16)
    if kind == "sr-comn-little":
        sender, receiver = (replace(p, env={"RDT_BYTE_ORDER": "little"}) for p in (sender, receiver))
    r = run_transfer(
        sender=sender,
        receiver=receiver,
        link=Link(forward="delay 25ms loss 50% rate 10mbit"),
        params={"impl": str(COMN), "timeout": 100, "window": 16},
        size=100_000 if kind == "sr-ext" else 30_000,
        seed=seed,
        backend="local",
        time_limit=120,
        no_progress=0,
    )  # the reference's ending under test, not the harness's stop rule
    assert r.ok, r.error
    assert r.link["reverse"]["lost"] > 0 and r.retransmissions > 0
