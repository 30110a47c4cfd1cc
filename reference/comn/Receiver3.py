#!/usr/bin/env python3
"""COMN part 3 -- Go-Back-N receiver.

    python3 Receiver3.py <Port> <Filename>

Keeps only the next packet in order, discards the rest, and answers every packet with
the number of the last one it has in order (a cumulative ACK).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.comn import common
from reference.runtime import main_guard


def main(argv: list[str]) -> int:
    port, filename = common.parse(argv, ["Port", "Filename"])
    common.receive("gbn", common.port(port), filename, common.config())
    return 0


if __name__ == "__main__":
    sys.exit(main_guard("Receiver3.py", lambda: main(sys.argv[1:])))
