"""Find a student's program by name and prepare it to run, whatever it is written in:
one resolver for the sheets, the notebooks, `rdtlab check`, the grader and the replay
lines, so a folder that runs in one runs in all.

Given a folder and program names (Sender2, Receiver2), each resolves to the argv that
starts it, or to one line saying why it cannot:

    Sender2.py                     python3 Sender2.py
    Makefile                       `make` first; then what it built, as below
    an executable Sender2          as it is (a binary, or a script with a #! line)
    Sender2.java                   javac (every .java of the folder at once; when that
                                   fails, each program with what it needs, so one broken
                                   file costs only the programs that use it), then
                                   java -cp <build> [package.]Sender2
    Sender2.class (no source)      java -cp <folder> Sender2
    Sender2.c / .cpp / .cc         cc / c++ with the course's flags, one binary each, linked
                                   with the folder's other sources that have no main()
    Cargo.toml                     cargo build --release --offline; target/release/Sender2
    go.mod                         go build ./Sender2 (or ./cmd/Sender2, or Sender2.go)

A folder may mix languages: each program resolves on its own. Building is the only
step that runs anything; it goes through a `run` callable (the grader's runs each
command in the submission's jail), within one time limit for the whole folder, and
writes only under `out`. A compile error is one line: the program, then the compiler's
first error with its file and line.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from typing import Callable

BUILD_TIME_LIMIT = 120.0
C_FLAGS = ["-O2", "-std=gnu11", "-w"]
CXX_FLAGS = ["-O2", "-std=gnu++17", "-w"]
C_SOURCES, CXX_SOURCES = (".c",), (".cpp", ".cc", ".cxx")
# Short-lived programs: the client JIT alone and the serial collector start a JVM fastest.
JAVA_FLAGS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"]
KINDS = (
    "Name.py",
    "Name.java",
    "Name.c",
    "Name.cpp",
    "a Cargo.toml or go.mod building Name",
    "a Makefile building Name",
    "an executable Name",
)

# run(argv, cwd, env, timeout) -> (exit status, stderr); None: it did not finish in time
Runner = Callable[[list[str], str, dict, float], "tuple[int | None, str]"]


def run_here(argv: list[str], cwd: str, env: dict, timeout: float) -> tuple[int | None, str]:
    """A build command on this machine (the lab), in its own process group."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        _, err = proc.communicate(timeout=max(timeout, 0.1))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        return None, ""
    return proc.returncode, err.decode(errors="replace")


@dataclass
class Build:
    """What building a folder's programs gave: argv or a one-line reason per program, and
    the folder-wide failure (a Makefile's) if there was one."""

    programs: dict
    error: str | None = None

    def language(self, name: str) -> str | None:
        argv = self.programs.get(name)
        if not isinstance(argv, list):
            return None
        if argv[0].endswith(("python3", "python")) or argv[-1].endswith(".py"):
            return "python"
        return "java" if os.path.basename(argv[0]) == "java" else "native"


def _has(folder: str, name: str) -> bool:
    return os.path.isfile(os.path.join(folder, name))


