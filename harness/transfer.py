"""Run one sender/receiver pair over an emulated link; verify and measure the transfer.

`run_transfer` is the contract of docs/interfaces.md section 2. It raises only for bad
usage (UsageError: a bad spec, an unknown placeholder or backend, a missing file); a
transfer that fails for any other reason comes back as `ok=False` with a one-line
`error` naming the cause. The numbers come from the engine (what crossed the link),
never from what the programs print: that is kept in `printed`, parsed, for comparison.
"""
from __future__ import annotations

import hashlib
import json
import operator
import os
import random
import re
import secrets
import shutil
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Mapping

from harness import backends
from harness.engine import REPO, EngineError, check_spec, sweep_stale_sockets
from harness.procs import (Proc, ProgramNotFound, Processes, UsageError, describe_exit,
                           port_bound, render)

BIND_TIMEOUT_S = 10.0      # the receiver must have bound its port by then
RECEIVER_GRACE_S = 5.0     # after the sender exits, for the receiver to finish and exit
LAG_WARN_US = 1000         # p99 engine lag above this: the run was disturbed (1 ms is
                           # more than a 1 KB packet's serialisation at 10 Mbit/s)
TAIL_CHARS = 4096          # stdout/stderr kept in a result
PORT_RETRIES = 3           # local backend: new port if another program took ours


@dataclass(frozen=True)
class Link:
    """One link: netem specs per direction. reverse=None means the same as forward;
    shared_queue=True is netem on `lo` (COMN): both directions share one rate queue."""
    forward: str = ""
    reverse: str | None = None
    shared_queue: bool = False

    @property
    def reverse_spec(self) -> str:
        return self.forward if self.reverse is None else self.reverse


@dataclass(frozen=True)
class Path:
    """One path of a (possibly multi-homed) topology: a link and an optional name."""
    link: Link
    name: str | None = None


# How to parse the last line a sender prints: field names, in order.
OUTPUT_FORMATS = {
    "comn-sw": ("retransmissions", "throughput_kBps"),   # Sender2: <retx> <KB/s>
    "comn": ("throughput_kBps",),                        # Senders 1, 3, 4: <KB/s>
    "iperf3-json": ("throughput_kBps", "retransmissions"),  # iperf3 -c ... --json
}


@dataclass(frozen=True)
class Program:
    """A command template with {placeholders}, how to read its output, extra env vars."""
    command: str
    output_format: str | None = None
    env: Mapping[str, str] | None = None

    def __post_init__(self):
        if self.output_format is not None and self.output_format not in OUTPUT_FORMATS:
            raise UsageError(f"unknown output_format {self.output_format!r}; expected one of: "
                             f"{', '.join(OUTPUT_FORMATS)} or None")


def parse_printed(output_format: str | None, stdout: str) -> dict | None:
    """The sender's last non-empty line read as `output_format`, or None if it doesn't fit."""
    if output_format is None:
        return None
    if output_format == "iperf3-json":
        return _parse_iperf3(stdout)
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        return None
    names = OUTPUT_FORMATS[output_format]
    words = lines[-1].split()
    if len(words) != len(names):
        return None
    try:
        return {n: (int(w) if n == "retransmissions" else float(w)) for n, w in zip(names, words)}
    except ValueError:
        return None


def _parse_iperf3(stdout: str) -> dict | None:
    """iperf3 --json on the client: received throughput (KB/s) and TCP retransmits."""
    try:
        end = json.loads(stdout)["end"]
        return {"throughput_kBps": end["sum_received"]["bits_per_second"] / 8 / 1024,
                "retransmissions": end["sum_sent"].get("retransmits")}
    except (ValueError, KeyError, TypeError):
        return None


@dataclass
class ProgramResult:
    exit_code: int | None
    stdout_tail: str
    stderr_tail: str
    timed_out: bool
    stopped_when_done: bool = False   # receiver stopped once its output was complete


