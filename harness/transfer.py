"""Run one sender/receiver pair over an emulated link; verify and measure the transfer.

`run_transfer` is the contract of docs/reference/interfaces.md section 2. It raises only for bad
usage (UsageError: a bad spec, an unknown placeholder or backend, a missing file); a
transfer that fails for any other reason comes back as `ok=False` with a one-line
`error` naming the cause and its `error_kind`. The numbers come from the engine (what
crossed the link), never from what the programs print: that is kept in `printed`,
parsed, for comparison. This module runs things; the rules that stop a run and name why
it failed are sans-IO, in harness/monitor.py.
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
import string
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Mapping

from harness import backends, steal, time_limits
from harness.engine import REPO, EngineError, check_spec, spec_summary, sweep_stale_sockets
from harness.monitor import (
    ErrorKind,
    Exit,
    Failure,
    Monitor,
    RunEnd,
    Stopped,
    first_failure,
    output_mismatch,
    with_link_story,
)
from harness.procs import (
    BindWatch,
    Proc,
    ProgramNotFound,
    Processes,
    UsageError,
    bound_sockets,
    describe_exit,
    raise_if_terminated,
    render,
    terminate_as_interrupt,
)

BIND_TIMEOUT_S = 10.0  # the receiver must have bound its port by then
RECEIVER_GRACE_S = 5.0  # after the sender exits, for the receiver to finish and exit
LAG_WARN_US = 1000  # p99 engine lag above this: the run was disturbed (1 ms is
# more than a 1 KB packet's serialisation at 10 Mbit/s), on a link of short round trips
LAG_SHARE_OF_RTT = 0.02  # on longer ones, above this share of the shortest round trip
TAIL_CHARS = 4096  # stdout/stderr kept in a result
PORT_RETRIES = 3  # local backend: new port if another program took ours


TUN_CORRUPTION = ("repair", "netem")


@dataclass(frozen=True)
class Link:
    """One link: netem specs per direction. reverse=None means the same as forward;
    shared_queue=True is netem on `lo` (COMN): both directions share one rate queue.
    tun_corruption (netns backend): "repair" flips a payload bit and fixes the UDP/TCP
    checksum, so the damage reaches the application; "netem" flips a bit anywhere and
    leaves the checksum wrong, as tc-netem, so the receiving kernel drops the packet
    (harness/linkemu/README.md, "Corruption")."""

    forward: str = ""
    reverse: str | None = None
    shared_queue: bool = False
    tun_corruption: str = "repair"

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
    "comn-sw": ("retransmissions", "throughput_kBps"),  # Sender2: <retx> <KB/s>
    "comn": ("throughput_kBps",),  # Senders 1, 3, 4: <KB/s>
    "iperf3-json": ("throughput_kBps", "retransmissions", "congestion_control"),  # iperf3 -c ... --json
    "json": (),  # a JSON object on the last line, kept whole (reference.tcpfile --json)
}


@dataclass(frozen=True)
class Program:
    """A command template with {placeholders}, how to read its output, extra env vars."""

    command: str
    output_format: str | None = None
    env: Mapping[str, str] | None = None

    def __post_init__(self):
        if self.output_format is not None and self.output_format not in OUTPUT_FORMATS:
            raise UsageError(
                f"unknown output_format {self.output_format!r}; expected one of: {', '.join(OUTPUT_FORMATS)} or None"
            )


def parse_printed(output_format: str | None, stdout: str) -> dict | None:
    """The sender's last non-empty line read as `output_format`, or None if it doesn't fit."""
    if output_format is None:
        return None
    if output_format == "iperf3-json":
        return _parse_iperf3(stdout)
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        return None
    if output_format == "json":
        try:
            report = json.loads(lines[-1])
        except ValueError:
            return None
        return report if isinstance(report, dict) else None
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
        return {
            "throughput_kBps": end["sum_received"]["bits_per_second"] / 8 / 1024,
            "retransmissions": end["sum_sent"].get("retransmits"),
            "congestion_control": end.get("sender_tcp_congestion"),
        }
    except (ValueError, KeyError, TypeError):
        return None


@dataclass
class ProgramResult:
    exit_code: int | None
    stdout_tail: str
    stderr_tail: str
    timed_out: bool
    stopped_when_done: bool = False  # receiver stopped once its output was complete


@dataclass
class TransferResult:
    ok: bool
    verified: bool
    error: str | None
    backend: str
    seed: int
    size_bytes: int
    error_kind: ErrorKind | None = None  # the cause as a value to branch on (harness/monitor.py);
    # `error` is its one-line message for people
    wire_time_s: float | None = None
    process_time_s: float | None = None
    goodput_kBps: float | None = None
    retransmissions: int | None = None
    packets: dict | None = None  # {"forward": n, "reverse": n} into the link
    bytes: dict | None = None
    link: dict | None = None  # the engine's stats
    lag_us: dict | None = None  # worst direction's {p50, p99, max}
    lag_warning: str | None = None
    steal: float | None = None  # the share of all CPU time the VM's host took during the
    # run (harness.steal), which stops programs and engine alike
    delay_us: dict | None = None  # per direction {p50, p99, mean}
    sender: ProgramResult | None = None
    receiver: ProgramResult | None = None
    printed: dict | None = None
    params: dict = field(default_factory=dict)
    endpoints: dict | None = None  # listen_port, the sender's targets, namespaces, where
    # the receiver bound, and whether loopback NAT was used
    startup: dict | None = None  # receiver_bound_s (after its start), sender_start_gap_ms
    # (receiver bound -> sender started), loopback_nat_ms (of
    # that gap, netns only), time_limit_s, no_progress_s
    pcap: str | None = None  # the capture files asked for (absolute paths):
    trace: str | None = None  # harness.plots draws the transfer from them
    cpu_s: float | None = None  # CPU seconds of the programs and the engine together
    # (what a sweep books the run's share of the CPU by)
    tcp_cc: str | None = None  # kernel TCP's congestion control pinned in the namespaces
    # (netns, kernel; harness/backends/tcp.py); what ran is
    # what the program reports (printed["congestion_control"])

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        """One screen for people: intact or not, goodput, times, retransmissions, counters."""
        if self.ok:
            head = (
                "OK: the file arrived intact"
                if self.verified
                else "OK: both programs finished in time (nothing to verify)"
            )
        else:
            head = f"FAILED: {self.error}"
        out = [
            head,
            f"  backend {self.backend}, seed {self.seed}, {self.size_bytes} bytes"
            + (f", kernel TCP {self.tcp_cc} (pinned per route)" if self.tcp_cc else ""),
        ]
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
            keys = (
                "packets_in",
                "delivered",
                "lost",
                "corrupted",
                "duplicated",
                "reordered",
                "queue_drops",
                "down_drops",
                "repeats",
            )
            out.append("  link           " + " ".join(f"{k:>11}" for k in keys))
            for d in ("forward", "reverse"):
                counters = self.link.get(d) or {}
                out.append(f"    {d:<12} " + " ".join(f"{counters.get(k, '-')!s:>11}" for k in keys))
        if self.startup:
            st = self.startup
            out.append(
                f"  start-up       receiver bound {st.get('bound', '?')} after {st.get('receiver_bound_s', 0):.3f} s; "
                f"sender started {st.get('sender_start_gap_ms', 0):.0f} ms later; limits {st.get('time_limit_s', 0):g} s, "
                f"no progress {st.get('no_progress_s') or 'off'} s"
            )
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


def placeholders(targets: list[tuple[str, int]], listen_port: int, file: str, output: str, params: Mapping) -> dict:
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
    paths: list[dict]  # engine path configs
    params: dict
    file: str | None
    size: int
    seed: int
    backend: str  # concrete: local | netns | kernel
    time_limit: float
    no_progress: float  # seconds without progress before the run is stopped; 0 = never
    ipv6: bool
    receiver_grace: float
    bind_timeout: float
    file_cap: int
    schedule: list
    pcap: str | None
    trace: str | None
    trace_tail: int | None
    stop_receiver_when_done: bool
    verify: bool
    progress: Callable[[dict], None] | None
    isolate: bool
    tcp_cc: str | None  # netns/kernel: kernel TCP's congestion control; None elsewhere


def _whole(value, low: int, high: int | None, what: str) -> int:
    """value as an int (numpy integers too) within [low, high), else UsageError."""
    try:
        n = operator.index(value)
    except TypeError:
        raise UsageError(f"{what}, not {value!r}") from None
    if n < low or (high is not None and n >= high):
        raise UsageError(f"{what}, not {value!r}")
    return n


def _check_receiver_port(receiver: Program) -> None:
    """A receiver must bind {listen_port}; {receiver_port} is where the sender sends,
    which on the local backend is the engine's own port (so the bind fails there only)."""
    names = {f[1] for f in string.Formatter().parse(receiver.command) if f[1]}
    used = sorted(n for n in names if n == "receiver_port" or (n.startswith("receiver_port") and n[13:].isdigit()))
    if used and "listen_port" not in names:
        raise UsageError(
            f"receiver command {receiver.command!r} uses {{{used[0]}}}, the port the sender sends to; "
            "a receiver must bind {listen_port}"
        )


