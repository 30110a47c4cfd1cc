"""The jail's launcher: `python -S -c "...; from grader.jail.launcher import main; main()"
--uid N ... -- PROGRAM ARGS`, the command prefix `grader.jail.sandbox.Sandbox.prefix()` puts
before every jailed program (and build and notebook kernel). It runs as root, in the
run's network namespace, and just before exec'ing bubblewrap:
  - mounts a size-capped tmpfs, owned by the jail's uid, on the run's directory (the
    harness's cwd, where the receiver writes its output), so the jail can write there
    (atomically, by rename) but not fill the disk; `grader.jail.sandbox.unmount_runs` removes
    it after the run;
  - sets resource limits: data size, processes (per uid, and the uid is the
    submission's alone), CPU seconds, file size, open files, no core dumps; and joins
    the jail's control group, which caps all its processes together (grader/jail/cgroups.py);
  - drops to that uid (no groups, no capabilities) and execs bwrap, itself with an empty
    environment and its options on a pipe (bwrap's init is the jail's PID 1, whose
    /proc/1/environ and cmdline the programs can read): `bwrap_argv` says what the jail
    shows, docs/operator/jail.md why.

It starts once per jailed program, so it imports little: no subprocess, shutil or
dataclasses (as `python -m grader.jail.sandbox` it was weighed down by the grader side's
imports), and it is started without `site` (-S) nor runpy (-m): it needs
nothing of the venv's site-packages. Not as a file either, which Python compiles at each
start: `-c` imports this module from its bytecode (grader.jail.sandbox.LAUNCHER). Run as a
file, it works the same.
"""

from __future__ import annotations

import os
import resource
import sys
from types import SimpleNamespace

if __name__ == "__main__" and not __package__:  # started as a file: the kit's root, not grader/, on the path
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from grader.jail import cgroups  # noqa: E402

# Only these of the machine's folders are in the jail (read-only): the programs, the
# interpreters and compilers, their libraries. Not the whole root (binding / would race
# with the namespaces other runs mount under /run/netns), and not /etc, /opt, /var, /home
# or /root, where a host keeps its configuration and secrets: what is not there needs
# no hiding.
VISIBLE = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Of /etc, only what the dynamic linker, name resolution of `localhost`, the time zone
# and the toolchains read (Debian's JDK keeps its jvm.cfg and security settings under
# /etc/java-*; /usr/bin/java and cc are links through /etc/alternatives).
ETC_VISIBLE = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "hosts",
    "host.conf",
    "nsswitch.conf",
    "gai.conf",
    "alternatives",
    "mime.types",
    "java-*-openjdk",
    "python3*",
    "ssl/openssl.cnf",
)
ALWAYS_HIDDEN = ("/tmp", "/var/tmp", "/run")  # private, empty and writable in the jail
UID_BASE = 3_000_000  # jail uids: no account on the machine has them
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


def run_mount_source(uid: int) -> str:
    """The name the run tmpfs of jail `uid` is mounted under (found again by it)."""
    return f"rdtjail-{uid}"


def _run(argv: list[str]) -> tuple[int, str]:
    """Run a short command (mount): its exit status and stderr, without subprocess's imports."""
    read, write = os.pipe()
    try:
        pid = os.posix_spawnp(
            argv[0],
            argv,
            os.environ,
            file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0), (os.POSIX_SPAWN_DUP2, write, 2)],
        )
    except OSError as e:
        os.close(read)
        return 127, f"{argv[0]}: {e.strerror}"
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as f:
        err = f.read().decode(errors="replace").strip()
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), err