def _listing(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def first_error(stderr: str, folder: str) -> str:
    """The compiler's first error as one line, paths shown relative to the folder."""
    lines = [ln.strip().replace(folder.rstrip("/") + "/", "") for ln in stderr.splitlines() if ln.strip()]
    for k, line in enumerate(lines):
        if re.search(r"\berror\b", line, re.I) or re.match(r"^\S+\.go:\d+(:\d+)?: ", line):
            if k + 1 < len(lines) and lines[k + 1].startswith("-->"):  # rustc: the place on the next line
                line += " " + lines[k + 1]
            return line[:240]
    return lines[-1][:240] if lines else "no message"


@dataclass
class _Context:
    """What every builder shares: how to run a command, the time left, how to start Java,
    and how to make a folder the build may write (the jail's uid must own it)."""

    run: Runner
    limit: float
    java: str
    owner: int | None
    end: float = 0.0

    def left(self) -> float:
        return self.end - time.monotonic()

    def mkdir(self, path: str) -> str:
        os.makedirs(path, exist_ok=True)
        if self.owner is not None:
            os.chown(path, self.owner, self.owner)
        return path


def resolve(
    folder: str,
    names,
    out: str,
    run: Runner = run_here,
    time_limit: float = BUILD_TIME_LIMIT,
    python: str = "python3",
    java: str = "java",
    owner: int | None = None,
) -> Build:
    """Each of `names` resolved in `folder`, building into `out` (see the module's doc);
    `owner`: the uid the build's folders are made for (the grader's jail)."""
    ctx = _Context(run, time_limit, java, owner, time.monotonic() + time_limit)
    build = Build({})
    names = list(dict.fromkeys(names))
    if _has(folder, "Makefile"):
        rc, err = run(["make", "-s"], folder, {}, ctx.left())
        if rc is None:
            build.error = f"the build (make) did not finish within {time_limit:g} s"
        elif rc != 0:
            lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
            build.error = f"the build (make) failed with exit {rc}" + (f": {lines[-1][:200]}" if lines else "")
        if build.error:
            build.programs = {n: build.error for n in names}
            return build
    left = []
    for name in names:
        found = _ready(folder, name, python)
        if found is not None:
            build.programs[name] = found
        else:
            left.append(name)
    for builder in (_java, _class_files, _c_family, _cargo, _go):
        if not left:
            break
        done = builder(folder, left, out, ctx)
        build.programs.update(done)
        left = [n for n in left if n not in done]
    for name in left:
        build.programs[name] = (
            f"{name} is missing from the submission (expected {', '.join(k.replace('Name', name) for k in KINDS)})"
        )
    return build


def _ready(folder: str, name: str, python: str):
    """A program that needs no build: Name.py, or an executable Name; a reason for a
    Name that is not executable; None: look further."""
    if _has(folder, f"{name}.py"):
        return [python, os.path.join(folder, f"{name}.py")]
    binary = os.path.join(folder, name)
    if os.path.isfile(binary):
        if not os.access(binary, os.X_OK):
            return f"{name} is not executable (chmod +x it, or hand in {name}.py)"
        return [binary]
    return None


def _timeout(what: str, limit: float) -> str:
    return f"the build ({what}) did not finish within {limit:g} s"


def _java_package(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            text = f.read(65536)
    except OSError:
        return ""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    m = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M)
    return m.group(1) + "." if m else ""


def _java(folder, names, out, ctx) -> dict:
    mine = [n for n in names if _has(folder, f"{n}.java")]
    if not mine:
        return {}
    sources = [os.path.join(folder, f) for f in _listing(folder) if f.endswith(".java")]
    classes = ctx.mkdir(os.path.join(out, "java"))
    rc, err = ctx.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", classes, *sources], folder, {}, ctx.left())
    if rc is None:
        return {n: _timeout("javac", ctx.limit) for n in mine}

    def start(n, where):
        return [ctx.java, *JAVA_FLAGS, "-cp", where, _java_package(os.path.join(folder, f"{n}.java")) + n]

    if rc == 0:
        return {n: start(n, classes) for n in mine}
    found = {}
    for n in mine:  # one program at a time, with what it uses (javac finds it on -sourcepath)
        alone = ctx.mkdir(os.path.join(out, f"java-{n}"))
        rc, err = ctx.run(
            [
                "javac",
                "-nowarn",
                "-encoding",
                "UTF-8",
                "-d",
                alone,
                "-sourcepath",
                folder,
                os.path.join(folder, f"{n}.java"),
            ],
            folder,
            {},
            ctx.left(),
        )
        found[n] = (
            start(n, alone)
            if rc == 0
            else _timeout("javac", ctx.limit)
            if rc is None
            else f"{n} does not compile: {first_error(err, folder)}"
        )
    return found


def _class_files(folder, names, out, ctx) -> dict:
    return {n: [ctx.java, *JAVA_FLAGS, "-cp", folder, n] for n in names if _has(folder, f"{n}.class")}


def _has_main(path: str) -> bool:
    try:
        with open(path, errors="replace") as f:
            return re.search(r"\bint\s+main\s*\(", f.read()) is not None
    except OSError:
        return False


def _c_family(folder, names, out, ctx) -> dict:
    found = {}
    files = _listing(folder)
    for suffixes, compiler, flags in ((C_SOURCES, "cc", C_FLAGS), (CXX_SOURCES, "c++", CXX_FLAGS)):
        shared = [
            os.path.join(folder, f) for f in files if f.endswith(suffixes) and not _has_main(os.path.join(folder, f))
        ]
        for n in names:
            source = next((f"{n}{s}" for s in suffixes if _has(folder, f"{n}{s}")), None)
            if source is None or n in found:
                continue
            binary = os.path.join(ctx.mkdir(os.path.join(out, "bin")), n)
            rc, err = ctx.run(
                [compiler, *flags, "-I", folder, "-o", binary, os.path.join(folder, source), *shared, "-lm"],
                folder,
                {},
                ctx.left(),
            )
            found[n] = (
                [binary]
                if rc == 0
                else _timeout(compiler, ctx.limit)
                if rc is None
                else f"{n} does not compile: {first_error(err, folder)}"
            )
    return found


def _cargo(folder, names, out, ctx) -> dict:
    if not _has(folder, "Cargo.toml"):
        return {}
    target = ctx.mkdir(os.path.join(out, "cargo"))
    env = {
        "CARGO_TARGET_DIR": target,
        "CARGO_HOME": ctx.mkdir(os.path.join(out, "cargo-home")),
        "CARGO_TERM_COLOR": "never",
    }
    rc, err = ctx.run(["cargo", "build", "--release", "--offline", "--quiet"], folder, env, ctx.left())
    if rc is None:
        return {n: _timeout("cargo build", ctx.limit) for n in names}
    found = {}
    for n in names:
        binary = os.path.join(target, "release", n)
        if rc == 0 and os.path.isfile(binary):
            found[n] = [binary]
        elif rc != 0:
            found[n] = f"{n} does not compile (cargo build): {first_error(err, folder)}"
    return found


def _go(folder, names, out, ctx) -> dict:
    if not _has(folder, "go.mod"):
        return {}
    env = {
        "GOCACHE": ctx.mkdir(os.path.join(out, "go-cache")),
        "GOPATH": ctx.mkdir(os.path.join(out, "go-path")),
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",
        "GOTELEMETRY": "off",
    }
    found = {}
    for n in names:
        package = next(
            (
                p
                for p in (f"./{n}", f"./cmd/{n}", f"./cmd/{n.lower()}", f"./{n.lower()}")
                if os.path.isdir(os.path.join(folder, p))
            ),
            None,
        )
        if package is None and _has(folder, f"{n}.go"):
            package = f"{n}.go"
        if package is None:
            continue
        binary = os.path.join(ctx.mkdir(os.path.join(out, "bin")), n)
        rc, err = ctx.run(["go", "build", "-o", binary, package], folder, env, ctx.left())
        found[n] = (
            [binary]
            if rc == 0
            else _timeout("go build", ctx.limit)
            if rc is None
            else f"{n} does not compile: {first_error(err, folder)}"
        )
    return found


def locate(folder: str, name: str) -> str | None:
    """What program `name` would be built or run from (a file or build file of the
    folder), without building anything; None: nothing."""
    for candidate in (
        f"{name}.py",
        name,
        "Makefile",
        f"{name}.java",
        f"{name}.class",
        *(f"{name}{s}" for s in C_SOURCES + CXX_SOURCES),
    ):
        if _has(folder, candidate):
            return candidate
    if _has(folder, "Cargo.toml") and (
        _has(folder, os.path.join("src", "bin", f"{name}.rs"))
        or _has(folder, os.path.join("src", "bin", name, "main.rs"))
    ):
        return "Cargo.toml"
    if _has(folder, "go.mod") and (
        any(os.path.isdir(os.path.join(folder, d)) for d in (name, os.path.join("cmd", name)))
        or _has(folder, f"{name}.go")
    ):
        return "go.mod"
    return None


# ---- the lab: build once, again only when a source changed ------------------------------

SOURCE_SUFFIXES = (".java", ".class", ".c", ".h", ".cpp", ".cc", ".cxx", ".hpp", ".rs", ".go", ".toml", ".mod")
LAB_BUILD = os.path.join(".rdtlab", "build")


def sources_digest(folder: str) -> str:
    """What a build depends on: every source's path, size and modification time."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("target", "__pycache__"))
        for f in sorted(files):
            if f.endswith(SOURCE_SUFFIXES) or f == "Makefile":
                st = os.stat(os.path.join(root, f))
                h.update(f"{os.path.relpath(os.path.join(root, f), folder)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def needs_build(folder: str, names) -> bool:
    """Whether any of `names` is a program to build (not Name.py, not an executable)."""
    return any(_ready(folder, n, "python3") is None for n in names)


_lab_cache: dict = {}


def prepare(folder: str, names, python: str = "python3") -> Build:
    """The programs of a student's folder in the lab: built into folder/.rdtlab/build (or a
    temporary folder where the student's is read-only) the first time and again only when
    a source changed."""
    folder = os.path.abspath(folder)
    names = tuple(names)
    if not needs_build(folder, names):
        return resolve(folder, names, "", python=python)
    digest = sources_digest(folder)
    key = (folder, names, python)
    cached = _lab_cache.get(key)
    if cached and cached[0] == digest:
        return cached[1]
    out = os.path.join(folder, LAB_BUILD)
    stamp = os.path.join(out, "resolved.json")
    try:
        with open(stamp) as f:
            kept = json.load(f)
        if kept["digest"] == digest and kept["names"] == list(names) and kept["python"] == python:
            build = Build(kept["programs"], kept["error"])
            _lab_cache[key] = (digest, build)
            return build
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.makedirs(out)
    except OSError:
        import tempfile

        out = stamp = None
        scratch = tempfile.mkdtemp(prefix="rdt-build-")
    build = resolve(folder, names, out or scratch, python=python)
    if stamp:
        with open(stamp, "w") as f:
            json.dump(
                {
                    "digest": digest,
                    "names": list(names),
                    "python": python,
                    "programs": build.programs,
                    "error": build.error,
                },
                f,
            )
    _lab_cache[key] = (digest, build)
    return build
