"""Programs the harness runs: each in its own process group, with caps and limits.

Every program (sender, receiver, the link engine) is started by a `Processes` set,
used as a context manager: however the block ends (normal end, exception, time-out,
Ctrl-C in a notebook) every process group it started gets SIGTERM, then SIGKILL after
a grace period, and every child is reaped. Captured stdout/stderr keep only their
last `TAIL_BYTES` (read from pipes, so a flood costs no disk), and files a program
writes are capped with RLIMIT_FSIZE (a program writing without end dies of SIGXFSZ).
Each program starts through the exec helper `rdtexec` where it is built (`exec_helper`),
which sets the child up and execs it, so starting one does not fork the harness.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import re
import select
import shlex
import shutil
import resource
import signal
import socket
import struct
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable, Mapping

from harness import sockdiag
from harness.linux import CLONE_NEWNET, libc

TAIL_BYTES = 1 << 20  # stdout/stderr kept per program (the tail)
DEFAULT_FILE_CAP = 64 << 20  # RLIMIT_FSIZE when the caller gives none
KILL_GRACE_S = 1.0  # SIGTERM -> SIGKILL

_PR_SET_PDEATHSIG = 1


class UsageError(ValueError):
    """Bad usage (bad spec, unknown placeholder, missing file...): one line, no traceback."""


class ProgramNotFound(Exception):
    """The command's executable does not exist (a failed transfer, not bad usage)."""


def render(template: str, values: Mapping[str, object], what: str = "command") -> list[str]:
    """Split a command template into argv and fill its {placeholders}.

    Splitting first and filling each word after means a value with spaces (a path)
    stays one argument. A word naming an existing relative path is made absolute,
    because programs run in a per-run directory, not the caller's.
    """
    try:
        words = shlex.split(template)
    except ValueError as e:
        raise UsageError(f"{what} {template!r} cannot be split into words: {e}") from None
    if not words:
        raise UsageError(f"{what} is empty")
    argv = []
    for word in words:
        try:
            filled = word.format_map(values)
        except KeyError as e:
            known = ", ".join("{" + k + "}" for k in sorted(values))
            raise UsageError(
                f"{what} {template!r} uses {{{e.args[0]}}}, which is not a placeholder here (known: {known})"
            ) from None
        except (ValueError, IndexError) as e:
            raise UsageError(f"{what} {template!r}: bad placeholder syntax ({e})") from None
        if not os.path.isabs(filled) and "/" in filled and os.path.exists(filled):
            filled = os.path.abspath(filled)
        argv.append(filled)
    return argv


def which(argv0: str, env: Mapping[str, str] | None = None) -> str:
    """The executable argv0 names, or ProgramNotFound."""
    path = (env or os.environ).get("PATH", os.defpath)
    found = shutil.which(argv0, path=path)
    if found is None:
        if "/" in argv0 and os.path.isfile(argv0):
            raise ProgramNotFound(f"command not executable: {argv0!r} (chmod +x it, or start the command with python3)")
        raise ProgramNotFound(f"command not found: {argv0!r}")
    return found


class _Tail:
    """Reads a pipe to its end in a thread, keeping only the last `cap` bytes."""

    def __init__(self, fd: int, cap: int, on_line: Callable[[bytes], None] | None = None):
        self.fd, self.cap, self.on_line = fd, cap, on_line
        self.data = bytearray()
        self.total = 0
        self._partial = b""
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        try:
            while chunk := os.read(self.fd, 65536):
                self.total += len(chunk)
                self.data += chunk
                if len(self.data) > self.cap:
                    del self.data[: len(self.data) - self.cap]
                if self.on_line:
                    lines = (self._partial + chunk).split(b"\n")
                    self._partial = lines.pop()
                    for line in lines:
                        self.on_line(line)
        except OSError:
            pass
        finally:
            os.close(self.fd)

    def text(self, limit: int | None = None) -> str:
        data = bytes(self.data if limit is None else self.data[-limit:])
        return data.decode("utf-8", errors="replace")