def _plan(
    sender,
    receiver,
    link,
    paths,
    params,
    file,
    size,
    seed,
    backend,
    time_limit,
    file_cap,
    schedule,
    verify,
    no_progress,
    **rest,
) -> _Plan:
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
        engine_paths.append(
            {
                "name": p.name or f"p{k}",
                "forward": p.link.forward,
                "reverse": p.link.reverse_spec,
                "shared_queue": p.link.shared_queue,
            }
        )
        if p.link.tun_corruption not in TUN_CORRUPTION:
            raise UsageError(
                f"tun_corruption must be one of {', '.join(TUN_CORRUPTION)}, not {p.link.tun_corruption!r}"
            )
        if p.link.tun_corruption == "netem":
            engine_paths[-1]["tun_corruption"] = "netem"
    if len({p["name"] for p in engine_paths}) != len(engine_paths):
        raise UsageError("path names must be different")
    if not verify and file is None and size is None:
        size = 0  # programs that bring their own data (iperf3)
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
        seed = _whole(seed, 0, 2**63, "seed must be a whole number from 0 to 2**63-1")
    params = dict(params or {})
    if time_limit is None:
        time_limit = max(
            time_limits.time_limit(
                time_limits.expected_seconds(p["forward"], p["reverse"], size, params, p["shared_queue"])
            )
            for p in engine_paths
        )
    if not time_limit or time_limit <= 0:
        raise UsageError(f"time limit must be > 0 s, not {time_limit!r}")
    if no_progress is None:
        no_progress = max(time_limits.no_progress_window(p["forward"], p["reverse"], params) for p in engine_paths)
    if no_progress < 0:
        raise UsageError(f"no_progress must be >= 0 s (0: never stop for it), not {no_progress!r}")
    _check_receiver_port(receiver)
    dummy = placeholders([("h", 1)] * len(plist), 1, "f", "o", {})
    clash = sorted(set(params) & set(dummy))
    if clash:
        raise UsageError(f"params {clash} clash with the harness's own placeholders; rename them")
    dummy = placeholders([("h", 1)] * len(plist), 1, "f", "o", params)
    render(sender.command, dummy, "sender command")
    render(receiver.command, dummy, "receiver command")
    backend = backends.resolve(backend)
    if backend == "local":
        why = backends.isolation_unavailable_reason()
        if rest["isolate"] and why:
            raise backends.BackendUnavailable(why)
        rest["isolate"] = rest["isolate"] is not False and not why
    else:
        rest["isolate"] = False
    from harness.backends import tcp

    rest["tcp_cc"] = (
        tcp.check(tcp.DEFAULT if rest.get("tcp_cc") is None else rest["tcp_cc"])
        if backend in ("netns", "kernel")
        else None
    )
    if backend in ("local", backends.DIRECT) and any(p.get("tun_corruption") == "netem" for p in engine_paths):
        raise UsageError(
            f"tun_corruption='netem' needs the netns backend (TUN mode), not {backend}: "
            "in UDP-relay mode the application always gets the damaged datagram"
        )
    return _Plan(
        sender=sender,
        receiver=receiver,
        paths=engine_paths,
        params=params,
        file=file,
        size=size,
        seed=secrets.randbits(31) if seed is None else int(seed),
        backend=backend,
        time_limit=float(time_limit),
        no_progress=float(no_progress),
        file_cap=file_cap if file_cap is not None else 2 * size + (16 << 20),
        schedule=list(schedule or []),
        verify=bool(verify),
        **rest,
    )


