"""The jail a student's program (or build) runs in: bubblewrap under its own uid.

`Sandbox.prefix()` is a command prefix, so the harness starts the jailed program as
any other (in the run's network namespace on the netns backend, whose only route is
the emulated link: there is no `--unshare-net` here). The prefix runs grader/jail/launcher.py
as root, which then, just before exec'ing bwrap:
  - mounts a size-capped tmpfs, owned by the jail's uid, on the run's directory (the
    harness's cwd, where the receiver writes its output), so the jail can write there
    (atomically, by rename) but not fill the disk; `unmount_runs` removes it after
    the run. Its scratch folder is a size-capped tmpfs too (`mount_scratch`);
  - sets resource limits: data size, processes (per uid, and the uid is the
    submission's alone), CPU seconds, file size, open files, no core dumps; and joins
    the jail's control group, which caps all its processes together (grader/jail/cgroups.py);
  - drops to that uid (no groups, no capabilities) and execs bwrap, itself with an empty
    environment and its options on a pipe (bwrap's init is the jail's PID 1, whose
    /proc/1/environ and cmdline the programs can read), with: the system's program
    folders (/usr, /bin, /lib...) read-only, of /etc only what linkers, `localhost` and
    the toolchains read (ETC_VISIBLE), and nothing else of the machine (no /opt, /var,
    /home, /root, /work, /srv); a private /tmp and /run; every hidden path (the battery, the
    reference, other submissions, the results) empty and read-only if it would show;
    the submission's scratch copy and the run's directory writable; files named on the
    command line (the input) read-only, and any path given with --ro (a notebook
    kernel's interpreter and the kit's harness: grader/notebook/notebook_jail.py); a clean
    environment (plus --env); its own user, pid, ipc and uts namespaces, so everything
    it started dies with it, and it cannot signal anything outside.
Its network is the run's: the netns backend's host namespaces, or on the local backend
a namespace of the run's own (harness/backends/local.py, `own_network`); builds and
notebook kernels get an empty one. Needs root (to switch uid) and bubblewrap;
`available()` says why not otherwise. What it isolates, for a reader who must sign off
on it: docs/operator/jail.md.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field

from grader.jail import cgroups

# the launcher's names, for the grader's side (and the tests) to find here too
from grader.jail.launcher import (
    ETC_VISIBLE,
    SAFE_PATH,
    UID_BASE,
    argv_through_pipe,
    bwrap_argv,
    etc_visible,
    run_mount_source,
)


# Started without site (grader/jail/launcher.py says why), from its module's cached bytecode:
# a script is compiled at every start (at each of a notebook's dozens of jailed program
# starts). `-c` puts '' (the run's folder) first on the path: the kit's root
# replaces it before anything is imported.
KIT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAUNCHER = f"import sys; sys.path[0] = {KIT!r}; from grader.jail.launcher import main; main()"


@dataclass(frozen=True)
class GroupLimits:
    """What a jail's processes use together, capped by its control group (grader/jail/cgroups.py)."""

    memory_bytes: int = 2 << 30  # all the jail's processes together
    # CPU time per period, in cores: two, so a sender and a receiver that both poll in
    # a busy loop (a valid design) each keep a core; the grader's --jobs shares the rest.
    cpus: float = 2.0
    tasks: int = 768  # processes and threads (RLIMIT_NPROC holds the same without a group)