@dataclass
class Proc:
    """One started program (the leader of its own process group)."""

    name: str
    argv: list[str]
    pid: int
    started_ns: int
    _popen: object
    _pidfd: int
    _out: _Tail
    _err: _Tail
    exit_code: int | None = None  # negative: killed by that signal
    exited_ns: int | None = None
    timed_out: bool = False
    stopped_when_done: bool = False  # the harness stopped it on purpose, its job done
    cpu_s: float | None = None  # user + system CPU seconds, its reaped children's included
    # (read when it is reaped: what the run really cost)

    def wait(self, timeout: float | None) -> bool:
        """Wait until the program exits (True) or `timeout` seconds pass (False).

        The leader is not reaped here, so its pid (= the group id) cannot be reused
        while `stop` may still signal the group.
        """
        if self.exited_ns is not None:
            return True
        ready, _, _ = select.select([self._pidfd], [], [], timeout)
        if ready and self.exited_ns is None:
            self.exited_ns = time.monotonic_ns()
        return bool(ready)

    def wait_or(self, other: "Proc | None", timeout: float) -> bool:
        """Wait for self to exit (True); False on time-out or when `other` exits first."""
        if other is None:
            return self.wait(timeout)
        deadline = time.monotonic() + timeout
        while not self.wait(0):
            left = deadline - time.monotonic()
            if left <= 0 or other.wait(0):
                return False
            select.select([self._pidfd, other._pidfd], [], [], left)
        return True

    @property
    def running(self) -> bool:
        return not self.wait(0)

    def stdout(self, limit: int | None = None) -> str:
        self._out.thread.join(timeout=1.0)
        return self._out.text(limit)

    def stderr(self, limit: int | None = None) -> str:
        self._err.thread.join(timeout=1.0)
        return self._err.text(limit)

    def last_stderr_line(self) -> str:
        """What a reason quotes of a program's own words (a student's feedback, one line):
        a crash's exception and where it was raised (crash_line), else its last non-empty
        stderr line; at most LAST_LINE_CHARS long."""
        text = self.stderr(8192)
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        line = crash_line(lines) or (lines[-1] if lines else "")
        return line if len(line) <= LAST_LINE_CHARS else line[: LAST_LINE_CHARS - 1] + "…"

    def signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


LAST_LINE_CHARS = 240
_JAVA_FRAME = re.compile(r"^at \S+\((\w+\.java:\d+)\)$")
_GO_FRAME = re.compile(r"(\w+\.go:\d+)")


def crash_line(lines: list[str]) -> str | None:
    """A JVM's, Go's or Rust's crash as one line: the exception or panic and the first
    place of the program's own it names (a Python traceback already ends with its
    exception, so its last line says it). None: no crash of theirs in `lines`."""
    for k, line in enumerate(lines):
        if line.startswith("Exception in thread ") or re.match(r"^(?:[\w$]+\.)+[\w$]*(?:Exception|Error)\b", line):
            exc = re.sub(r'^Exception in thread "[^"]*" ', "", line)
            frame = next((m.group(1) for ln in lines[k + 1 :] for m in [_JAVA_FRAME.match(ln)] if m), None)
            return exc + (f" ({frame})" if frame else "")
        if line.startswith("panic: "):
            frame = next((m.group(1) for ln in lines[k + 1 :] for m in [_GO_FRAME.search(ln)] if m), None)
            return line + (f" ({frame})" if frame else "")
        if " panicked at " in line:
            return line + (f" {lines[k + 1]}" if k + 1 < len(lines) and not lines[k + 1].startswith("note:") else "")
    return None


KILL_SETTLE_S = 2.0  # at most this long for a SIGKILLed group to be gone


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (`timeout`, `docker stop`, a scheduler's time limit): raised like
    Ctrl-C's KeyboardInterrupt, so the same cleanup runs; exit status 143."""


@contextlib.contextmanager
def terminate_as_interrupt():
    """Within the block, SIGTERM raises `Terminated` (a KeyboardInterrupt) in the main
    thread, so every `with Processes()` block, backend session and temp dir is undone as
    on Ctrl-C. Only where SIGTERM still has its default action (a program that handles
    it itself, e.g. a Jupyter kernel, keeps its handler) and only in the main thread
    (signal handlers can only be set there); nested uses are no-ops."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    me = os.getpid()

    def raise_terminated(signum, frame):
        if os.getpid() != me:  # a forked helper (pyroute2's) inherited the handler: just die
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the cleanup short
        _terminated.set()
        raise Terminated()

    signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _terminated.clear()


_terminated = threading.Event()


def raise_if_terminated() -> None:
    """Raise Terminated in the main thread if SIGTERM came but its exception was lost
    (Python ignores exceptions raised in at-fork hooks, e.g. logging's, and a signal
    can land there while a child is started). Wait loops call this."""
    if _terminated.is_set() and threading.current_thread() is threading.main_thread():
        _terminated.clear()
        raise Terminated()


_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


def _loopback_up() -> None:
    """Bring `lo` of this process's network namespace up (SIOCSIFFLAGS, no netlink)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = bytearray(struct.pack("16sH22x", b"lo", 0))
        fcntl.ioctl(s, _SIOCGIFFLAGS, ifreq)
        flags = struct.unpack_from("H", ifreq, 16)[0] | _IFF_UP
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags))