def run_transfer(
    sender: Program,
    receiver: Program,
    link: Link | None = None,
    *,
    paths: list[Path] | None = None,
    params: Mapping | None = None,
    file: str | None = None,
    size: int | None = None,
    seed: int | None = None,
    backend: str = "auto",
    time_limit: float | None = None,
    no_progress: float | None = None,
    ipv6: bool = False,
    receiver_grace: float = RECEIVER_GRACE_S,
    bind_timeout: float = BIND_TIMEOUT_S,
    file_cap: int | None = None,
    schedule: list | None = None,
    pcap: str | None = None,
    trace: str | None = None,
    trace_tail: int | None = None,
    stop_receiver_when_done: bool = True,
    verify: bool = True,
    progress: Callable[[dict], None] | None = None,
    isolate: bool | None = None,
    tcp_cc: str | None = None,
) -> TransferResult:
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
    `time_limit`: None derives it from the expected duration (harness/time_limits.py).
    `no_progress`: stop the run when nothing new has entered the link and the receiver's
    output has not grown for this many seconds; None derives it from the link's round
    trip and the `timeout` parameter (harness/time_limits.py); 0 never stops for it.
    SIGTERM during the run is handled as Ctrl-C (everything it started is stopped and
    removed, then KeyboardInterrupt) when called from the main thread.
    `pcap` / `trace`: files for the engine's capture of what it delivered / its JSON-lines
    trace of every packet's fate (harness/plots draws the transfer from either);
    `trace_tail`: keep only the trace's last this many lines (the end of a long transfer).
    `isolate`: on the local backend, the engine and both programs in a network namespace
    of their own, loopback only (harness/backends/local.py): the programs reach the
    engine and each other, nothing of the host's network. None (the default): wherever
    this process may make one (root, or CAP_SYS_ADMIN and CAP_NET_ADMIN); True: or a
    BackendUnavailable saying why not (the grader, for untrusted programs); False: never.
    The netns and kernel backends isolate every run anyway.
    `tcp_cc`: kernel TCP's congestion control in the namespaces of the netns and kernel
    backends, pinned per route (harness/backends/tcp.py); None: cubic. An algorithm this
    kernel lacks is a UsageError naming the ones it has.
    """
    plan = _plan(**locals())
    with terminate_as_interrupt():
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


def lag_bar_us(paths: list[dict]) -> float:
    """The engine's p99 lag above which a run over `paths` was disturbed: LAG_WARN_US, or
    LAG_SHARE_OF_RTT of the shortest round trip where that is more. A packet late by
    a few ms matters on a link of a few ms, where programs' timers are set to its round
    trip; on a 300 ms round trip it is within the margin any timer learns, and with the
    few packets a long round trip carries, p99 is the one latest packet: a single burst
    of the VM host's steal would leave such a scenario ungraded on every try."""
    rtt_s = min(
        (spec_summary(p["forward"])["delay_s"] + spec_summary(p["reverse"])["delay_s"] for p in paths),
        default=0.0,
    )
    return max(LAG_WARN_US, LAG_SHARE_OF_RTT * rtt_s * 1e6)


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
        want = sha256_file(infile) if plan.verify else None  # hashed once: waiting and verifying use it
        config = {"seed": plan.seed, "schedule": plan.schedule}
        for key in ("pcap", "trace"):
            if getattr(plan, key):
                config[key] = os.path.abspath(getattr(plan, key))
        if plan.trace and plan.trace_tail:
            config["trace_tail"] = int(plan.trace_tail)
        cpu_before = steal.cpu_times()
        with Processes() as procs:
            result, retry = _run(plan, procs, workdir, infile, want, output, config)
        result.cpu_s = round(procs.cpu_s, 3)  # every program is reaped once the block ends
        stolen = steal.stolen_share(cpu_before, steal.cpu_times())
        result.steal = round(stolen, 4) if stolen is not None else None
        bar = lag_bar_us(plan.paths)
        if result.lag_us and result.lag_us["p99"] > bar:  # the host's steal, or load, to blame
            result.lag_warning = (
                f"the engine sent packets up to {result.lag_us['p99'] / 1000:.1f} ms late "
                f"(p99 lag > {bar / 1000:g} ms): "
                f"{steal.lag_cause(stolen)}, timings are disturbed"
            )
        return result, retry
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run(
    plan: _Plan, procs: Processes, workdir: str, infile: str, want: str | None, output: str, config: dict
) -> tuple[TransferResult, bool]:
    base = dict(
        backend=plan.backend,
        seed=plan.seed,
        size_bytes=plan.size,
        params=plan.params,
        pcap=config.get("pcap"),
        trace=config.get("trace"),
        tcp_cc=plan.tcp_cc,
    )

    def failed(kind: ErrorKind, error: str, **more) -> TransferResult:
        return TransferResult(ok=False, verified=False, error=error, error_kind=kind, **base, **more)

    try:
        session = backends.open_session(
            plan.backend,
            paths=plan.paths,
            config=config,
            workdir=workdir,
            procs=procs,
            ipv6=plan.ipv6,
            isolate=plan.isolate,
            tcp_cc=plan.tcp_cc,
        )
    except EngineError as e:
        return failed(ErrorKind.ENGINE, f"engine failed: {e}"), False
    base["endpoints"] = {
        "listen_port": session.listen_port,
        "targets": [f"{h}:{p}" for h, p in session.targets],
        "netns": [session.sender.netns, session.receiver.netns],
    }
    try:
        values = placeholders(session.targets, session.listen_port, infile, output, plan.params)
        try:
            rx = _start(procs, "receiver", plan.receiver, values, workdir, plan.file_cap, session.receiver.netns)
        except ProgramNotFound as e:
            return failed(ErrorKind.NOT_FOUND, f"receiver {e}"), False
        # The same start-up on every backend: the receiver has bound its port (seen in
        # its namespace's socket table) before the sender starts, at once after that.
        bound = _wait_bound(rx, session.listen_port, plan.bind_timeout)
        if bound is None:
            rx.timed_out = not rx.wait(0)
            elsewhere = _describe_sockets(bound_sockets(rx.pid, rx.pid)) if rx.timed_out else ""
            procs.stop(rx)
            taken = session.backend == "local" and "in use" in rx.stderr().lower()
            error = _not_bound_error(rx, session.listen_port, plan.bind_timeout, plan.file_cap, elsewhere)
            return failed(ErrorKind.NOT_BOUND, error, receiver=_program_result(rx)), taken
        bound_at = time.monotonic_ns()
        where, nat, error = _steer(session, bound)
        steered_at = time.monotonic_ns()
        base["endpoints"].update(bound=where, loopback_nat=nat)
        if error:
            procs.stop(rx)
            return failed(ErrorKind.UNREACHABLE, error, receiver=_program_result(rx)), False
        try:
            tx = _start(procs, "sender", plan.sender, values, workdir, plan.file_cap, session.sender.netns)
        except ProgramNotFound as e:
            procs.stop(rx)
            return failed(ErrorKind.NOT_FOUND, f"sender {e}", receiver=_program_result(rx)), False
        base["startup"] = {
            "bound": where,
            "receiver_bound_s": round((bound_at - rx.started_ns) / 1e9, 4),
            "sender_start_gap_ms": round((tx.started_ns - bound_at) / 1e6, 2),
            "time_limit_s": plan.time_limit,
            "no_progress_s": plan.no_progress or None,
            "loopback_nat_ms": round((steered_at - bound_at) / 1e6, 1) if nat else None,
        }
        stopped = _watch(plan, tx, rx, session.engine, want, output)
        tx.timed_out = stopped is not None and stopped.kind in (ErrorKind.TIME_LIMIT, ErrorKind.NO_PROGRESS)
        procs.stop(tx)
        if stopped is None and tx.exit_code == 0:  # a failed sender: no use waiting
            rx.timed_out = not _wait_receiver(plan, rx, want, output)
        procs.stop(rx)
        engine_proc = session.engine.proc if session.engine is not None else None
        engine_died = engine_proc is not None and engine_proc.wait(0)
        stats = session.engine.stop() if session.engine is not None else None
        output_bytes = os.path.getsize(output) if os.path.exists(output) else 0
    finally:
        session.close()
    end = RunEnd(
        stopped=stopped,
        sender=_exit(plan, tx),
        receiver=_exit(plan, rx),
        size=plan.size,
        output_bytes=output_bytes,
        where=where,
        delivered_bytes=((stats or {}).get("forward") or {}).get("bytes_delivered", 0),
        time_limit_s=plan.time_limit,
        receiver_grace_s=plan.receiver_grace,
        engine_exit=describe_exit(engine_proc.exit_code, None, engine_proc.last_stderr_line()) if engine_died else None,
    )
    return _result(plan, base, tx, rx, stats, infile, want, output, end), False


