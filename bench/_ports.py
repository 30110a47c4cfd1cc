"""A free TCP port on loopback, for a server a benchmark or a test starts (JupyterLab, the
hub): the kernel's choice, released at once, so another process may take it first (the
servers started here fail loudly if so)."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
