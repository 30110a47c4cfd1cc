"""Helpers for the engine tests: a running `linkemu` and small socket utilities."""

import json
import select
import signal
import socket
import subprocess
import time
from pathlib import Path


class RunningEngine:
    def __init__(self, argv: list[str], stats: Path, control: Path | None):
        self.stats_path = stats
        self.control_path = control
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 15)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.proc.kill()
            err = self.proc.stderr.read()
            self.proc.wait()
            raise RuntimeError(f"linkemu did not get ready: {err.strip()}")
        self.ready = json.loads(line)
        self._ctl = None

    def listen(self, i: int = 0) -> tuple[str, int]:
        host, port = self.ready["paths"][i]["listen"].rsplit(":", 1)
        return host.strip("[]"), int(port)

    def control(self, request: dict | str) -> dict:
        if self._ctl is None:
            self._ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._ctl.settimeout(5)
            self._ctl.connect(str(self.control_path))
            self._ctl_file = self._ctl.makefile("r")
        text = request if isinstance(request, str) else json.dumps(request)
        self._ctl.sendall(text.encode() + b"\n")
        return json.loads(self._ctl_file.readline())

    def stats(self) -> dict:
        return self.control({"cmd": "stats"})["stats"]

    def stop(self) -> dict:
        """SIGTERM; returns the stats file. Fails the test unless it exits 0."""
        if self._ctl is not None:
            self._ctl.close()
            self._ctl = None
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(10)
        err = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        assert rc == 0, f"linkemu exited {rc}: {err}"
        return json.loads(self.stats_path.read_text())

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            if f and not f.closed:
                f.close()


def udp_socket(family=socket.AF_INET, host="127.0.0.1") -> socket.socket:
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind((host, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.settimeout(5)
    return s


def drain(sock: socket.socket, quiet: float = 0.3) -> list[bytes]:
    """Everything that arrives until nothing has come for `quiet` seconds."""
    got = []
    sock.settimeout(quiet)
    try:
        while True:
            got.append(sock.recv(70000))
    except (socket.timeout, BlockingIOError):
        pass
    finally:
        sock.settimeout(5)
    return got


def binomial_bounds(n: int, p: float, z: float = 3.29) -> tuple[float, float]:
    """99.9% two-sided bounds (normal approximation) for a Binomial(n, p) count."""
    sd = (n * p * (1 - p)) ** 0.5
    return n * p - z * sd, n * p + z * sd


def wait_until(pred, timeout: float = 5.0, step: float = 0.02) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()