def _steer(session: backends.Session, bound: list[tuple[str, str, int]]) -> tuple[str, bool, str | None]:
    """Where the receiver bound (text), whether loopback NAT now steers the link's packets
    to it, and an error if no socket of it is where the link can deliver."""
    where = _describe_sockets(bound)
    # a dual-stack socket bound to an IPv4 address shows it v4-mapped (Java's
    # DatagramSocket(port, localhost) binds ::ffff:127.0.0.1): it receives that IPv4 address
    addresses = [a.removeprefix("::ffff:") if a.startswith("::ffff:") and "." in a else a for _, a, _ in bound]
    reachable = [a for a in addresses if session.delivers_to(a)]
    if not reachable:
        hint = (
            "IPv6 loopback is reachable only from the host's own lo, never from a link device: "
            "bind '' (all addresses) or the IPv4 'localhost'"
            if "::1" in addresses and session.backend != "local"
            else f"the link delivers to {' or '.join(a for a in session.reachable)} or the wildcard address"
        )
        return where, False, f"receiver bound {where}, where the link cannot deliver ({hint})"
    loopback = [a for a in reachable if a.startswith("127.")]
    if loopback and len(loopback) == len(reachable) and session.on_loopback_bind:
        session.on_loopback_bind(loopback[0])
        return where, True, None
    return where, False, None


