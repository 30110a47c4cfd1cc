#!/usr/bin/env python3
"""TCP-like sender (reference), the tcp-like assignment's command line:

    python3 Sender.py <host> <port> <file> <window bytes> <k> <timeout ms>

k = duplicate ACKs that trigger a fast retransmit (0: none); timeout 0 = the adaptive
RTO (RFC 6298, initial 100 ms), else a fixed one. The reference TCP-like core
(reference/core/tcp.py) with the settings of harness/sheets/tcp_like.py: 1000-byte
segments, COMN wire format.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.cli import byte_order_format, main

USAGE = "usage: Sender.py <host> <port> <file> <window bytes> <k> <timeout ms>"

if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(USAGE)
    host, port, file, window, k, timeout = sys.argv[1:]
    rto = ["--adaptive", "--timeout", "100"] if timeout == "0" else ["--timeout", timeout]
    sys.exit(
        main(
            [
                "send",
                "--protocol",
                "tcp",
                "--format",
                byte_order_format("comn"),
                "--host",
                host,
                "--port",
                port,
                "--file",
                file,
                "--payload",
                "1000",
                "--window-bytes",
                window,
                "--fast-retransmit",
                k,
                *rto,
            ]
        )
    )