@dataclass
class Limits:
    """Per-process limits that stop attacks, not designs. Memory and tasks are capped for
    the jail as a whole by its control group (GroupLimits: what the processes really
    use); these are what hold where no group can be had. Not the address space: each
    thread reserves its stack (8 MiB) and a JVM reserves gigabytes it never touches, so
    RLIMIT_AS stopped a thread per timer and `java -version` alike. RLIMIT_DATA counts
    the writable memory a process maps (its heap, and thread stacks: 4 GiB admits ~500
    threads), RLIMIT_NPROC the uid's tasks, threads included (a thread per packet in
    flight at window 256, in a sender and a receiver both)."""

    memory_bytes: int = 4 << 30  # RLIMIT_DATA, per process
    processes: int = 768  # RLIMIT_NPROC for the jail's uid (tasks: threads count)
    cpu_seconds: int = 120  # RLIMIT_CPU
    file_bytes: int = 256 << 20  # RLIMIT_FSIZE (the harness may set it lower)
    open_files: int = 256
    scratch_bytes: int = 64 << 20  # the tmpfs holding its scratch copy
    group: GroupLimits = field(default_factory=GroupLimits)  # all its processes together (grader/jail/cgroups.py)


@dataclass
class Sandbox:
    """One submission's jail: its uid, its scratch folder, what it must not see."""

    uid: int
    scratch: str
    hidden: list[str] = field(default_factory=list)
    limits: Limits = field(default_factory=Limits)
    network: bool = True  # False: own empty network namespace (builds, notebooks)
    visible: list[str] = field(default_factory=list)  # more read-only paths (a kernel's interpreter, the kit)
    env: dict[str, str] = field(default_factory=dict)  # besides PATH, HOME and LANG
    run_dir: bool = True  # False: no run folder (a kernel works in its scratch copy)
    # The programs' runs on the local backend get a network namespace of their own
    # (harness/backends/local.py); False only where the runner itself is one disposable,
    # network-isolated machine (`--runner-isolates-network`).
    own_network: bool = True

    def prefix(self) -> list[str]:
        argv = [
            sys.executable,
            "-S",
            "-c",
            LAUNCHER,
            "--uid",
            str(self.uid),
            "--scratch",
            self.scratch,
            "--memory",
            str(self.limits.memory_bytes),
            "--processes",
            str(self.limits.processes),
            "--cpu",
            str(self.limits.cpu_seconds),
            "--file-size",
            str(self.limits.file_bytes),
            "--open-files",
            str(self.limits.open_files),
            "--group-memory",
            str(self.limits.group.memory_bytes),
            "--group-cpus",
            str(self.limits.group.cpus),
            "--group-tasks",
            str(self.limits.group.tasks),
        ]
        for path in self.hidden:
            argv += ["--hide", path]
        for path in self.visible:
            argv += ["--ro", path]
        for name, value in self.env.items():
            argv += ["--env", f"{name}={value}"]
        if not self.network:
            argv.append("--no-network")
        if not self.run_dir:
            argv.append("--no-run-dir")
        return argv + ["--"]

    def template(self, argv: list[str]) -> str:
        """The prefixed command as a harness Program template (braces of paths escaped)."""
        return (
            " ".join(shlex.quote(w.replace("{", "{{").replace("}", "}}")) for w in self.prefix()) + " " + " ".join(argv)
        )


def available() -> str | None:
    """None when jails can be made here, else the reason."""
    if os.geteuid() != 0:
        return "the sandbox needs root (it runs each submission under its own uid)"
    if shutil.which("bwrap") is None:
        return "the sandbox needs bubblewrap (apt-get install bubblewrap)"
    return None


def mount_scratch(path: str, size: int) -> None:
    """A tmpfs of `size` bytes at `path`: what the jail writes cannot fill the disk."""
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0711,nosuid,nodev", "tmpfs", path],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise OSError(f"cannot mount the scratch tmpfs at {path}: {done.stderr.strip()}")


def unmount_scratch(path: str) -> None:
    subprocess.run(["umount", "-l", path], capture_output=True)


