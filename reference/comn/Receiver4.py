#!/usr/bin/env python3
"""COMN part 4 -- Selective Repeat receiver.

    python3 Receiver4.py <Port> <Filename> <WindowSize>

ACKs each packet by its own number, buffers packets that arrive out of order within
<WindowSize> of the next one expected, and writes the file once all are in.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.comn import common
from reference.runtime import main_guard


def main(argv: list[str]) -> int:
    port, filename, window = common.parse(argv, ["Port", "Filename", "WindowSize"])
    common.receive("sr", common.port(port), filename, common.config(window=common.window(window)))
    return 0


if __name__ == "__main__":
    sys.exit(main_guard("Receiver4.py", lambda: main(sys.argv[1:])))
