"""The guides' tutorials (docs/): the shell blocks a page marks to run, run as written.

A runnable block is a fenced ```sh block directly after the comment

    <!-- tutorial: run -->
    <!-- tutorial: run exit=1 expect="Score: 0 / 4" expect="the receiver never bound its port" -->

`exit` is the status the block ends with (default 0: a block's status is its last
command's); each `expect` is a line, or part of one, that its output (stdout and stderr
together) must hold. When the page shows that output, in a ```text block right after
the shell block, each `expect` must be in the shown text too, so what the reader sees
stays what the command prints. Unmarked blocks (a server that keeps running, a
cluster's address) are shown, never run.

The blocks of a page run in order in one bash, in a fresh folder made for the page,
with the repository's venv first on PATH and KIT naming the kit's checkout (RELEASE
too, where the test gives one): what a reader's shell has after the page's set-up.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

MARK = re.compile(r"^\s*<!--\s*tutorial:\s*run\b(?P<attrs>.*?)-->\s*$")
ATTR = re.compile(r'(\w+)=(?:"([^"]*)"|(\S+))')
FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})(?P<lang>\w*)\s*$")


@dataclass
class Block:
    page: str
    line: int  # the marker's line, from 1
    code: str
    exit: int = 0
    expect: list[str] = field(default_factory=list)
    shown: str | None = None  # the ```text block that follows, if any

    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Ran:
    block: Block
    status: int | None  # None: not run (an earlier block failed)
    output: str


def _fenced(lines: list[str], start: int) -> tuple[str, str, int] | None:
    """The fenced block opening at the first non-blank line from `start`: (language,
    text, index after its closing fence), or None when that line opens none. A fence of
    more backticks holds lines of three (shown output that has code blocks of its own)."""
    i = start
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return None
    m = FENCE.match(lines[i])
    if not m:
        return None
    for j in range(i + 1, len(lines)):
        close = FENCE.match(lines[j])
        if (
            close
            and not close["lang"]
            and close["fence"][0] == m["fence"][0]
            and len(close["fence"]) >= len(m["fence"])
        ):
            return m["lang"], "\n".join(lines[i + 1 : j]), j + 1
    raise ValueError(f"unclosed code block at line {i + 1}")


def blocks(page: Path, root: Path | None = None) -> list[Block]:
    """The runnable blocks of a page, in order; ValueError naming the line of a marker
    that is not followed by a ```sh block or has an attribute it does not know."""
    name = str(page.relative_to(root)) if root else str(page)
    lines = page.read_text().splitlines()
    out = []
    fence = None  # inside a fenced block (shown text, not a marker), its fence
    for i, line in enumerate(lines):
        f = FENCE.match(line)
        if fence is None and f:
            fence = f["fence"]
            continue
        if fence is not None:
            if f and not f["lang"] and f["fence"][0] == fence[0] and len(f["fence"]) >= len(fence):
                fence = None
            continue
        m = MARK.match(line)
        if not m:
            if line.lstrip().startswith("<!--") and "tutorial" in line:
                raise ValueError(
                    f"{name}:{i + 1}: a tutorial comment must be <!-- tutorial: run [exit=N] "
                    f'[expect="..."] -->, not {line.strip()}'
                )
            continue
        block = Block(name, i + 1, "")
        for key, quoted, bare in ATTR.findall(m.group("attrs")):
            value = quoted if quoted else bare
            if key == "exit":
                block.exit = int(value)
            elif key == "expect":
                block.expect.append(value)
            else:
                raise ValueError(f"{name}:{i + 1}: unknown tutorial attribute {key!r} (exit, expect)")
        code = _fenced(lines, i + 1)
        if code is None or code[0] != "sh":
            raise ValueError(f"{name}:{i + 1}: <!-- tutorial: run --> must be followed by a ```sh block")
        block.code = code[1]
        shown = _fenced(lines, code[2])
        if shown is not None and shown[0] == "text":
            block.shown = shown[1]
        out.append(block)
    return out


def run(page_blocks: list[Block], folder: Path, env: dict, timeout: float) -> list[Ran]:
    """Run the blocks in order in one bash in `folder`; stop after the first block whose
    status is not the one it declares, or when `timeout` seconds have gone (the blocks
    not finished then have no status)."""
    folder.mkdir(parents=True, exist_ok=True)
    work = folder / ".tutorial"
    work.mkdir()
    script = ["cd " + shlex.quote(str(folder))]
    for n, b in enumerate(page_blocks):
        (work / f"{n}.sh").write_text(b.code + "\n")
        out, status = shlex.quote(str(work / f"{n}.out")), shlex.quote(str(work / f"{n}.status"))
        script.append(
            f"{{ . {shlex.quote(str(work / f'{n}.sh'))}; }} >{out} 2>&1 </dev/null; "
            f"s=$?; echo $s >{status}; [ $s = {b.exit} ] || exit 0"
        )
    shell = subprocess.Popen(
        ["bash", "--noprofile", "--norc", "-c", "\n".join(script)],
        env=env,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        shell.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(shell.pid, signal.SIGKILL)  # the block that hung, and all it started
        shell.wait()
    ran = []
    for n, b in enumerate(page_blocks):
        status_file = work / f"{n}.status"
        status = int(status_file.read_text()) if status_file.exists() else None
        output = (work / f"{n}.out").read_text(errors="replace") if (work / f"{n}.out").exists() else ""
        ran.append(Ran(b, status, output))
    return ran


def problems(ran: list[Ran]) -> list[str]:
    """What went wrong, one line each with the page's line; empty when every block did
    what the page says."""
    out = []
    for r in ran:
        b = r.block
        if r.status is None:
            out.append(f"{b.where()}: no status: an earlier block failed, or the time limit ended the run here")
            continue
        tail = "\n    ".join(r.output.strip().splitlines()[-15:])
        if r.status != b.exit:
            out.append(f"{b.where()}: exit status {r.status}, the page says {b.exit}; its output ends:\n    {tail}")
        for want in b.expect:
            if want not in r.output:
                out.append(f"{b.where()}: {want!r} is not in the output; it ends:\n    {tail}")
            if b.shown is not None and want not in b.shown:
                out.append(f"{b.where()}: {want!r} is not in the output the page shows")
    return out


def environment(venv_bin: str, kit: str, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RDTLAB_")}
    env.update(PATH=venv_bin + os.pathsep + env.get("PATH", "/usr/bin:/bin"), KIT=kit, **extra)
    return env
