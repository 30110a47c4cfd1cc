#!/usr/bin/env python3
"""Go-Back-N sender (reference), the gbn-vs-tcp assignment's command line (COMN part 3's):

    python3 Sender3.py <host> <port> <file> <timeout ms> <window>

The reference Go-Back-N (reference/core/gbn.py) in the extended format, whose CRC32
catches a corrupted packet (harness/sheets/gbn_vs_tcp.py's reference run).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.cli import main

if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit("usage: Sender3.py <host> <port> <file> <timeout ms> <window>")
    host, port, file, timeout, window = sys.argv[1:]
    sys.exit(
        main(
            [
                "send",
                "--protocol",
                "gbn",
                "--format",
                "ext",
                "--host",
                host,
                "--port",
                port,
                "--file",
                file,
                "--window",
                window,
                "--timeout",
                timeout,
            ]
        )
    )
