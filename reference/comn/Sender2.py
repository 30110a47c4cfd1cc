#!/usr/bin/env python3
"""COMN part 2 -- stop-and-wait sender.

    python3 Sender2.py <RemoteHost> <Port> <Filename> <RetryTimeout>

Sends one 1024-byte packet at a time and waits for its ACK, resending it every
<RetryTimeout> milliseconds until the ACK comes. Prints
"<retransmissions> <throughput in KB/s>".
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.comn import common
from reference.runtime import main_guard


def main(argv: list[str]) -> int:
    host, port, filename, timeout = common.parse(argv, ["RemoteHost", "Port", "Filename", "RetryTimeout"])
    settings = common.config(timeout=common.timeout_ms(timeout))
    result = common.send("sw", host, common.port(port), filename, settings)
    print(f"{result.stats.retransmissions} {result.throughput_kBps:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main_guard("Sender2.py", lambda: main(sys.argv[1:])))
