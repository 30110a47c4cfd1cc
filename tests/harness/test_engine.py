"""harness.engine: finding linkemu, checking specs, the ready line, the control channel."""

import os
import socket

import pytest

from harness.engine import Engine, EngineError, EngineNotFound, SpecError, check_spec, find_linkemu
from harness.procs import Processes
from tests.support.runs import FIXTURES


def test_find_linkemu_names_a_bad_override(monkeypatch):
    monkeypatch.setenv("RDTLAB_LINKEMU", "/nonexistent/linkemu")
    with pytest.raises(EngineNotFound, match="RDTLAB_LINKEMU=/nonexistent/linkemu is not an executable file"):
        find_linkemu()


def test_find_linkemu_says_to_build_when_missing(monkeypatch, tmp_path):
    monkeypatch.delenv("RDTLAB_LINKEMU", raising=False)
    monkeypatch.setattr("harness.engine.BUILT", tmp_path / "linkemu")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EngineNotFound, match="run `make build`"):
        find_linkemu()


def test_check_spec():
    check_spec("delay 100ms 20ms 25% distribution normal loss 5% rate 10mbit limit 100")
    check_spec("")
    with pytest.raises(SpecError, match="'loss 5% dely 3ms'.*dely"):
        check_spec("loss 5% dely 3ms")


def test_engine_relays_and_answers_on_its_control_socket(tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, Processes() as procs:
        rx.bind(("127.0.0.1", 0))
        rx.settimeout(5)
        engine = Engine(
            {
                "mode": "udp",
                "seed": 1,
                "paths": [
                    {
                        "name": "p0",
                        "forward": "",
                        "reverse": "",
                        "shared_queue": False,
                        "listen": "127.0.0.1:0",
                        "to": f"127.0.0.1:{rx.getsockname()[1]}",
                    }
                ],
            },
            str(tmp_path),
            procs,
        ).start()
        host, port = engine.paths[0]["listen"].rsplit(":", 1)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
            tx.sendto(b"hello", (host, int(port)))
            assert rx.recvfrom(100)[0] == b"hello"
            assert engine.stats()["forward"]["delivered"] == 1
            engine.down("p0")
            tx.sendto(b"lost", (host, int(port)))
            engine.up("p0")
            engine.change("p0", "delay 1ms")
            with pytest.raises(EngineError, match="no-such-path|p9"):
                engine.down("p9")
        stats = engine.stop()
    assert stats["forward"]["packets_in"] == 2 and stats["forward"]["down_drops"] == 1


def test_what_waits_for_the_engine_when_it_is_stopped_is_counted(tmp_path):
    """A sender that sends one packet and crashes: its packet counts as put into the
    link even when the engine had not read it yet when told to stop (the grader tells a
    crash before the first packet from one after it by this count: grader.disturbance)."""
    import signal

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, Processes() as procs:
        rx.bind(("127.0.0.1", 0))
        engine = Engine(
            {
                "mode": "udp",
                "seed": 1,
                "paths": [
                    {
                        "name": "p0",
                        "forward": "delay 50ms",
                        "reverse": "",
                        "shared_queue": False,
                        "listen": "127.0.0.1:0",
                        "to": f"127.0.0.1:{rx.getsockname()[1]}",
                    }
                ],
            },
            str(tmp_path),
            procs,
        ).start()
        host, port = engine.paths[0]["listen"].rsplit(":", 1)
        pid = engine.proc.pid
        os.kill(pid, signal.SIGSTOP)  # the engine off the CPU: the packets, then the stop, wait
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
                for k in range(3):
                    tx.sendto(b"only %d" % k, (host, int(port)))
            os.kill(pid, signal.SIGTERM)
        finally:
            os.kill(pid, signal.SIGCONT)
        stats = engine.stop()
    assert stats["forward"]["packets_in"] == 3 and stats["forward"]["delivered"] == 0, stats["forward"]


def test_engine_that_dies_at_start_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("RDTLAB_LINKEMU", str(FIXTURES / "broken_linkemu.py"))
    with Processes() as procs, pytest.raises(EngineError, match="before it was ready: linkemu: cannot open"):
        Engine({"mode": "udp", "paths": []}, str(tmp_path), procs).start()


@pytest.mark.skipif(os.geteuid() != 0, reason="a negative nice value takes root")
def test_the_engine_runs_at_a_higher_priority_than_the_programs_it_carries(tmp_path):
    from harness.engine import ENGINE_NICE

    with Processes() as procs:
        engine = Engine(
            {
                "mode": "udp",
                "seed": 1,
                "paths": [
                    {
                        "name": "p0",
                        "forward": "",
                        "reverse": "",
                        "shared_queue": False,
                        "listen": "127.0.0.1:0",
                        "to": "127.0.0.1:9",
                    }
                ],
            },
            str(tmp_path),
            procs,
        ).start()
        tasks = os.listdir(f"/proc/{engine.proc.pid}/task")
        nices = {
            int(open(f"/proc/{engine.proc.pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()[16]) for t in tasks
        }
        engine.stop()
    assert nices == {ENGINE_NICE}  # every thread of it, not only the first
