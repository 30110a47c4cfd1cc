#!/usr/bin/env python3
"""TCP-like receiver (reference), the tcp-like assignment's command line:

    python3 Receiver.py <port> <file> <window bytes>

Cumulative ACKs (the highest segment received in order), out-of-order segments kept
within the window; 1000-byte segments, COMN wire format in the byte order RDT_BYTE_ORDER gives.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.cli import byte_order_format, main

if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: Receiver.py <port> <file> <window bytes>")
    port, file, window = sys.argv[1:]
    sys.exit(
        main(
            [
                "recv",
                "--protocol",
                "tcp",
                "--format",
                byte_order_format("comn"),
                "--port",
                port,
                "--file",
                file,
                "--payload",
                "1000",
                "--window-bytes",
                window,
            ]
        )
    )
