#!/usr/bin/env python3
"""COMN part 1 -- receive a file over UDP, no reliability.

    python3 Receiver1.py <Port> <Filename>

Keeps every piece that arrives and writes the file when the end-of-file message comes.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.comn import common
from reference.comn.unreliable import KeepWhatArrives
from reference.runtime import main_guard, receive_file


def main(argv: list[str]) -> int:
    port, filename = common.parse(argv, ["Port", "Filename"])
    receive_file(
        KeepWhatArrives(), common.wire_format(), common.port(port), filename, linger=0, retry_intervals=0
    )  # no ACKs, so nothing to linger for
    return 0


if __name__ == "__main__":
    sys.exit(main_guard("Receiver1.py", lambda: main(sys.argv[1:])))