def _file_cap(file_cap: int) -> int:
    """The RLIMIT_FSIZE a program gets: a jail's (or a shell's ulimit -f) hard cap cannot be raised."""
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    return file_cap if hard == resource.RLIM_INFINITY else min(file_cap, hard)


EXEC_HELPER_ENV = "RDTLAB_EXEC_HELPER"
_HELPER_NAME = "rdtexec"
_BUILT_HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linkemu", "target", "release", _HELPER_NAME)


def exec_helper() -> str | None:
    """The exec helper `rdtexec` (harness/linkemu/src/bin/rdtexec.rs, built with the link
    engine by `make build`): $RDTLAB_EXEC_HELPER (`off`: none), else beside $RDTLAB_LINKEMU,
    else the repo's build, else on PATH. None: programs start through `_child_setup`.

    Through the helper, Popen has no preexec_fn and CPython starts the helper with vfork;
    a preexec_fn makes it fork() the whole harness, several times the CPU of a start in
    a grader with pandas and nbgrader loaded (BENCHMARKS.md, "The engine"). Without
    the helper (a kit installed with only `linkemu`) the programs run the same, slower.
    """
    given = os.environ.get(EXEC_HELPER_ENV)
    if given == "off":
        return None
    if given:
        if not (os.path.isfile(given) and os.access(given, os.X_OK)):
            raise UsageError(
                f"{EXEC_HELPER_ENV}={given} is not an executable file (`make build` builds "
                f"{_BUILT_HELPER}; `off` starts programs without it)"
            )
        return given
    engine = os.environ.get("RDTLAB_LINKEMU")
    for path in ([os.path.join(os.path.dirname(engine), _HELPER_NAME)] if engine else []) + [_BUILT_HELPER]:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which(_HELPER_NAME)


def helper_argv(
    helper: str,
    exe: str,
    args: list[str],
    *,
    parent: int,
    file_cap: int,
    status_fd: int,
    netns_fd: int | None = None,
    priority: int = 0,
    new_netns: bool = False,
) -> list[str]:
    """The helper's command line that does what `_child_setup` does, then runs exe."""
    argv = [helper, "--ppid", str(parent), "--fsize", str(file_cap), "--status-fd", str(status_fd)]
    if netns_fd is not None:
        argv += ["--netns-fd", str(netns_fd)]
    if new_netns:
        argv.append("--new-netns")
    if priority:
        argv += ["--nice", str(priority)]
    return argv + ["--", exe, *args]


_HELPER_STEPS = {
    "setns": "setns into the host's network namespace failed",
    "unshare": "unshare(CLONE_NEWNET) failed",
    "loopback": "bringing up lo in the new network namespace failed",
}


def helper_failure(status: bytes, program: str) -> OSError | None:
    """What the helper wrote on its status fd (`STEP ERRNO`, nothing once the program
    was exec'd) as the OSError Popen raised for it before: exec's own error (so
    FileNotFoundError and PermissionError stay what they were), else one naming the step."""
    if not status:
        return None
    step, _, number = status.decode("ascii", "replace").partition(" ")
    errno = int(number) if number.strip().isdigit() else 0
    if step == "exec":
        return OSError(errno, os.strerror(errno), program)
    return OSError(errno, f"{_HELPER_STEPS.get(step, f'{_HELPER_NAME}: {step} failed')}: {os.strerror(errno)}")


