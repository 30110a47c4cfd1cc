#!/usr/bin/env python3
"""Stop-and-wait sender with CRC32 and exponential back-off (reference), the
stop-and-wait-crc assignment's command line:

    python3 Sender.py <host> <port> <file> <payload bytes>      host: IPv4 or IPv6

The reference stop-and-wait (reference/core/stop_and_wait.py) in the extended format,
adaptive timeout (initial 200 ms) doubling at each expiry up to 0.5 s, the back-off undone
only by a new RTT sample, as the starter's TODO asks (RFC 6298 5.7)
(harness/sheets/stop_and_wait_crc.py's reference run).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))  # the repository root

from reference.cli import main

if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: Sender.py <host> <port> <file> <payload bytes>")
    host, port, file, payload = sys.argv[1:]
    sys.exit(
        main(
            [
                "send",
                "--protocol",
                "sw",
                "--format",
                "ext",
                "--host",
                host,
                "--port",
                port,
                "--file",
                file,
                "--payload",
                payload,
                "--adaptive",
                "--timeout",
                "200",
                "--backoff-until-sample",
            ]
        )
    )