@dataclass
class TransferResult:
    ok: bool
    verified: bool
    error: str | None
    backend: str
    seed: int
    size_bytes: int
    wire_time_s: float | None = None
    process_time_s: float | None = None
    goodput_kBps: float | None = None
    retransmissions: int | None = None
    packets: dict | None = None          # {"forward": n, "reverse": n} into the link
    bytes: dict | None = None
    link: dict | None = None             # the engine's stats
    lag_us: dict | None = None           # worst direction's {p50, p99, max}
    lag_warning: str | None = None
    delay_us: dict | None = None         # per direction {p50, p99, mean}
    sender: ProgramResult | None = None
    receiver: ProgramResult | None = None
    printed: dict | None = None
    params: dict = field(default_factory=dict)
    endpoints: dict | None = None        # listen_port, the sender's targets, namespaces

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        """One screen for people: intact or not, goodput, times, retransmissions, counters."""
        if self.ok:
            head = "OK: the file arrived intact" if self.verified else "OK: both programs finished in time (nothing to verify)"
        else:
            head = f"FAILED: {self.error}"
        out = [head, f"  backend {self.backend}, seed {self.seed}, {self.size_bytes} bytes"]
        if self.goodput_kBps is not None:
            out.append(f"  goodput        {self.goodput_kBps:10.2f} KB/s")
        if self.wire_time_s is not None:
            out.append(f"  wire time      {self.wire_time_s:10.4f} s   (first packet in -> last packet out)")
        if self.process_time_s is not None:
            out.append(f"  process time   {self.process_time_s:10.4f} s   (sender start -> exit)")
        if self.retransmissions is not None:
            out.append(f"  retransmissions{self.retransmissions:10d}     (same payload sent again, seen on the wire)")
        if self.printed:
            out.append(f"  sender printed {self.printed}")
        if self.link:
            keys = ("packets_in", "delivered", "lost", "corrupted", "duplicated", "reordered",
                    "queue_drops", "down_drops", "repeats")
            out.append("  link           " + " ".join(f"{k:>11}" for k in keys))
            for d in ("forward", "reverse"):
                counters = self.link.get(d) or {}
                out.append(f"    {d:<12} " + " ".join(f"{counters.get(k, '-')!s:>11}" for k in keys))
        if self.lag_warning:
            out.append(f"  WARNING: {self.lag_warning}")
        for role in ("sender", "receiver"):
            pr = getattr(self, role)
            if pr and not self.ok and pr.stderr_tail.strip():
                out.append(f"  {role} stderr (tail): {pr.stderr_tail.strip().splitlines()[-1]}")
        return "\n".join(out)


def deterministic_bytes(size: int, seed: int) -> bytes:
    """The payload for `size` with `seed`: the same bytes on every machine and run."""
    return random.Random(seed).randbytes(size)