def _child_setup(file_cap: int, netns_fd: int | None, priority: int = 0, new_netns: bool = False) -> Callable[[], None]:
    """What the child does between fork and exec (it must not allocate much or lock),
    where the exec helper is missing; rdtexec does the same in the same order."""
    parent = os.getpid()
    file_cap = _file_cap(file_cap)

    def setup() -> None:
        # If the harness itself is killed hard (SIGKILL, a notebook kernel dying), its
        # children go with it instead of running on (the engine would run forever).
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)
        # The harness ignores a second SIGTERM while it cleans up; exec keeps an ignored
        # signal ignored, so give the program the default back.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_cap, file_cap))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if netns_fd is not None and libc.setns(netns_fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns into the host's network namespace failed")
        if new_netns:  # a network namespace of its own, loopback up: others join it by its pid
            if libc.unshare(CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET) failed")
            _loopback_up()
        if priority:
            try:
                os.setpriority(os.PRIO_PROCESS, 0, priority)  # before exec: its threads inherit it
            except OSError:
                pass  # not root: the default priority

    return setup


class Processes:
    """The set of programs one run started; leaving the `with` block ends them all."""

    def __init__(self) -> None:
        self.procs: list[Proc] = []

    def __enter__(self) -> "Processes":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(
        self,
        name: str,
        argv: list[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        file_cap: int = DEFAULT_FILE_CAP,
        netns: str | None = None,
        on_stdout_line: Callable[[bytes], None] | None = None,
        priority: int = 0,
        new_netns: bool = False,
    ) -> Proc:
        """Start argv in its own process group (in network namespace `netns` if given:
        a name under /run/netns or a path such as /proc/PID/ns/net).
        `priority`: its nice value, where this process may set it (below 0 takes root).
        `new_netns`: in a new network namespace with only its loopback, up (root); the
        namespace lives as long as a process is in it, so it needs no removing.

        Raises ProgramNotFound when the executable does not exist.
        """
        exe = which(argv[0], env)
        helper = exec_helper()
        ns_fd = (
            os.open(netns if netns.startswith("/") else f"/run/netns/{netns}", os.O_RDONLY | os.O_CLOEXEC)
            if netns
            else None
        )
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        status_r, status_w = os.pipe() if helper else (None, None)
        common = dict(
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            start_new_session=True,
        )
        # The start time is taken before the fork: a fast child (a small transfer on a
        # link without delay) may finish its work before Popen returns to a busy parent.
        started_ns = time.monotonic_ns()
        try:
            if helper:
                try:
                    popen = subprocess.Popen(
                        helper_argv(
                            helper,
                            exe,
                            argv[1:],
                            parent=os.getpid(),
                            file_cap=_file_cap(file_cap),
                            status_fd=status_w,
                            netns_fd=ns_fd,
                            priority=priority,
                            new_netns=new_netns,
                        ),
                        pass_fds=(status_w,) if ns_fd is None else (status_w, ns_fd),
                        **common,
                    )
                except OSError as e:  # the helper itself, not the program (removed by a rebuild?)
                    raise UsageError(
                        f"cannot run the exec helper {helper}: {e.strerror} (`make build` builds it; "
                        f"{EXEC_HELPER_ENV}=off starts programs without it)"
                    ) from None
                os.close(status_w)
                status_w = None
                try:  # like Popen's own exec check: end-of-file once the program is exec'd
                    failure = helper_failure(_read_all(status_r), exe)
                except BaseException:  # Ctrl-C meanwhile: the program is nobody's yet
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(popen.pid, signal.SIGKILL)
                    popen.wait()
                    raise
                if failure is not None:
                    popen.wait()
                    raise failure
            else:
                popen = subprocess.Popen(
                    [exe, *argv[1:]], preexec_fn=_child_setup(file_cap, ns_fd, priority, new_netns), **common
                )
        except FileNotFoundError:
            os.close(out_r), os.close(err_r)
            raise ProgramNotFound(f"command not found: {argv[0]!r}") from None
        except PermissionError:
            os.close(out_r), os.close(err_r)
            raise ProgramNotFound(f"command not executable: {argv[0]!r}") from None
        except BaseException:
            os.close(out_r), os.close(err_r)
            raise
        finally:
            os.close(out_w), os.close(err_w)
            for fd in (ns_fd, status_r, status_w):
                if fd is not None:
                    os.close(fd)
        proc = Proc(
            name,
            list(argv),
            popen.pid,
            started_ns,
            popen,
            os.pidfd_open(popen.pid),
            _Tail(out_r, TAIL_BYTES, on_stdout_line),
            _Tail(err_r, TAIL_BYTES),
        )
        self.procs.append(proc)
        return proc

    def stop(self, proc: Proc, grace: float = KILL_GRACE_S) -> None:
        """End proc's whole group: SIGTERM, then SIGKILL after `grace` s; reap the leader."""
        if proc.exit_code is not None:
            return
        if not proc.wait(0):
            proc.signal_group(signal.SIGTERM)
            if not proc.wait(grace):
                proc.signal_group(signal.SIGKILL)
                proc.wait(None)
        # The leader is a zombie here, so its group id is still ours: clear stragglers.
        proc.signal_group(signal.SIGKILL)
        # Reap the leader (its times, its reaped children's included, come with it); the
        # group's id stays taken while any straggler holds it, so it cannot be reused
        # while we look. Then see them gone (SIGKILL lands asynchronously: on a loaded
        # machine a killed grandchild can still be listed for a moment), so "stopped"
        # means nothing is left: asked of the kernel in one call, and /proc scanned (which
        # tells zombies apart) only when something answers.
        _, status, usage = os.wait4(proc.pid, 0)
        proc.cpu_s = usage.ru_utime + usage.ru_stime
        proc.exit_code = proc._popen.returncode = os.waitstatus_to_exitcode(status)
        deadline = time.monotonic() + KILL_SETTLE_S
        while group_exists(proc.pid) and pids_in_group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        os.close(proc._pidfd)
        proc._out.thread.join(timeout=2.0)
        proc._err.thread.join(timeout=2.0)

    @property
    def cpu_s(self) -> float:
        """CPU seconds of the programs stopped so far (after `close`: all of them)."""
        return sum(p.cpu_s or 0.0 for p in self.procs)

    def close(self) -> None:
        """Stop every program still running (SIGTERM to all first, so graces overlap)."""
        live = [p for p in self.procs if p.exit_code is None]
        for p in live:
            if not p.wait(0):
                p.signal_group(signal.SIGTERM)
        for p in live:
            self.stop(p)


def _read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 256):
        data += chunk
    return data


