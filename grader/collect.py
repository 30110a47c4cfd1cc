"""Find the submissions in what a course collected.

Layouts, as courses have them:
  - a folder per student:            ROOT/<student>/Sender1.py ...
  - nbgrader's exchange layout:      ROOT/submitted/<student>/<assignment>/... (or ROOT is `submitted`)
  - an archive per student:          ROOT/<student>.tar.gz, ROOT/<student>/cw2.tar.gz, .tgz or .zip,
                                     holding the programs, possibly inside one directory
  - ROOT itself is one submission (it holds programs): what `rdtlab check` grades.
COMN asks every source file to start with `# Forename Surname Matric`; that names the
student where the folder does not (an archive named cw2.tar.gz).
"""

from __future__ import annotations

import hashlib
import os
import re
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from harness.procs import UsageError

ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")
HEADER = re.compile(r"^\s*(?:#|//|/\*+)\s*([A-Za-z][\w'.-]*(?:\s+[A-Za-z][\w'.-]*)*)\s+([sS]?\d{5,9})\s*(?:\*+/)?\s*$")
GENERIC = {"cw2", "cw", "submission", "coursework", "src", "code"}
MAX_ARCHIVE_BYTES = 64 << 20  # more unpacked than this is not a coursework


@dataclass(frozen=True)
class Submission:
    student: str  # the id results are filed under (folder name, or matric)
    path: str  # the folder holding the programs
    name: str = ""  # "Forename Surname" from the header, if any
    matric: str = ""


BUILD_FILES = ("Makefile", "Cargo.toml", "go.mod")


def has_programs(folder: Path) -> bool:
    return any(
        p.name.startswith(("Sender", "Receiver")) or p.name in BUILD_FILES
        for p in folder.iterdir()
        if not p.name.startswith(".")
    )


def header_of(folder: Path) -> tuple[str, str]:
    """(name, matric) from the first `# Forename Surname Matric` line of a source file
    (`//` and `/* ... */` comments too), the folder's own files first, then its
    subfolders' (a Go or Rust layout)."""
    files = sorted(p for p in folder.iterdir() if p.is_file())
    files += sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.parent != folder
        and not any(part.startswith(".") or part == "target" for part in p.relative_to(folder).parts)
    )
    for p in files:
        if p.suffix in (".py", ".c", ".cpp", ".cc", ".java", ".rs", ".go", ".h", ".hpp"):
            try:
                with open(p, errors="replace") as f:
                    for line in [f.readline() for _ in range(3)]:
                        m = HEADER.match(line)
                        if m:
                            return m.group(1), m.group(2)
            except OSError:
                continue
    return "", ""


def find_submissions(root: str, assignment: str, unpack_dir: str) -> list[Submission]:
    """Every submission under `root`, sorted by student; archives unpacked in `unpack_dir`."""
    top = Path(root)
    if not top.is_dir():
        raise UsageError(f"submissions folder not found: {root}")
    if has_programs(top):
        return [_submission(top.resolve().name, top)]
    if (top / "submitted").is_dir():
        top = top / "submitted"
    found = []
    for entry in sorted(top.iterdir()):
        if entry.name.startswith("."):
            continue
        folder = _programs_folder(entry, assignment, unpack_dir)
        if folder is not None:
            found.append(_submission(_stem(entry), folder))
    if not found:
        raise UsageError(
            f"no submissions in {root} (expected a folder per student, nbgrader's "
            f"submitted/<student>/{assignment}/, or one archive per student)"
        )
    return found


def _stem(entry: Path) -> str:
    name = entry.name
    for ext in ARCHIVES:
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def _programs_folder(entry: Path, assignment: str, unpack_dir: str) -> Path | None:
    if entry.is_file() and entry.name.endswith(ARCHIVES):
        return _descend(unpack(entry, Path(unpack_dir) / _stem(entry)))
    if not entry.is_dir():
        return None
    if (entry / assignment).is_dir():
        entry = entry / assignment
    if has_programs(entry):
        return entry
    archives = [p for p in entry.iterdir() if p.is_file() and p.name.endswith(ARCHIVES)]
    if len(archives) == 1:
        return _descend(unpack(archives[0], Path(unpack_dir) / entry.name))
    return _descend(entry)


def _descend(folder: Path) -> Path | None:
    """The folder holding the programs: this one, or its only subfolder."""
    if has_programs(folder):
        return folder
    subs = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))]
    return subs[0] if len(subs) == 1 and has_programs(subs[0]) else None


def _submission(folder_name: str, folder: Path) -> Submission:
    name, matric = header_of(folder)
    student = folder_name
    if folder_name.lower() in GENERIC and matric:
        student = matric
    return Submission(student=student, path=str(folder), name=name, matric=matric)


def unpack(archive: Path, dest: Path) -> Path:
    """Unpack safely: no paths outside dest, no links, no devices, a size cap."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                if sum(i.file_size for i in z.infolist()) > MAX_ARCHIVE_BYTES:
                    raise UsageError(f"{archive}: unpacks to more than {MAX_ARCHIVE_BYTES >> 20} MiB")
                for info in z.infolist():
                    target = (dest / info.filename).resolve()
                    if not str(target).startswith(str(dest.resolve()) + os.sep):
                        raise UsageError(f"{archive}: member {info.filename!r} points outside the archive")
                z.extractall(dest)
        else:
            with tarfile.open(archive) as t:
                if sum(m.size for m in t.getmembers()) > MAX_ARCHIVE_BYTES:
                    raise UsageError(f"{archive}: unpacks to more than {MAX_ARCHIVE_BYTES >> 20} MiB")
                _extract_tar(t, dest, archive)
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as e:
        raise UsageError(f"{archive}: cannot unpack ({e})") from None
    return dest


def _extract_tar(t: tarfile.TarFile, dest: Path, archive: Path) -> None:
    """Regular files and folders only, all inside dest. Python's own "data" filter does
    this from 3.11.4; Debian bookworm's 3.11.2 lacks it, so the rule is checked here."""
    root = str(dest.resolve()) + os.sep
    for m in t.getmembers():
        if not (m.isfile() or m.isdir()):
            raise UsageError(f"{archive}: cannot unpack (member {m.name!r} is a link or a device)")
        if not str((dest / m.name).resolve()).startswith(root):
            raise UsageError(f"{archive}: cannot unpack (member {m.name!r} points outside the archive)")
    if hasattr(tarfile, "data_filter"):
        t.extractall(dest, filter="data")
    else:
        t.extractall(dest)


def submission_digest(folder: str) -> str:
    """A hash of the submission's files (names and contents): the root of its seeds."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != ".rdtlab")  # the lab's build of the sources
        for name in sorted(files):
            path = os.path.join(root, name)
            if os.path.islink(path) or "__pycache__" in path:
                continue
            h.update(os.path.relpath(path, folder).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()