def _which(name: str) -> str | None:
    """shutil.which for an executable name, without shutil's imports."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def bwrap_argv(
    uid: int,
    scratch: str,
    cwd: str | None,
    hidden: list[str],
    command: list[str],
    network: bool,
    visible: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> list[str]:
    """`visible`: more read-only paths, {path in the jail: where bwrap finds it}."""
    argv = ["bwrap"]
    for path in VISIBLE:  # read-only; /etc, /run, /home, /root, /srv, /work... are not there
        argv += ["--ro-bind-try", path, path]
    for path in etc_visible():
        argv += ["--ro-bind", path, path]
    argv += ["--dev", "/dev", "--proc", "/proc"]
    for path in ALWAYS_HIDDEN:  # private and empty (a program may use its own /tmp)
        argv += ["--tmpfs", path]
    # what the caller shows besides (the kit, an interpreter): after the private /tmp, which
    # would cover a kit checked out under /tmp
    for path, source in (visible or {}).items():
        argv += ["--ro-bind", source, path]
    shown = VISIBLE + ALWAYS_HIDDEN + tuple(os.path.normpath(v) for v in (visible or {}))
    hidden = [os.path.normpath(h) for h in hidden]
    outer = [h for h in hidden if not any(h.startswith(o + "/") for o in hidden)]  # covers what is inside
    for path in sorted(set(outer)):  # empty and read-only: nothing to read, nowhere to write
        if not path.startswith(tuple(p + "/" for p in shown)):
            continue  # not in the jail at all (its root is read-only)
        if os.path.isdir(path):
            argv += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.exists(path):
            argv += ["--ro-bind", "/dev/null", path]
    argv += ["--bind", scratch, scratch] + (["--bind", cwd, cwd] if cwd else [])
    writable = (scratch + "/",) + ((cwd + "/",) if cwd else ())
    for word in command[1:]:  # the input file and any other file the command names
        if os.path.isabs(word) and os.path.isfile(word) and not word.startswith(writable):
            argv += ["--ro-bind", word, word]
    argv += [
        "--remount-ro",
        "/",
        "--chdir",
        scratch,
        "--clearenv",
        "--setenv",
        "PATH",
        SAFE_PATH,
        "--setenv",
        "HOME",
        scratch,
        "--setenv",
        "LANG",
        "C.UTF-8",
    ]
    # No PYTHONDONTWRITEBYTECODE: Python caches bytecode in the submission's own scratch
    # copy (all it can write besides the run folder), so every start after the first skips
    # compiling the student's modules.
    for name, value in (env or {}).items():
        argv += ["--setenv", name, value]
    argv += [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--uid",
        str(uid),
        "--gid",
        str(uid),
        "--cap-drop",
        "ALL",
    ]
    if not network:
        argv.append("--unshare-net")
    return argv + ["--", *command]


def mount_run_dir(cwd: str, uid: int, file_size: int) -> None:
    """The size-capped tmpfs, owned by the jail, on the run's folder (see the top)."""
    cap = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    cap = file_size if cap == resource.RLIM_INFINITY else min(cap, file_size)
    status, err = _run(
        [
            "mount",
            "-t",
            "tmpfs",
            "-o",
            f"size={cap + (32 << 20)},mode=0700,uid={uid},gid={uid},nosuid,nodev",
            run_mount_source(uid),
            cwd,
        ]
    )
    if status != 0:
        sys.exit(f"grader.jail.launcher: cannot mount the run's tmpfs on {cwd}: {err}")
    parent = os.path.dirname(cwd)
    os.chmod(parent, os.stat(parent).st_mode | 0o011)  # bwrap (as the uid) passes through


STAGE = "/mnt"  # where, in the launcher's own mount namespace, staged paths are bound


