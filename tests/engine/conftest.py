"""Fixtures that run the real `linkemu` binary.

`linkemu_bin` builds it once per session with cargo. `start_engine(...)` starts it
with arguments (or a config dict for `linkemu run`), waits for the ready line and
returns a `RunningEngine`; every engine still running at the end of a test is stopped,
and its temporary files go with pytest's tmp_path.
"""

import json
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.support.engine import RunningEngine, udp_socket

REPO = Path(__file__).resolve().parents[2]
CRATE = REPO / "harness" / "linkemu"
BINARY = CRATE / "target" / "release" / "linkemu"


@pytest.fixture(scope="session")
def linkemu_bin() -> str:
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--manifest-path", str(CRATE / "Cargo.toml")],
        check=True,
    )
    return str(BINARY)


@pytest.fixture
def start_engine(linkemu_bin, tmp_path):
    started: list[RunningEngine] = []
    # Unix socket paths are limited to 107 bytes: keep them short, outside tmp_path.
    sockdir = Path(tempfile.mkdtemp(prefix="le-", dir="/tmp"))

    def start(args: list[str] | None = None, config: dict | None = None, control: bool = True) -> RunningEngine:
        n = len(started)
        stats = tmp_path / f"stats{n}.json"
        ctl = sockdir / f"ctl{n}.sock" if control else None
        if config is not None:
            config = {"stats": str(stats), **({"control": str(ctl)} if ctl else {}), **config}
            cfg = tmp_path / f"config{n}.json"
            cfg.write_text(json.dumps(config))
            argv = [linkemu_bin, "run", str(cfg)]
        else:
            argv = [linkemu_bin, "udp", *args, "--stats", str(stats)] + (["--control", str(ctl)] if ctl else [])
        eng = RunningEngine(argv, stats, ctl)
        started.append(eng)
        return eng

    yield start
    for eng in started:
        eng.kill()
    shutil.rmtree(sockdir, ignore_errors=True)


@pytest.fixture
def relay(start_engine):
    """A target socket, a client socket and an engine between them:
    `relay(forward="...", ...)` -> (engine, client, target)."""
    opened = []

    def make(forward: str = "", reverse: str | None = None, extra: list[str] = (), family=socket.AF_INET):
        host = "127.0.0.1" if family == socket.AF_INET else "::1"
        target, client = udp_socket(family, host), udp_socket(family, host)
        opened.extend([target, client])
        fmt = "{}:{}" if family == socket.AF_INET else "[{}]:{}"
        args = [
            "--listen",
            fmt.format(host, 0),
            "--to",
            fmt.format(host, target.getsockname()[1]),
            "--forward",
            forward,
        ]
        if reverse is not None:
            args += ["--reverse", reverse]
        eng = start_engine(args + list(extra))
        client.connect(eng.listen())
        return eng, client, target

    yield make
    for s in opened:
        s.close()
