#!/usr/bin/env python3
"""COMN part 4 -- Selective Repeat sender.

    python3 Sender4.py <RemoteHost> <Port> <Filename> <RetryTimeout> <WindowSize>

Keeps up to <WindowSize> packets in flight, each with its own timer: a packet is
resent alone when <RetryTimeout> milliseconds pass without its own ACK. Prints the
throughput in KB/s.

Two refinements (common.SR_REFINEMENTS, reference/core/sr.py): new packets are paced,
a window per round trip, so a full window does not sit in the link's queue for longer
than the timeout; and a packet that the ACKs of later ones show lost is resent at
once, twice.
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
    settings = common.config(
        timeout=common.timeout_ms(timeout), window=common.window(window), **common.sr_refinements()
    )
    result = common.send("sr", host, common.port(port), filename, settings)
    print(f"{result.throughput_kBps:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main_guard("Sender4.py", lambda: main(sys.argv[1:])))