def prepare_scratch(source: str, scratch: str, uid: int, ignore=None) -> str:
    """A private copy of the submission at `scratch`/sub, owned by the jail's uid.

    Never its `__pycache__`: copytree keeps mtimes, so a handed-in .pyc that is not its
    .py would run in the source's place (and an unchecked-hash .pyc is never compared with
    it). The jail compiles the sources itself and caches them in this copy. Nor a lab's
    build folder (.rdtlab): what runs is built here from the sources handed in."""
    os.chmod(scratch, 0o711)  # the jail may pass through, not list

    def skipped(folder: str, names: list[str]) -> set[str]:
        return {"__pycache__", ".rdtlab"}.intersection(names) | set(ignore(folder, names) if ignore else ())

    dest = os.path.join(scratch, "sub")
    shutil.copytree(source, dest, symlinks=True, ignore=skipped)
    for root, dirs, files in os.walk(dest):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, uid)
    os.chown(dest, uid, uid)
    return dest


# The scratch folders a grading process makes in the temporary folder, each named with
# its pid: a submission's (grader/protocol/grade.py), a notebook kernel's and the class's kernel
# TCP runs (grader/notebook/autograde.py), a re-measurement's (grader/notebook/remeasure.py), and a run's
# (harness/transfer.py, whose receiver folder a jailed run mounts a tmpfs on).
SCRATCH = re.compile(r"^rdt-(?:grade|kernel|kernel-tcp|remeasure|run|reftraces)-(\d+)-")


def sweep_scratch(folder: str | None = None) -> list[str]:
    """Remove the scratch folders, and the tmpfs mounted in them, of graders killed hard
    (a grader removes its own on exit, Ctrl-C and SIGTERM; not after SIGKILL or an
    out-of-memory kill): only those whose pid is gone, only mounts this namespace sees.
    Returns the folders removed."""
    folder = folder or tempfile.gettempdir()
    gone = []
    for name in sorted(os.listdir(folder)):
        owner = SCRATCH.match(name)
        if owner and not os.path.exists(f"/proc/{owner.group(1)}"):
            gone.append(os.path.join(folder, name))
    if gone:
        targets = [target for target, _ in mounts()]
        for path in gone:
            for target in sorted(mounts_under(path, targets), key=len, reverse=True):  # the deepest first
                unmount_scratch(target)
            shutil.rmtree(path, ignore_errors=True)
    return gone


def mounts() -> list[tuple[str, str]]:
    """(mount point, source) of every mount this mount namespace sees."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields, _, tail = line.partition(" - ")  # after it: the type, the source, options
            source = tail.split()[1:2]
            found.append((fields.split()[4].replace("\\040", " "), source[0] if source else ""))
    return found


def mounts_under(path: str, targets: list[str] | None = None) -> list[str]:
    """The mount points at or below `path`: of `targets`, else of every mount here."""
    targets = [target for target, _ in mounts()] if targets is None else targets
    return [t for t in targets if t == path or t.startswith(path + "/")]


def unmount_runs(uid: int) -> None:
    """Unmount the run tmpfs of jail `uid` and remove the mount points the harness
    could not (it removed the run's folder around them)."""
    for target in [target for target, source in mounts() if source == run_mount_source(uid)]:
        unmount_scratch(target)
        for folder in (target, os.path.dirname(target)):
            try:
                os.rmdir(folder)
            except OSError:
                pass


def kill_uid(uid: int) -> int:
    """SIGKILL every process running as `uid` (a daemon that escaped), and delete its
    control group; how many were killed by uid."""
    killed = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    os.kill(int(entry), 9)
                    killed += 1
            except OSError:
                pass
    cgroups.remove(uid)
    return killed


@contextmanager
def jail_scratch(uid: int, kind: str, size: int):
    """A scratch folder for jail `uid`: a tmpfs of `size` bytes at `rdt-<kind>-PID-...` in
    the temporary folder (named for sweep_scratch). Afterwards everything the uid started
    is killed, its runs' mounts and the tmpfs unmounted, and the folder removed."""
    scratch = tempfile.mkdtemp(prefix=f"rdt-{kind}-{os.getpid()}-")
    mounted = False
    try:
        mount_scratch(scratch, size)
        mounted = True
        yield scratch
    finally:
        kill_uid(uid)
        unmount_runs(uid)
        if mounted:
            unmount_scratch(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