def _describe_sockets(sockets: list[tuple[str, str, int]]) -> str:
    """'UDP 127.0.0.1:5001' (several joined by ' and ')."""
    from harness.backends.local import join_hostport

    return " and ".join(f"{proto.upper()} {join_hostport(addr, port)}" for proto, addr, port in sockets)


def _watch(plan: _Plan, tx: Proc, rx: Proc, engine, want: str | None, output: str) -> Stopped | None:
    """Wait for the sender to exit (None) or for the monitor to stop the run (why):
    every monitor.WATCH_S it gets the time, the engine's state and counters, whether the
    receiver left with its output incomplete, and the output's size."""
    monitor = Monitor(plan.time_limit, plan.no_progress, time.monotonic_ns())
    engine_proc = engine.proc if engine is not None else None
    next_report = time.monotonic() + 1.0
    while True:
        raise_if_terminated()
        if tx.wait_or(engine_proc, monitor.wait_s(time.monotonic_ns())):
            return None
        now_ns = time.monotonic_ns()
        engine_exited = engine_proc is not None and engine_proc.wait(0)
        receiver_exited = rx.wait(0)
        left = plan.verify and receiver_exited and not _output_complete(plan, want, output)
        stats = None if engine_exited else _engine_stats(engine)
        stopped = monitor.check(
            now_ns,
            engine_exited=engine_exited,
            receiver_left=left,
            stats=stats,
            output_bytes=os.path.getsize(output) if os.path.exists(output) else 0,
            receiver_exited=receiver_exited,
        )
        if stopped is not None:
            return stopped
        if plan.progress and now_ns / 1e9 >= next_report:
            next_report = now_ns / 1e9 + 1.0
            _report_progress(plan, tx, stats)


