"""Linux calls that Python 3.11's os module lacks (setns, unshare), through libc: for
the programs' start (harness/procs.py) and a look into another network namespace
(harness/sockdiag.py)."""

from __future__ import annotations

import ctypes

CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)