def first_difference(a: str, b: str) -> int | None:
    """Offset of the first byte where files a and b differ (None if equal)."""
    with open(a, "rb") as fa, open(b, "rb") as fb:
        offset = 0
        while True:
            ca, cb = fa.read(1 << 20), fb.read(1 << 20)
            if ca != cb:
                n = min(len(ca), len(cb))
                i = next((i for i in range(n) if ca[i] != cb[i]), n)
                return offset + i
            if not ca:
                return None
            offset += len(ca)


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def program_env(program: Program) -> dict:
    """The caller's environment, the repo on PYTHONPATH (`python3 -m reference` works
    from any directory), and the program's own variables."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    env.update(program.env or {})
    return env


def placeholders(targets: list[tuple[str, int]], listen_port: int, file: str, output: str,
                 params: Mapping) -> dict:
    values = {**params, "file": file, "output": output, "listen_port": listen_port}
    for k, (host, port) in enumerate(targets, start=1):
        suffix = "" if k == 1 else str(k)
        values[f"receiver_host{suffix}"] = host
        values[f"receiver_port{suffix}"] = port
    return values


@dataclass
class _Plan:
    """Everything run_transfer checked before starting anything (its arguments, resolved)."""
    sender: Program
    receiver: Program
    paths: list[dict]          # engine path configs
    params: dict
    file: str | None
    size: int
    seed: int
    backend: str               # concrete: local | netns | kernel
    time_limit: float
    ipv6: bool
    receiver_grace: float
    bind_timeout: float
    file_cap: int
    schedule: list
    pcap: str | None
    stop_receiver_when_done: bool
    verify: bool
    progress: Callable[[dict], None] | None


def _whole(value, low: int, high: int | None, what: str) -> int:
    """value as an int (numpy integers too) within [low, high), else UsageError."""
    try:
        n = operator.index(value)
    except TypeError:
        raise UsageError(f"{what}, not {value!r}") from None
    if n < low or (high is not None and n >= high):
        raise UsageError(f"{what}, not {value!r}")
    return n


def _plan(sender, receiver, link, paths, params, file, size, seed, backend, time_limit, file_cap,
          schedule, verify, **rest) -> _Plan:
    """Check the arguments (raising UsageError) and resolve defaults."""
    if not isinstance(sender, Program) or not isinstance(receiver, Program):
        raise UsageError("sender and receiver must be harness.Program objects")
    if (link is None) == (paths is None):
        raise UsageError("give exactly one of link= or paths=")
    plist = [Path(link)] if link is not None else list(paths)
    if not plist or not all(isinstance(p, Path) for p in plist):
        raise UsageError("paths must be a non-empty list of harness.Path")
    engine_paths, checked = [], set()
    for k, p in enumerate(plist):
        for spec, d in ((p.link.forward, "forward"), (p.link.reverse_spec, "reverse")):
            if not isinstance(spec, str):
                raise UsageError(f"the {d} link spec must be a netem spec string, not {spec!r}")
            if spec not in checked:
                check_spec(spec, f"{d} link spec")
                checked.add(spec)
        engine_paths.append({"name": p.name or f"p{k}", "forward": p.link.forward,
                             "reverse": p.link.reverse_spec, "shared_queue": p.link.shared_queue})
    if len({p["name"] for p in engine_paths}) != len(engine_paths):
        raise UsageError("path names must be different")
    if not verify and file is None and size is None:
        size = 0      # programs that bring their own data (iperf3)
    if (file is None) == (size is None):
        raise UsageError("give exactly one of file= or size=")
    if file is not None:
        file = os.path.abspath(file)
        if not os.path.isfile(file):
            raise UsageError(f"file to send not found: {file}")
        size = os.path.getsize(file)
    else:
        size = _whole(size, 0, None, "size must be a whole number of bytes >= 0")
    if seed is not None:
        seed = _whole(seed, 0, 2 ** 63, "seed must be a whole number from 0 to 2**63-1")
    if not time_limit or time_limit <= 0:
        raise UsageError(f"time limit must be > 0 s, not {time_limit!r}")
    params = dict(params or {})
    dummy = placeholders([("h", 1)] * len(plist), 1, "f", "o", {})
    clash = sorted(set(params) & set(dummy))
    if clash:
        raise UsageError(f"params {clash} clash with the harness's own placeholders; rename them")
    dummy = placeholders([("h", 1)] * len(plist), 1, "f", "o", params)
    render(sender.command, dummy, "sender command")
    render(receiver.command, dummy, "receiver command")
    return _Plan(sender=sender, receiver=receiver, paths=engine_paths, params=params, file=file, size=size,
                 seed=secrets.randbits(31) if seed is None else int(seed), backend=backends.resolve(backend),
                 time_limit=float(time_limit), file_cap=file_cap if file_cap is not None else 2 * size + (16 << 20),
                 schedule=list(schedule or []), verify=bool(verify), **rest)


def run_transfer(sender: Program, receiver: Program, link: Link | None = None, *,
                 paths: list[Path] | None = None, params: Mapping | None = None,
                 file: str | None = None, size: int | None = None, seed: int | None = None,
                 backend: str = "auto", time_limit: float = 120.0, ipv6: bool = False,
                 receiver_grace: float = RECEIVER_GRACE_S, bind_timeout: float = BIND_TIMEOUT_S,
                 file_cap: int | None = None, schedule: list | None = None,
                 pcap: str | None = None, stop_receiver_when_done: bool = True,
                 verify: bool = True, progress: Callable[[dict], None] | None = None) -> TransferResult:
    """Send `file` (or `size` seeded random bytes) from sender to receiver over the link.

    `schedule`: engine events, e.g. [{"at_ms": 2000, "cmd": "down", "path": "p1"}].
    `file_cap`: the most bytes a program may write to one file (default 2*size + 16 MiB).
    `stop_receiver_when_done`: once the sender has exited and the receiver's output is
    complete and correct, stop the receiver rather than wait for it to exit on its own
    (its `stopped_when_done` is then True); False waits up to `receiver_grace` s.
    `verify=False`: for programs that bring their own data (iperf3 -c/-s -1): no file
    is compared, `ok` means both exited 0 in time; read `printed` (e.g. "iperf3-json").
    `progress`: called about once a second while the sender runs, with a dict
    (`elapsed_s`, `time_limit_s`, and from the engine `forward_packets`, ...).
    """
    plan = _plan(**locals())
    for _ in range(PORT_RETRIES):
        result, port_taken = _attempt(plan)
        if not port_taken:
            break
    return result


_swept = False
_sweep_lock = threading.Lock()
_RUN_DIR = re.compile(r"^rdt-run-(\d+)-")


def _sweep_stale_dirs_once() -> None:
    """Remove run dirs (and control sockets) left by a harness process that died hard
    (its pid is gone)."""
    global _swept
    with _sweep_lock:
        if _swept:
            return
        _swept = True
        sweep_stale_sockets()
        top = tempfile.gettempdir()
        for name in os.listdir(top):
            m = _RUN_DIR.match(name)
            if m and not os.path.exists(f"/proc/{m.group(1)}"):
                shutil.rmtree(os.path.join(top, name), ignore_errors=True)


def _attempt(plan: _Plan) -> tuple[TransferResult, bool]:
    """One try; the flag says the receiver lost its port to another program (retry)."""
    _sweep_stale_dirs_once()
    workdir = tempfile.mkdtemp(prefix=f"rdt-run-{os.getpid()}-")
    try:
        for sub in ("sender", "receiver"):
            os.mkdir(os.path.join(workdir, sub))
        infile = plan.file or os.path.join(workdir, "input.bin")
        if plan.file is None:
            with open(infile, "wb") as f:
                f.write(deterministic_bytes(plan.size, plan.seed))
        output = os.path.join(workdir, "receiver", "output.bin")
        want = sha256_file(infile) if plan.verify else None   # hashed once: waiting and verifying use it
        config = {"seed": plan.seed, "schedule": plan.schedule}
        if plan.pcap:
            config["pcap"] = os.path.abspath(plan.pcap)
        with Processes() as procs:
            return _run(plan, procs, workdir, infile, want, output, config)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run(plan: _Plan, procs: Processes, workdir: str, infile: str, want: str | None, output: str,
         config: dict) -> tuple[TransferResult, bool]:
    base = dict(backend=plan.backend, seed=plan.seed, size_bytes=plan.size, params=plan.params)

    def failed(error: str, **more) -> TransferResult:
        return TransferResult(ok=False, verified=False, error=error, **base, **more)

    try:
        session = backends.open_session(plan.backend, paths=plan.paths, config=config,
                                        workdir=workdir, procs=procs, ipv6=plan.ipv6)
    except EngineError as e:
        return failed(f"engine failed: {e}"), False
    base["endpoints"] = {"listen_port": session.listen_port,
                         "targets": [f"{h}:{p}" for h, p in session.targets],
                         "netns": [session.sender.netns, session.receiver.netns]}
    try:
        values = placeholders(session.targets, session.listen_port, infile, output, plan.params)
        try:
            rx = _start(procs, "receiver", plan.receiver, values, workdir, plan.file_cap, session.receiver.netns)
        except ProgramNotFound as e:
            return failed(f"receiver {e}"), False
        if not _wait_bound(rx, session.listen_port, plan.bind_timeout):
            rx.timed_out = not rx.wait(0)
            procs.stop(rx)
            taken = session.backend == "local" and "in use" in rx.stderr().lower()
            error = _not_bound_error(rx, session.listen_port, plan.bind_timeout, plan.file_cap)
            return failed(error, receiver=_program_result(rx)), taken
        try:
            tx = _start(procs, "sender", plan.sender, values, workdir, plan.file_cap, session.sender.netns)
        except ProgramNotFound as e:
            procs.stop(rx)
            return failed(f"sender {e}", receiver=_program_result(rx)), False
        engine_proc = session.engine.proc if session.engine is not None else None
        sender_done = _wait_sender(plan, tx, session.engine)
        tx.timed_out = not sender_done and not (engine_proc is not None and engine_proc.wait(0))
        procs.stop(tx)
        if not tx.timed_out and tx.exit_code == 0:   # a failed sender: no use waiting
            rx.timed_out = not _wait_receiver(plan, rx, want, output)
        procs.stop(rx)
        engine_died = engine_proc is not None and engine_proc.wait(0)
        stats = session.engine.stop() if session.engine is not None else None
    finally:
        session.close()
    return _result(plan, base, tx, rx, engine_proc if engine_died else None, stats, infile, want, output), False


def _start(procs: Processes, role: str, program: Program, values: dict, workdir: str, file_cap: int,
           netns: str | None) -> Proc:
    """Start the sender or receiver in its own dir (and its host's namespace)."""
    return procs.start(role, render(program.command, values, f"{role} command"), cwd=os.path.join(workdir, role),
                       env=program_env(program), file_cap=file_cap, netns=netns)


def _result(plan: _Plan, base: dict, tx: Proc, rx: Proc, dead_engine: Proc | None, stats: dict | None,
            infile: str, want: str | None, output: str) -> TransferResult:
    """The verdict (the first cause of failure, else the output compared) and figures."""
    error = _first_error(plan, tx, rx)
    if dead_engine is not None:
        why = describe_exit(dead_engine.exit_code, None, dead_engine.last_stderr_line())
        error = f"engine failed: it exited during the transfer ({why})"
    verified = False
    if plan.verify and (error is None or not error.startswith("engine")):
        verified, mismatch = _verify(infile, want, output, plan.size)
        error = error or mismatch
    result = TransferResult(ok=error is None, verified=verified, error=error, **base,
                            process_time_s=(tx.exited_ns - tx.started_ns) / 1e9 if tx.exited_ns else None,
                            sender=_program_result(tx), receiver=_program_result(rx),
                            printed=parse_printed(plan.sender.output_format, tx.stdout()))
    _add_link_figures(result, stats, tx)
    return result


def _wait_sender(plan: _Plan, tx: Proc, engine) -> bool:
    """True once the sender exits; False at the time limit or if the engine dies (which
    would stall the sender until its time limit). Reports progress each second if asked."""
    deadline = time.monotonic() + plan.time_limit
    engine_proc = engine.proc if engine is not None else None
    while True:
        left = deadline - time.monotonic()
        step = min(left, 1.0) if plan.progress else left
        if tx.wait_or(engine_proc, max(step, 0)):
            return True
        if engine_proc is not None and engine_proc.wait(0):
            return False
        if left <= step:
            return False
        if plan.progress:
            _report_progress(plan, tx, engine)


def _report_progress(plan: _Plan, tx: Proc, engine) -> None:
    info = {"elapsed_s": (time.monotonic_ns() - tx.started_ns) / 1e9, "time_limit_s": plan.time_limit}
    if engine is not None:
        try:
            stats = engine.stats()
            info.update(forward_packets=stats["forward"]["packets_in"], reverse_packets=stats["reverse"]["packets_in"],
                        forward_bytes_delivered=stats["forward"]["bytes_delivered"])
        except (OSError, ValueError, KeyError, EngineError):
            pass
    plan.progress(info)


def _wait_bound(rx: Proc, port: int, timeout: float) -> bool:
    """Poll until the receiver has bound `port` (True), exits or `timeout` passes (False).

    Polling its namespace's socket tables is more robust than sleeping a guessed time.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_bound(rx.pid, port, pgid=rx.pid):
            return True
        if rx.wait(0.01):
            return False
    return False


def _wait_receiver(plan: _Plan, rx: Proc, want: str | None, output: str) -> bool:
    """After the sender exits: True once the receiver exits, or (with
    stop_receiver_when_done) once its output is complete and correct, so a receiver
    that lingers to re-ACK (COMN's linger 2 s) does not cost every run that long.
    """
    deadline = time.monotonic() + plan.receiver_grace
    while time.monotonic() < deadline:
        if rx.wait(0.02):
            return True
        if plan.verify and plan.stop_receiver_when_done and os.path.exists(output) \
                and os.path.getsize(output) == plan.size and sha256_file(output) == want:
            rx.stopped_when_done = True
            return True
    return False


def _not_bound_error(rx: Proc, port: int, timeout: float, cap: int) -> str:
    if rx.timed_out:
        return f"receiver did not bind port {port} within {timeout:g} s"
    return f"receiver exited ({describe_exit(rx.exit_code, cap, rx.last_stderr_line())}) before binding port {port}"


def _first_error(plan: _Plan, tx: Proc, rx: Proc) -> str | None:
    """The cause, in the order things happen: sender time-out or crash, then receiver."""
    if tx.timed_out:
        return f"timed out after {plan.time_limit:g} s (the sender was still running)"
    if tx.exit_code != 0:
        return f"sender failed ({describe_exit(tx.exit_code, plan.file_cap, tx.last_stderr_line())})"
    if rx.timed_out:
        return f"receiver did not exit within {plan.receiver_grace:g} s after the sender finished"
    if rx.exit_code != 0 and not rx.stopped_when_done:
        return f"receiver failed ({describe_exit(rx.exit_code, plan.file_cap, rx.last_stderr_line())})"
    return None


def _verify(infile: str, want: str, output: str, size: int) -> tuple[bool, str | None]:
    if not os.path.exists(output) or (os.path.getsize(output) == 0 and size > 0):
        return False, "receiver wrote nothing to its output file"
    if sha256_file(output) == want:
        return True, None
    at = first_difference(infile, output)
    return False, f"output differs from input at byte {at} (output {os.path.getsize(output)} bytes, input {size})"


def _program_result(p: Proc) -> ProgramResult:
    return ProgramResult(p.exit_code, p.stdout(TAIL_CHARS), p.stderr(TAIL_CHARS), p.timed_out, p.stopped_when_done)


def _add_link_figures(result: TransferResult, stats: dict | None, tx: Proc) -> None:
    """Wire time, goodput, retransmissions, counters and lag, from the engine's stats.

    Wire time runs from the first forward packet into the link to the last packet out
    of it either way, so the ACK of the last message counts (COMN stops its clock when
    that ACK arrives). It is clamped to the sender's life: a packet sent after the
    sender exited (a receiver re-ACKing into the void) is not part of the transfer.
    """
    if not stats:
        return
    fwd, rev = stats.get("forward") or {}, stats.get("reverse") or {}
    result.link = stats
    result.retransmissions = fwd.get("repeats")
    result.packets = {"forward": fwd.get("packets_in"), "reverse": rev.get("packets_in")}
    result.bytes = {"forward": fwd.get("bytes_in"), "reverse": rev.get("bytes_in")}
    result.delay_us = {"forward": fwd.get("delay_us"), "reverse": rev.get("delay_us")}
    lags = [d.get("lag_us") for d in (fwd, rev) if d.get("lag_us")]
    if lags:
        result.lag_us = {k: max((lag.get(k) or 0) for lag in lags) for k in ("p50", "p99", "max")}
        if result.lag_us["p99"] > LAG_WARN_US:
            result.lag_warning = (f"the engine sent packets up to {result.lag_us['p99'] / 1000:.1f} ms late "
                                  f"(p99 lag > {LAG_WARN_US / 1000:g} ms): the machine was busy, timings are disturbed")
    first_in = fwd.get("first_in_ns")
    outs = [t for t in (fwd.get("last_out_ns"), rev.get("last_out_ns")) if t]
    if first_in is None or not outs:
        return
    start = max(first_in, tx.started_ns)
    end = min(max(outs), tx.exited_ns or max(outs))
    if end > start:
        result.wire_time_s = (end - start) / 1e9
        if result.verified:
            result.goodput_kBps = result.size_bytes / 1024 / result.wire_time_s
