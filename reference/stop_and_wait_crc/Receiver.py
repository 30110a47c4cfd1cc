#!/usr/bin/env python3
"""Stop-and-wait receiver with CRC32 (reference), the stop-and-wait-crc assignment's
command line:

    python3 Receiver.py <port> <file> <payload bytes>

Listens on every IPv4 and IPv6 address; extended format.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.cli import main

if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: Receiver.py <port> <file> <payload bytes>")
    port, file, payload = sys.argv[1:]
    sys.exit(
        main(["recv", "--protocol", "sw", "--format", "ext", "--port", port, "--file", file, "--payload", payload])
    )