def _engine_stats(engine) -> dict | None:
    if engine is None:
        return None
    try:
        return engine.stats()
    except (OSError, ValueError, KeyError, EngineError):
        return None


def _output_complete(plan: _Plan, want: str | None, output: str) -> bool:
    return os.path.exists(output) and os.path.getsize(output) == plan.size and sha256_file(output) == want


def _start(
    procs: Processes, role: str, program: Program, values: dict, workdir: str, file_cap: int, netns: str | None
) -> Proc:
    """Start the sender or receiver in its own dir (and its host's namespace)."""
    return procs.start(
        role,
        render(program.command, values, f"{role} command"),
        cwd=os.path.join(workdir, role),
        env=program_env(program),
        file_cap=file_cap,
        netns=netns,
    )


def _result(
    plan: _Plan,
    base: dict,
    tx: Proc,
    rx: Proc,
    stats: dict | None,
    infile: str,
    want: str | None,
    output: str,
    end: RunEnd,
) -> TransferResult:
    """The verdict (the first cause of failure, else the output compared) and figures;
    a failure's line ends with what the link did."""
    failure = first_failure(end)
    verified = False
    if plan.verify and (failure is None or failure.kind is not ErrorKind.ENGINE):
        verified, mismatch = _verify(infile, want, output, plan.size)
        failure = failure or mismatch
    if failure is not None:
        failure = with_link_story(failure, stats, lambda: _tail_missing(plan, infile, output))
    result = TransferResult(
        ok=failure is None,
        verified=verified,
        error=failure and failure.message,
        error_kind=failure and failure.kind,
        **base,
        process_time_s=(tx.exited_ns - tx.started_ns) / 1e9 if tx.exited_ns else None,
        sender=_program_result(tx),
        receiver=_program_result(rx),
        printed=parse_printed(plan.sender.output_format, tx.stdout()),
    )
    _add_link_figures(result, stats, tx)
    return result


