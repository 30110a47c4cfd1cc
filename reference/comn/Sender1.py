#!/usr/bin/env python3
"""COMN part 1 -- send a file over UDP, no reliability.

    python3 Sender1.py <RemoteHost> <Port> <Filename>

Every 1024-byte piece of the file goes out once, in order, paced at one packet per
millisecond; the last carries the end-of-file flag. Prints nothing.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.comn import common
from reference.comn.unreliable import PacedSender
from reference.runtime import main_guard, send_file


def main(argv: list[str]) -> int:
    host, port, filename = common.parse(argv, ["RemoteHost", "Port", "Filename"])
    send_file(PacedSender, filename, common.wire_format(), [(host, common.port(port))])
    return 0


if __name__ == "__main__":
    sys.exit(main_guard("Sender1.py", lambda: main(sys.argv[1:])))
