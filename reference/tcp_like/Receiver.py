#!/usr/bin/env python3
"""TCP-like receiver (reference), the tcp-like assignment's command line:

    python3 Receiver.py <port> <file> <window bytes>

Cumulative ACKs (the highest segment received in order), out-of-order segments kept
within the window; 1000-byte segments, COMN wire format.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from reference.cli import main

if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: Receiver.py <port> <file> <window bytes>")
    port, file, window = sys.argv[1:]
    sys.exit(main(["recv", "--protocol", "tcp", "--port", port, "--file", file, "--payload", "1000",
                   "--window-bytes", window]))
