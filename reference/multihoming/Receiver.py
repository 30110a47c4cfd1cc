#!/usr/bin/env python3
"""Multi-homed receiver (reference), the multihoming assignment's command line:

    python3 Receiver.py <port> <file> <number of paths>

Selective Repeat receiver that accepts one sender address per path and ACKs each packet
on the path it came in on; the starter's format (MD5; reference/wire.py's "mh", either byte order: RDT_BYTE_ORDER), window 512.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.cli import byte_order_format, main

if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: Receiver.py <port> <file> <number of paths>")
    port, file, paths = sys.argv[1:]
    sys.exit(
        main(
            [
                "recv",
                "--protocol",
                "mh",
                "--format",
                byte_order_format("mh"),
                "--paths",
                paths,
                "--port",
                port,
                "--file",
                file,
                "--window",
                "512",
            ]
        )
    )
