#!/usr/bin/env python3
"""Multi-homed sender (reference), the multihoming assignment's command line:

    python3 Sender.py <file> <host>:<port> [<host2>:<port2>]      one address per path

The reference multi-homed Selective Repeat (reference/core/multihomed.py: adaptive RTO
per path, dead-path detection) with the settings of harness/sheets/multihoming.py:
the starter's format (MD5; reference/wire.py's "mh", either byte order: RDT_BYTE_ORDER), window 512, at most 32 packets in flight per path.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.cli import byte_order_format, main

if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: Sender.py <file> <host>:<port> [<host2>:<port2>]")
    file, first, *more = sys.argv[1:]
    host, _, port = first.rpartition(":")
    args = [
        "send",
        "--protocol",
        "mh",
        "--format",
        byte_order_format("mh"),
        "--host",
        host.strip("[]"),
        "--port",
        port,
        "--file",
        file,
        "--window",
        "512",
        "--max-in-flight",
        str(32 * (1 + len(more))),
        "--adaptive",
        "--timeout",
        "100",
    ]
    for extra in more:
        args += ["--path", extra]
    sys.exit(main(args))
