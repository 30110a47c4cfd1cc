"""The link engine `linkemu` as the harness sees it (docs/reference/interfaces.md, section 1).

Find the binary, check specs before anything starts, start it with a JSON config,
wait for its ready line, talk to its control socket, stop it and read its stats.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

from harness.procs import Proc, Processes, UsageError

REPO = Path(__file__).resolve().parent.parent
BUILT = REPO / "harness" / "linkemu" / "target" / "release" / "linkemu"
READY_TIMEOUT_S = 10.0
PCAP_CAP = 1 << 30  # the most the engine may write to a file (its pcap)
STOP_GRACE_S = 3.0  # SIGTERM -> SIGKILL; the engine writes its stats file in between


class EngineNotFound(UsageError):
    pass


class SpecError(UsageError):
    pass


class EngineError(RuntimeError):
    """The engine failed at run time (exited early, no ready line, control error)."""


def find_linkemu() -> str:
    """$RDTLAB_LINKEMU, else the repo's release build, else `linkemu` on PATH."""
    env = os.environ.get("RDTLAB_LINKEMU")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise EngineNotFound(f"RDTLAB_LINKEMU={env} is not an executable file")
        return env
    if BUILT.is_file() and os.access(BUILT, os.X_OK):
        return str(BUILT)
    found = shutil.which("linkemu")
    if found:
        return found
    raise EngineNotFound(f"link engine not found at {BUILT} nor on PATH: run `make build`")


def check_spec(spec: str, what: str = "link spec") -> None:
    """Raise SpecError (one line naming the bad token) if linkemu rejects the netem spec."""
    spec_summary(spec, what)


@functools.lru_cache(maxsize=256)
def _summary(spec: str) -> tuple[int, str, str]:
    try:
        done = subprocess.run([find_linkemu(), "check", "--json", spec], capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        raise EngineError(f"`linkemu check` did not answer within 10 s for {spec!r}") from None
    return done.returncode, done.stdout, done.stderr


def spec_summary(spec: str, what: str = "link spec") -> dict:
    """The engine's own parse of a netem spec, as the harness plans with it (`linkemu
    check --json`, src/summary.rs): delay_s, jitter_s, rate_bps (None: unlimited), loss
    (the long-run fraction of any loss model), loss_model, duplicate, corrupt, reorder,
    limit. The one parser of netem's syntax is the engine's; SpecError if it rejects it."""
    code, out, err = _summary(spec)
    if code != 0:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        why = lines[-1] if lines else f"linkemu check exited {code}"
        raise SpecError(f"bad {what} {spec!r}: {why.removeprefix('linkemu: ')}")
    return json.loads(out)


def control_socket_path(workdir: str) -> str:
    """In the run's dir, unless that is too long for a Unix socket (108 bytes with the
    NUL); then a short name in /tmp that `Engine.stop` removes."""
    path = os.path.join(workdir, "control.sock")
    if len(path.encode()) < 100:
        return path
    return f"/tmp/rdt-{os.getpid()}-{next(_socket_ids)}.sock"


_socket_ids = itertools.count(1)
_SHORT_SOCKET = re.compile(r"^rdt-(\d+)-\d+\.sock$")


def sweep_stale_sockets() -> None:
    """Remove short control sockets left in /tmp by a harness that died hard."""
    for name in os.listdir("/tmp"):
        m = _SHORT_SOCKET.match(name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            try:
                os.unlink(os.path.join("/tmp", name))
            except OSError:
                pass


# The link keeps its timing when the programs it carries spin (a busy-polling pair is a
# valid design and may take every core its jail allows) or other runs load the machine:
# the engine runs at a higher priority than they do, where the harness may set it (root).
ENGINE_NICE = -10


class Engine:
    """One running linkemu: `start()`, then `paths`, `control()`, `stop()` -> stats."""

    def __init__(self, config: dict, workdir: str, procs: Processes, netns: str | None = None, own_netns: bool = False):
        self.workdir = workdir
        self.netns = netns  # the network namespace it runs in
        self.own_netns = own_netns  # a new one of its own (an isolated local run's): `netns_path`
        self.procs = procs
        self.config = dict(config)
        self.config.setdefault("stats", os.path.join(workdir, "stats.json"))
        self.config.setdefault("control", control_socket_path(workdir))
        self.proc: Proc | None = None
        self.paths: list[dict] = []
        self.pid: int | None = None
        self._events: queue.Queue[bytes] = queue.Queue()

    def start(self, timeout: float = READY_TIMEOUT_S) -> "Engine":
        cfg_path = os.path.join(self.workdir, "linkemu.json")
        with open(cfg_path, "w") as f:
            json.dump(self.config, f, indent=1)
        self.proc = self.procs.start(
            "linkemu",
            [find_linkemu(), "run", cfg_path],
            cwd=self.workdir,
            file_cap=PCAP_CAP,
            on_stdout_line=self._events.put,
            netns=self.netns,
            priority=ENGINE_NICE,
            new_netns=self.own_netns,
        )
        ready = self._wait_ready(timeout)
        self.paths = ready.get("paths", [])
        self.pid = ready.get("pid")
        return self

    @property
    def netns_path(self) -> str:
        """Its network namespace as a path the run's programs join (own_netns)."""
        return f"/proc/{self.proc.pid}/ns/net"

    def _wait_ready(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise EngineError(f"linkemu printed no ready line within {timeout:g} s")
            try:
                line = self._events.get(timeout=min(left, 0.05))
            except queue.Empty:
                if self.proc.wait(0):
                    # Its stdout may still hold the line: drain before calling it dead.
                    try:
                        line = self._events.get(timeout=0.2)
                    except queue.Empty:
                        self.procs.stop(self.proc)
                        why = self.proc.last_stderr_line() or f"exit {self.proc.exit_code}"
                        raise EngineError(f"linkemu exited before it was ready: {why}") from None
                else:
                    continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("event") == "ready":
                return event

    def control(self, request: dict, timeout: float = 5.0) -> dict:
        """One request on the control socket; returns the reply (raises if not ok)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(self.config["control"])
            s.sendall(json.dumps(request).encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        reply = json.loads(buf or b"{}")
        if not reply.get("ok"):
            raise EngineError(f"linkemu refused {request}: {reply.get('error', 'no reply')}")
        return reply

    def stats(self) -> dict:
        return self.control({"cmd": "stats"})["stats"]

    def change(self, path: str, spec: str, direction: str = "both") -> None:
        self.control({"cmd": "change", "path": path, "direction": direction, "spec": spec})

    def down(self, path: str) -> None:
        self.control({"cmd": "down", "path": path})

    def up(self, path: str) -> None:
        self.control({"cmd": "up", "path": path})

    def stop(self) -> dict | None:
        """SIGTERM (the engine writes its stats file), SIGKILL if it hangs; the stats."""
        if self.proc is None:
            return None
        self.procs.stop(self.proc, grace=STOP_GRACE_S)
        if not self.config["control"].startswith(self.workdir):
            try:
                os.unlink(self.config["control"])
            except FileNotFoundError:
                pass
        try:
            with open(self.config["stats"]) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None
