#!/usr/bin/env python3
"""Go-Back-N receiver (reference), the gbn-vs-tcp assignment's command line:

    python3 Receiver3.py <port> <file>

In-order delivery with cumulative ACKs, extended format (CRC32).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.cli import main

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: Receiver3.py <port> <file>")
    port, file = sys.argv[1:]
    sys.exit(main(["recv", "--protocol", "gbn", "--format", "ext", "--port", port, "--file", file]))
