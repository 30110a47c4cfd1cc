"""The jail a student's program (or build) runs in: bubblewrap under its own uid.

`Sandbox.prefix()` is a command prefix, so the harness starts the jailed program as
any other (in the run's network namespace on the netns backend, whose only route is
the emulated link: there is no `--unshare-net` here). The prefix runs this module as
root, which then, just before exec'ing bwrap:
  - mounts a size-capped tmpfs, owned by the jail's uid, on the run's directory (the
    harness's cwd, where the receiver writes its output), so the jail can write there
    (atomically, by rename) but not fill the disk; `unmount_runs` removes it after
    the run. Its scratch folder is a size-capped tmpfs too (`mount_scratch`);
  - sets resource limits: data size, processes (per uid, and the uid is the
    submission's alone), CPU seconds, file size, open files, no core dumps; and joins
    the jail's control group, which caps all its processes together (grader/cgroups.py);
  - drops to that uid (no groups, no capabilities) and execs bwrap, itself with an empty
    environment and its options on a pipe (bwrap's init is the jail's PID 1, whose
    /proc/1/environ and cmdline the programs can read), with: the system's program
    folders (/usr, /bin, /lib...) read-only, of /etc only what linkers, `localhost` and
    the toolchains read (ETC_VISIBLE), and nothing else of the machine (no /opt, /var,
    /home, /root, /work, /srv); a private /tmp and /run; every hidden path (the battery, the
    reference, other submissions, the results) empty and read-only if it would show;
    the submission's scratch copy and the run's directory writable; files named on the
    command line (the input) read-only, and any path given with --ro (a notebook
    kernel's interpreter and the kit's harness: grader/notebook_jail.py); a clean
    environment (plus --env); its own user, pid, ipc and uts namespaces, so everything
    it started dies with it, and it cannot signal anything outside.
Its network is the run's: the netns backend's host namespaces, or on the local backend
a namespace of the run's own (harness/backends/local.py, `own_network`); builds and
notebook kernels get an empty one. Needs root (to switch uid) and bubblewrap;
`available()` says why not otherwise. What it isolates, for a reader who must sign off
on it: docs/jail.md.
"""
from __future__ import annotations

import argparse
import glob
import os
import resource
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

from grader import cgroups
from grader.cgroups import GroupLimits

# Only these of the machine's folders are in the jail (read-only): the programs, the
# interpreters and compilers, their libraries. Not the whole root (binding / would race
# with the namespaces other runs mount under /run/netns), and not /etc, /opt, /var, /home
# or /root, where a host keeps its configuration and secrets: what is not there needs
# no hiding.
VISIBLE = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Of /etc, only what the dynamic linker, name resolution of `localhost`, the time zone
# and the toolchains read (Debian's JDK keeps its jvm.cfg and security settings under
# /etc/java-*; /usr/bin/java and cc are links through /etc/alternatives).
ETC_VISIBLE = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "hosts", "host.conf", "nsswitch.conf",
               "gai.conf", "alternatives", "mime.types", "java-*-openjdk", "python3*", "ssl/openssl.cnf")
ALWAYS_HIDDEN = ("/tmp", "/var/tmp", "/run")     # private, empty and writable in the jail
UID_BASE = 3_000_000      # jail uids: no account on the machine has them
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


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
    memory_bytes: int = 4 << 30      # RLIMIT_DATA, per process
    processes: int = 768             # RLIMIT_NPROC for the jail's uid (tasks: threads count)
    cpu_seconds: int = 120           # RLIMIT_CPU
    file_bytes: int = 256 << 20      # RLIMIT_FSIZE (the harness may set it lower)
    open_files: int = 256
    scratch_bytes: int = 64 << 20    # the tmpfs holding its scratch copy
    group: GroupLimits = field(default_factory=GroupLimits)   # all its processes together (grader/cgroups.py)