def group_exists(pgid: int) -> bool:
    """Whether any process (a zombie too) has process group pgid: one system call, where
    `pids_in_group` reads every process's stat (milliseconds on a busy machine)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # there, but another user's
        return True
    return True


def _read_small(path: str) -> bytes:
    """A small /proc file's content, in one read: os.open/os.read, not open(), half the
    CPU (every stop() scans all of /proc, every bind poll reads the socket counters)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def pids_in_group(pgid: int) -> list[int]:
    """Processes whose process group is pgid (for checks that nothing is left)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = _read_small(f"/proc/{entry}/stat")
        except OSError:
            continue
        fields = stat.rsplit(b")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != b"Z":
            found.append(int(entry))
    return found


def _address(hexaddr: str) -> str:
    """An address as /proc/net/{udp,tcp}[6] prints it (32-bit words in host order)."""
    raw = bytes.fromhex(hexaddr)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, words)


# What the namespace's socket counters say ("inuse" of UDP and TCP, v4 and v6): the
# kernel counts a UDP socket there once it is bound, and a TCP one once it listens or
# connects. Reading them costs a fraction of reading the socket tables, which walks the
# kernel's whole hash, and a jailed receiver's bind takes many polls (BENCHMARKS.md,
# "Notebooks").
_COUNTED = (b"TCP:", b"UDP:", b"TCP6:", b"UDP6:")


def socket_counts(pid: int) -> tuple[int, ...] | None:
    """The `inuse` counters of PID's network namespace (sockstat, sockstat6), in the
    order of _COUNTED: -1 for one not read (no sockstat6 where IPv6 is off); None when
    none can be read."""
    counts = {}
    for name in ("sockstat", "sockstat6"):
        try:
            data = _read_small(f"/proc/{pid}/net/{name}")
        except OSError:
            continue
        for line in data.split(b"\n"):
            cols = line.split()
            if len(cols) >= 3 and cols[0] in _COUNTED and cols[1] == b"inuse":
                counts[cols[0]] = int(cols[2])
    return tuple(counts.get(label, -1) for label in _COUNTED) if counts else None


def bound_sockets(pid: int, pgid: int | None = None, port: int | None = None) -> list[tuple[str, str, int]]:
    """(proto, address, port) of every UDP socket and listening TCP socket in PID's
    network namespace (/proc/PID/net/* shows that namespace); with `pgid`, only those
    open in a process of that group (on loopback other programs hold sockets too); with
    `port`, only those on that port (a poll for one bind then reads no process's fds
    until some socket has that port)."""
    found: dict[str, tuple[str, str, int]] = {}
    # A family's TCP listeners are looked for only where its count in sockstat is not
    # 0 (harness/sockdiag.py says what a look costs; the count costs nothing); unknown
    # (unreadable), they are. TCP's tables walk the established hash (milliseconds a
    # read): its listeners from sock_diag instead, where the kernel answers.
    counts = socket_counts(pid)
    tcp_tables = [
        t for t, label in (("tcp", b"TCP:"), ("tcp6", b"TCP6:")) if counts is None or counts[_COUNTED.index(label)] != 0
    ]
    listening = sockdiag.listeners(pid) if tcp_tables else None
    for table in ["udp", "udp6"] + (tcp_tables if listening is None else []):
        try:
            with open(f"/proc/{pid}/net/{table}") as f:
                next(f)
                for line in f:
                    cols = line.split()
                    if table.startswith("udp") or cols[3] == "0A":
                        addr, hex_port = cols[1].rsplit(":", 1)
                        number = int(hex_port, 16)
                        if port is None or number == port:
                            found[f"socket:[{cols[9]}]"] = (table[:3], _address(addr), number)
        except (OSError, StopIteration, ValueError):
            continue
    found.update((k, v) for k, v in (listening or {}).items() if port is None or v[2] == port)
    if pgid is None or not found:
        return list(found.values())
    # The leader first: most programs are one process, and scanning /proc for the
    # group costs milliseconds (this runs every 10 ms until the bind).
    mine = _sockets_of(pid, found, [])
    if mine:
        return mine
    for member in pids_in_group(pgid):
        if member != pid:
            _sockets_of(member, found, mine)
    return mine


def _sockets_of(pid: int, found: dict, mine: list) -> list:
    """Add to `mine` the sockets of `found` that process PID has open; returns `mine`."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            sock = found.get(os.readlink(f"/proc/{pid}/fd/{fd}"))
            if sock and sock not in mine:
                mine.append(sock)
    except OSError:
        pass
    return mine


class BindWatch:
    """Polls for a program's bind of `port` (bound_sockets: its group's UDP sockets and
    TCP listeners on it), reading the socket tables only when the namespace's counters
    have moved since the last read found nothing, and every FULL_EVERY-th poll whatever
    they say (a close elsewhere at the same moment leaves them where they were)."""

    FULL_EVERY = 10

    def __init__(self, pid: int, port: int, pgid: int | None = None):
        self.pid, self.port, self.pgid = pid, port, pgid
        self._quiet: tuple[int, ...] | None = None  # the counters when the tables last showed nothing
        self.polls = self.reads = 0

    def sockets(self) -> list[tuple[str, str, int]]:
        """The program's sockets on the port (empty: not bound yet)."""
        counts = socket_counts(self.pid)
        self.polls += 1
        if counts is not None and counts == self._quiet and self.polls % self.FULL_EVERY:
            return []
        self.reads += 1
        found = bound_sockets(self.pid, self.pgid, self.port)
        if not found:
            self._quiet = counts  # read before the tables: a bind since then moves them
        return found


def describe_exit(code: int, file_cap: int | None = None, last_line: str = "") -> str:
    """'exit 3: <its last stderr line>', 'killed by SIGKILL', or the file-cap reason.

    A program past RLIMIT_FSIZE dies of SIGXFSZ, or (Python ignores that signal) gets
    EFBIG, 'File too large', from write(); both are reported as the cap.
    """
    cap = f"it wrote past the file-size cap of {file_cap} bytes" if file_cap else ""
    if code >= 0:
        text = f"exit {code}"
        if cap and "File too large" in last_line:
            text += f", {cap}"
        return text + (f": {last_line}" if last_line else "")
    sig = -code
    if sig == signal.SIGXFSZ and cap:
        return f"killed by SIGXFSZ, {cap}"
    try:
        return f"killed by {signal.Signals(sig).name}"
    except ValueError:
        return f"killed by signal {sig}"
