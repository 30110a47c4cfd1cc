#!/usr/bin/env python3
"""COMN part 2 -- stop-and-wait receiver.

    python3 Receiver2.py <Port> <Filename>

ACKs every packet it gets (duplicates too: their ACK was lost), keeps the next one in
order, and writes the file once the end-of-file packet is in.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.comn import common
from reference.runtime import main_guard


def main(argv: list[str]) -> int:
    port, filename = common.parse(argv, ["Port", "Filename"])
    common.receive("sw", common.port(port), filename, common.config())
    return 0


if __name__ == "__main__":
    sys.exit(main_guard("Receiver2.py", lambda: main(sys.argv[1:])))