@dataclass
class Sandbox:
    """One submission's jail: its uid, its scratch folder, what it must not see."""
    uid: int
    scratch: str
    hidden: list[str] = field(default_factory=list)
    limits: Limits = field(default_factory=Limits)
    network: bool = True              # False: own empty network namespace (builds, notebooks)
    visible: list[str] = field(default_factory=list)   # more read-only paths (a kernel's interpreter, the kit)
    env: dict[str, str] = field(default_factory=dict)  # besides PATH, HOME and LANG
    run_dir: bool = True              # False: no run folder (a kernel works in its scratch copy)
    # The programs' runs on the local backend get a network namespace of their own
    # (harness/backends/local.py); False only where the runner itself is one disposable,
    # network-isolated machine (`--runner-isolates-network`).
    own_network: bool = True

    def prefix(self) -> list[str]:
        argv = [sys.executable, "-m", "grader.sandbox", "--uid", str(self.uid), "--scratch", self.scratch,
                "--memory", str(self.limits.memory_bytes), "--processes", str(self.limits.processes),
                "--cpu", str(self.limits.cpu_seconds), "--file-size", str(self.limits.file_bytes),
                "--open-files", str(self.limits.open_files), "--group-memory", str(self.limits.group.memory_bytes),
                "--group-cpus", str(self.limits.group.cpus), "--group-tasks", str(self.limits.group.tasks)]
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
        return " ".join(shlex.quote(w.replace("{", "{{").replace("}", "}}")) for w in self.prefix()) \
            + " " + " ".join(argv)


def available() -> str | None:
    """None when jails can be made here, else the reason."""
    if os.geteuid() != 0:
        return "the sandbox needs root (it runs each submission under its own uid)"
    if shutil.which("bwrap") is None:
        return "the sandbox needs bubblewrap (apt-get install bubblewrap)"
    return None


def mount_scratch(path: str, size: int) -> None:
    """A tmpfs of `size` bytes at `path`: what the jail writes cannot fill the disk."""
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0711,nosuid,nodev", "tmpfs", path],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise OSError(f"cannot mount the scratch tmpfs at {path}: {done.stderr.strip()}")


def unmount_scratch(path: str) -> None:
    subprocess.run(["umount", "-l", path], capture_output=True)


def prepare_scratch(source: str, scratch: str, uid: int, ignore=None) -> str:
    """A private copy of the submission at `scratch`/sub, owned by the jail's uid."""
    os.chmod(scratch, 0o711)          # the jail may pass through, not list
    dest = os.path.join(scratch, "sub")
    shutil.copytree(source, dest, symlinks=True, ignore=ignore)
    for root, dirs, files in os.walk(dest):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, uid)
    os.chown(dest, uid, uid)
    return dest


def run_mount_source(uid: int) -> str:
    """The name the run tmpfs of jail `uid` is mounted under (found again by it)."""
    return f"rdtjail-{uid}"


def unmount_runs(uid: int) -> None:
    """Unmount the run tmpfs of jail `uid` and remove the mount points the harness
    could not (it removed the run's folder around them)."""
    with open("/proc/self/mountinfo") as f:
        targets = [line.split()[4] for line in f
                   if line.split(" - ", 1)[-1].split()[1:2] == [run_mount_source(uid)]]
    for target in targets:
        target = target.replace("\\040", " ")
        subprocess.run(["umount", "-l", target], capture_output=True)
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


# ---- the launcher (runs as root inside the run's network namespace) ---------------------

