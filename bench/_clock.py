"""Stopwatch: the wall seconds a benchmark's run spends in one function of the kit,
summed over the threads that call it, by wrapping the module's name for the run."""

from __future__ import annotations

import threading
import time
from typing import Callable


class Stopwatch:
    """`with Stopwatch(module, "name") as w:` times every call of module.name made inside
    (the calls `counts(*args, **kwargs)` accepts, all by default); `w.seconds` after."""

    def __init__(self, module, name: str, counts: Callable[..., bool] | None = None):
        self.seconds = 0.0
        self._module, self._name, self._counts = module, name, counts or (lambda *a, **k: True)
        self._function = getattr(module, name)
        self._lock = threading.Lock()

    def __enter__(self) -> "Stopwatch":
        def timed(*args, **kwargs):
            counted, t = self._counts(*args, **kwargs), time.monotonic()
            try:
                return self._function(*args, **kwargs)
            finally:
                if counted:
                    with self._lock:
                        self.seconds += time.monotonic() - t

        setattr(self._module, self._name, timed)
        return self

    def __exit__(self, *exc) -> None:
        setattr(self._module, self._name, self._function)
