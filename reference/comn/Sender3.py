#!/usr/bin/env python3
"""COMN part 3 -- Go-Back-N sender.

    python3 Sender3.py <RemoteHost> <Port> <Filename> <RetryTimeout> <WindowSize>

Keeps up to <WindowSize> packets in flight; ACKs are cumulative. When the oldest
unacknowledged packet has waited <RetryTimeout> milliseconds, resends it and every
packet after it. Prints the throughput in KB/s.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.comn import common
from reference.runtime import main_guard


def main(argv: list[str]) -> int:
    host, port, filename, timeout, window = common.parse(
        argv, ["RemoteHost", "Port", "Filename", "RetryTimeout", "WindowSize"]
    )
    settings = common.config(timeout=common.timeout_ms(timeout), window=common.window(window))
    result = common.send("gbn", host, common.port(port), filename, settings)
    print(f"{result.throughput_kBps:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main_guard("Sender3.py", lambda: main(sys.argv[1:])))