def bwrap_argv(uid: int, scratch: str, cwd: str | None, hidden: list[str], command: list[str], network: bool,
               visible: dict[str, str] | None = None, env: dict[str, str] | None = None) -> list[str]:
    """`visible`: more read-only paths, {path in the jail: where bwrap finds it}."""
    argv = ["bwrap"]
    for path in VISIBLE:            # read-only; /etc, /run, /home, /root, /srv, /work... are not there
        argv += ["--ro-bind-try", path, path]
    for path in etc_visible():
        argv += ["--ro-bind", path, path]
    argv += ["--dev", "/dev", "--proc", "/proc"]
    for path in ALWAYS_HIDDEN:      # private and empty (a program may use its own /tmp)
        argv += ["--tmpfs", path]
    # what the caller shows besides (the kit, an interpreter): after the private /tmp, which
    # would cover a kit checked out under /tmp
    for path, source in (visible or {}).items():
        argv += ["--ro-bind", source, path]
    shown = VISIBLE + ALWAYS_HIDDEN + tuple(os.path.normpath(v) for v in (visible or {}))
    hidden = [os.path.normpath(h) for h in hidden]
    outer = [h for h in hidden if not any(h.startswith(o + "/") for o in hidden)]   # covers what is inside
    for path in sorted(set(outer)):  # empty and read-only: nothing to read, nowhere to write
        if not path.startswith(tuple(p + "/" for p in shown)):
            continue                # not in the jail at all (its root is read-only)
        if os.path.isdir(path):
            argv += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.exists(path):
            argv += ["--ro-bind", "/dev/null", path]
    argv += ["--bind", scratch, scratch] + (["--bind", cwd, cwd] if cwd else [])
    writable = (scratch + "/",) + ((cwd + "/",) if cwd else ())
    for word in command[1:]:     # the input file and any other file the command names
        if os.path.isabs(word) and os.path.isfile(word) and not word.startswith(writable):
            argv += ["--ro-bind", word, word]
    argv += ["--remount-ro", "/", "--chdir", scratch, "--clearenv", "--setenv", "PATH", SAFE_PATH, "--setenv", "HOME", scratch,
             "--setenv", "LANG", "C.UTF-8"]
    # Python may cache bytecode: only in the submission's own scratch copy (the rest is
    # read-only), so each program starts after the first skip compiling the student's
    # modules (9 of the reference's 50 CPU-ms a start).
    for name, value in (env or {}).items():
        argv += ["--setenv", name, value]
    argv += ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
             "--die-with-parent", "--uid", str(uid), "--gid", str(uid), "--cap-drop", "ALL"]
    if not network:
        argv.append("--unshare-net")
    return argv + ["--", *command]


def mount_run_dir(cwd: str, uid: int, file_size: int) -> None:
    """The size-capped tmpfs, owned by the jail, on the run's folder (see the top)."""
    cap = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    cap = file_size if cap == resource.RLIM_INFINITY else min(cap, file_size)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={cap + (32 << 20)},mode=0700,uid={uid},"
                              f"gid={uid},nosuid,nodev", run_mount_source(uid), cwd],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        sys.exit(f"grader.sandbox: cannot mount the run's tmpfs on {cwd}: {mounted.stderr.strip()}")
    parent = os.path.dirname(cwd)
    os.chmod(parent, os.stat(parent).st_mode | 0o011)    # bwrap (as the uid) passes through


STAGE = "/mnt"        # where, in the launcher's own mount namespace, staged paths are bound