def _exit(plan: _Plan, p: Proc) -> Exit:
    """How a program ended, in the monitor's terms (its exit described in words)."""
    described = describe_exit(p.exit_code, plan.file_cap, p.last_stderr_line()) if p.exit_code is not None else ""
    return Exit(p.exit_code, p.timed_out, described, p.stopped_when_done)


def _tail_missing(plan: _Plan, infile: str, output: str) -> bool:
    """Whether the output is a proper, non-empty prefix of the input: the end of the file
    never arrived (with an in-order sender, its last packets were dropped)."""
    if not plan.verify or not os.path.exists(output):
        return False
    have = os.path.getsize(output)
    return 0 < have < plan.size and first_difference(infile, output) == have


def _report_progress(plan: _Plan, tx: Proc, stats: dict | None) -> None:
    info = {"elapsed_s": (time.monotonic_ns() - tx.started_ns) / 1e9, "time_limit_s": plan.time_limit}
    try:
        info.update(
            forward_packets=stats["forward"]["packets_in"],
            reverse_packets=stats["reverse"]["packets_in"],
            forward_bytes_delivered=stats["forward"]["bytes_delivered"],
        )
    except (TypeError, KeyError):
        pass
    plan.progress(info)


def _wait_bound(rx: Proc, port: int, timeout: float) -> list[tuple[str, str, int]] | None:
    """Poll until the receiver has bound `port` (its sockets on that port), exits or
    `timeout` passes (None). Polling its namespace's socket tables every 10 ms is more
    robust than sleeping a guessed time, and tells where it bound."""
    deadline = time.monotonic() + timeout
    watch = BindWatch(rx.pid, port, rx.pid)
    while time.monotonic() < deadline:
        raise_if_terminated()
        on_port = watch.sockets()
        if on_port:
            return on_port
        if rx.wait(0.01):
            return None
    return None


