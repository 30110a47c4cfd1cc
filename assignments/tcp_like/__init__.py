"""The `tcp-like` assignment (seed 003): cumulative ACKs, a window in bytes, fast
retransmit after k duplicate ACKs, an adaptive RTO.

The student's programs: Sender.py <host> <port> <file> <window bytes> <k> <timeout ms>,
Receiver.py <port> <file> <window bytes>, and rdt.py; starters in source/tcp-like/."""

NAME = "tcp-like"
PROGRAMS = ("Sender.py", "Receiver.py", "rdt.py")
# reference/tcp_like/: the reference solution's programs with this contract (the honest student of the tests)
REFERENCE = "tcp_like"
# The starter's unfinished part (tests/course): what it says, and a command line that reaches it
STARTER_TODO = ("fast retransmit is not written yet", ["Sender.py", "localhost", "9", "x", "10000", "4", "0"])