def stage_paths(paths: list[str]) -> dict[str, str]:
    """{path: a place the jail's uid can reach it} for each path that exists.

    bwrap runs as the jail's uid, which may not pass through a path's parents (pyenv's
    interpreter is under /root, mode 0700). So, as root, in a mount namespace of this
    launcher alone (nothing propagates back), each path is bound under a fresh tmpfs on
    STAGE, which bwrap then binds read-only where the path was."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x00020000) != 0:                      # CLONE_NEWNS
        sys.exit(f"grader.sandbox: cannot make a mount namespace: {os.strerror(ctypes.get_errno())}")
    for argv in (["mount", "--make-rprivate", "/"], ["mount", "-t", "tmpfs", "-o", "mode=0755,size=1m", "rdtstage", STAGE]):
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"grader.sandbox: cannot stage the jail's read-only paths ({' '.join(argv)}): {done.stderr.strip()}")
    staged = {}
    for n, path in enumerate(paths):
        if not os.path.exists(path):
            continue
        target = os.path.join(STAGE, str(n))
        if os.path.isdir(path):
            os.mkdir(target)
        else:
            open(target, "w").close()
        done = subprocess.run(["mount", "--bind", path, target], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"grader.sandbox: cannot stage {path}: {done.stderr.strip()}")
        staged[os.path.normpath(path)] = target
    return staged


def etc_visible() -> list[str]:
    """The files and folders of ETC_VISIBLE this machine has."""
    return sorted({path for pattern in ETC_VISIBLE for path in glob.glob(os.path.join("/etc", pattern))})


def argv_through_pipe(argv: list[str]) -> list[str]:
    """bwrap's argv with its options passed on a pipe (`--args FD`), read once and gone,
    so no process of the jail finds them in /proc/1/cmdline."""
    end = argv.index("--")           # the command stays: it is the program's own cmdline anyway
    data = b"".join(os.fsencode(word) + b"\0" for word in argv[1:end])
    if len(data) >= 60_000:          # a pipe holds 64 KiB: write no more than fits unread
        return argv
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    os.set_inheritable(read, True)
    return [argv[0], "--args", str(read), *argv[end:]]


def _limit(which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    if soft != resource.RLIM_INFINITY:
        value = min(value, soft)     # keep a lower cap the harness set (file size)
    resource.setrlimit(which, (value, value))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="grader.sandbox")
    p.add_argument("--uid", type=int, required=True)
    p.add_argument("--scratch", required=True)
    p.add_argument("--hide", action="append", default=[])
    p.add_argument("--memory", type=int, default=Limits.memory_bytes)
    p.add_argument("--processes", type=int, default=Limits.processes)
    p.add_argument("--cpu", type=int, default=Limits.cpu_seconds)
    p.add_argument("--file-size", type=int, default=Limits.file_bytes)
    p.add_argument("--open-files", type=int, default=Limits.open_files)
    p.add_argument("--group-memory", type=int, default=GroupLimits.memory_bytes)
    p.add_argument("--group-cpus", type=float, default=GroupLimits.cpus)
    p.add_argument("--group-tasks", type=int, default=GroupLimits.tasks)
    p.add_argument("--no-network", action="store_true")
    p.add_argument("--ro", action="append", default=[], help="one more read-only path")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--no-run-dir", action="store_true", help="no run folder: work in the scratch copy only")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or args.uid < UID_BASE:
        sys.exit("grader.sandbox: give a uid >= %d and a command after --" % UID_BASE)
    cwd = None if args.no_run_dir else os.getcwd()
    if cwd:
        mount_run_dir(cwd, args.uid, args.file_size)
    _limit(resource.RLIMIT_DATA, args.memory)
    _limit(resource.RLIMIT_NPROC, args.processes)
    _limit(resource.RLIMIT_CPU, args.cpu)
    _limit(resource.RLIMIT_FSIZE, args.file_size)
    _limit(resource.RLIMIT_NOFILE, args.open_files)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if cgroups.available() is None:     # else the per-process limits above still hold
        try:
            cgroups.join(args.uid, GroupLimits(args.group_memory, args.group_cpus, args.group_tasks))
        except OSError as e:
            print(f"grader.sandbox: no control group for this jail ({e}); its per-process limits hold",
                  file=sys.stderr)
    env = dict(e.split("=", 1) for e in args.env if "=" in e)
    visible = stage_paths(args.ro) if args.ro else {}
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        sys.exit("grader.sandbox: bubblewrap (bwrap) is not installed")
    jail = bwrap_argv(args.uid, args.scratch, cwd, args.hide, command, not args.no_network, visible, env)
    os.setgroups([])
    os.setresgid(args.uid, args.uid, args.uid)
    os.setresuid(args.uid, args.uid, args.uid)
    try:
        # bwrap itself starts with nothing of the grader's environment and an argv of
        # three words: its init process is PID 1 of the jail, whose /proc/1/environ and
        # cmdline the jailed programs can read (the kit's and the hidden folders' paths).
        os.execve(bwrap, argv_through_pipe(jail), {})
    except OSError as e:
        sys.exit(f"grader.sandbox: cannot start bwrap: {e}")


if __name__ == "__main__":
    main()