def _wait_receiver(plan: _Plan, rx: Proc, want: str | None, output: str) -> bool:
    """After the sender exits: True once the receiver exits, or (with
    stop_receiver_when_done) once its output is complete and correct, so a receiver
    that lingers to re-ACK (the reference COMN receivers stay max(10 s, 20 of the
    sender's retry intervals): reference/ending.py) does not cost every run that long.
    """
    deadline = time.monotonic() + plan.receiver_grace
    while time.monotonic() < deadline:
        raise_if_terminated()
        if rx.wait(0.02):
            return True
        if plan.verify and plan.stop_receiver_when_done and _output_complete(plan, want, output):
            rx.stopped_when_done = True
            return True
    return False


def _not_bound_error(rx: Proc, port: int, timeout: float, cap: int, elsewhere: str = "") -> str:
    if rx.timed_out:
        return f"receiver did not bind port {port} ({{listen_port}}) within {timeout:g} s" + (
            f"; it bound {elsewhere} instead" if elsewhere else ""
        )
    return f"receiver exited ({describe_exit(rx.exit_code, cap, rx.last_stderr_line())}) before binding port {port}"


def _verify(infile: str, want: str, output: str, size: int) -> tuple[bool, Failure | None]:
    have = os.path.getsize(output) if os.path.exists(output) else None
    if have is None or (have == 0 and size > 0):
        return False, output_mismatch(size, have, None)
    if sha256_file(output) == want:
        return True, None
    return False, output_mismatch(size, have, first_difference(infile, output))


def _program_result(p: Proc) -> ProgramResult:
    return ProgramResult(p.exit_code, p.stdout(TAIL_CHARS), p.stderr(TAIL_CHARS), p.timed_out, p.stopped_when_done)


def _add_link_figures(result: TransferResult, stats: dict | None, tx: Proc) -> None:
    """Wire time, goodput, retransmissions, counters and lag, from the engine's stats.

    Wire time runs from the first forward packet into the link to the last packet out
    of it either way, so the ACK of the last message counts (COMN stops its clock when
    that ACK arrives), whether the run succeeded or not. Reverse packets count only
    within the sender's life (a receiver re-ACKing into the void after the sender left
    is not part of the transfer), and ICMP errors not at all (the "port unreachable" a
    sender's resends draw from a receiver that left). Forward packets count until the last one that brought
    a payload not delivered before, even after the sender exited (a part-1 sender exits
    with its burst still queued); resends of delivered data after it do not (a valid
    sender resending into the void after its receiver left, until it gives up).
    """
    if not stats:
        return
    fwd, rev = stats.get("forward") or {}, stats.get("reverse") or {}
    result.link = stats
    # Like the wire time: the resends before the data had all arrived or that the
    # receiver still answered, not a valid sender's resends into the void after its
    # receiver left.
    to_fresh, to_answer = fwd.get("repeats_to_last_fresh"), fwd.get("repeats_to_last_answer")
    result.retransmissions = None if to_fresh is None else max(to_fresh, to_answer or 0)
    result.packets = {"forward": fwd.get("packets_in"), "reverse": rev.get("packets_in")}
    result.bytes = {"forward": fwd.get("bytes_in"), "reverse": rev.get("bytes_in")}
    result.delay_us = {"forward": fwd.get("delay_us"), "reverse": rev.get("delay_us")}
    lags = [d.get("lag_us") for d in (fwd, rev) if d.get("lag_us")]
    if lags:
        result.lag_us = {k: max((lag.get(k) or 0) for lag in lags) for k in ("p50", "p99", "max")}
    first_in = fwd.get("first_in_ns")
    rev_out = rev.get("last_transport_out_ns")
    if rev_out and tx.exited_ns:
        rev_out = min(rev_out, tx.exited_ns)
    outs = [t for t in (fwd.get("last_fresh_out_ns"), rev_out) if t]
    if first_in is None or not outs:
        return
    start = max(first_in, tx.started_ns)
    end = max(outs)
    if end > start:
        result.wire_time_s = (end - start) / 1e9
        if result.verified:
            result.goodput_kBps = result.size_bytes / 1024 / result.wire_time_s