def stage_paths(paths: list[str]) -> dict[str, str]:
    """{path: a place the jail's uid can reach it} for each path that exists.

    bwrap runs as the jail's uid, which may not pass through a path's parents (pyenv's
    interpreter is under /root, mode 0700). So, as root, in a mount namespace of this
    launcher alone (nothing propagates back), each path is bound under a fresh tmpfs on
    STAGE, which bwrap then binds read-only where the path was."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x00020000) != 0:  # CLONE_NEWNS
        sys.exit(f"grader.jail.launcher: cannot make a mount namespace: {os.strerror(ctypes.get_errno())}")
    for argv in (
        ["mount", "--make-rprivate", "/"],
        ["mount", "-t", "tmpfs", "-o", "mode=0755,size=1m", "rdtstage", STAGE],
    ):
        status, err = _run(argv)
        if status != 0:
            sys.exit(f"grader.jail.launcher: cannot stage the jail's read-only paths ({' '.join(argv)}): {err}")
    staged = {}
    for n, path in enumerate(paths):
        if not os.path.exists(path):
            continue
        target = os.path.join(STAGE, str(n))
        if os.path.isdir(path):
            os.mkdir(target)
        else:
            open(target, "w").close()
        status, err = _run(["mount", "--bind", path, target])
        if status != 0:
            sys.exit(f"grader.jail.launcher: cannot stage {path}: {err}")
        staged[os.path.normpath(path)] = target
    return staged


def etc_visible() -> list[str]:
    """The files and folders of ETC_VISIBLE this machine has."""
    names = os.listdir("/etc")  # not glob (its re): the patterns have one '*' at most
    found = set()
    for pattern in ETC_VISIBLE:
        if "*" in pattern:
            head, tail = pattern.split("*")
            found |= {
                os.path.join("/etc", n)
                for n in names
                if n.startswith(head) and n.endswith(tail) and len(n) >= len(pattern) - 1
            }
        elif os.path.lexists(os.path.join("/etc", pattern)):
            found.add(os.path.join("/etc", pattern))
    return sorted(found)


def argv_through_pipe(argv: list[str]) -> list[str]:
    """bwrap's argv with its options passed on a pipe (`--args FD`), read once and gone,
    so no process of the jail finds them in /proc/1/cmdline."""
    end = argv.index("--")  # the command stays: it is the program's own cmdline anyway
    data = b"".join(os.fsencode(word) + b"\0" for word in argv[1:end])
    if len(data) >= 60_000:  # a pipe holds 64 KiB: write no more than fits unread
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
        value = min(value, soft)  # keep a lower cap the harness set (file size)
    resource.setrlimit(which, (value, value))


# The options Sandbox.prefix() passes: {option: (attribute, type)}; a list type repeats.
OPTIONS = {
    "--uid": ("uid", int),
    "--scratch": ("scratch", str),
    "--hide": ("hide", list),
    "--memory": ("memory", int),
    "--processes": ("processes", int),
    "--cpu": ("cpu", int),
    "--file-size": ("file_size", int),
    "--open-files": ("open_files", int),
    "--group-memory": ("group_memory", int),
    "--group-cpus": ("group_cpus", float),
    "--group-tasks": ("group_tasks", int),
    "--ro": ("ro", list),
    "--env": ("env", list),
    "--no-network": ("no_network", bool),
    "--no-run-dir": ("no_run_dir", bool),
}


def parse(argv: list[str]) -> SimpleNamespace:
    """The launcher's options, then `--` and the command. Not argparse: it and the modules
    it pulls in (re, enum, gettext, shutil, locale) would weigh on every jailed start."""
    args = SimpleNamespace(
        **{name: [] if kind is list else False if kind is bool else None for name, kind in OPTIONS.values()}, command=[]
    )
    words = iter(argv)
    for word in words:
        if word == "--":
            args.command = list(words)
            break
        if word not in OPTIONS:
            sys.exit(f"grader.jail.launcher: unknown option {word!r} (give the options, then -- and the command)")
        name, kind = OPTIONS[word]
        if kind is bool:
            setattr(args, name, True)
            continue
        value = next(words, None)
        if value is None:
            sys.exit(f"grader.jail.launcher: {word} needs a value")
        try:
            setattr(args, name, getattr(args, name) + [value] if kind is list else kind(value))
        except ValueError:
            sys.exit(f"grader.jail.launcher: {word} {value!r} is not a number")
    missing = [
        option for option, (name, kind) in OPTIONS.items() if kind not in (list, bool) and getattr(args, name) is None
    ]
    if missing:
        sys.exit(f"grader.jail.launcher: missing {', '.join(missing)}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(sys.argv[1:] if argv is None else argv)
    command = args.command
    if not command or args.uid < UID_BASE:
        sys.exit("grader.jail.launcher: give a uid >= %d and a command after --" % UID_BASE)
    cwd = None if args.no_run_dir else os.getcwd()
    if cwd:
        if os.listdir(cwd):  # a run's own new folder, never one whose contents a tmpfs would hide (/tmp)
            sys.exit(f"grader.jail.launcher: the run's folder {cwd} is not empty; start the launcher in a new one")
        mount_run_dir(cwd, args.uid, args.file_size)
    _limit(resource.RLIMIT_DATA, args.memory)
    _limit(resource.RLIMIT_NPROC, args.processes)
    _limit(resource.RLIMIT_CPU, args.cpu)
    _limit(resource.RLIMIT_FSIZE, args.file_size)
    _limit(resource.RLIMIT_NOFILE, args.open_files)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if cgroups.available() is None:  # else the per-process limits above still hold
        try:
            cgroups.join(
                args.uid, SimpleNamespace(memory_bytes=args.group_memory, cpus=args.group_cpus, tasks=args.group_tasks)
            )
        except OSError as e:
            print(
                f"grader.jail.launcher: no control group for this jail ({e}); its per-process limits hold",
                file=sys.stderr,
            )
    env = dict(e.split("=", 1) for e in args.env if "=" in e)
    visible = stage_paths(args.ro) if args.ro else {}
    bwrap = _which("bwrap")
    if bwrap is None:
        sys.exit("grader.jail.launcher: bubblewrap (bwrap) is not installed")
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
        sys.exit(f"grader.jail.launcher: cannot start bwrap: {e}")


if __name__ == "__main__":
    main()
