"""The `multihoming` assignment (seed 000): selective repeat over one path and over two,
repeated to a 95% margin under 10%, and fail-over when a path goes down.

The student's programs: Sender.py <file> <host>:<port> [<host2>:<port2>],
Receiver.py <port> <file> <paths>, and rdt.py; starters in source/multihoming/."""

NAME = "multihoming"
PROGRAMS = ("Sender.py", "Receiver.py", "rdt.py")
# reference/multihoming/: the reference solution's programs with this contract (the honest student of the tests)
REFERENCE = "multihoming"
# The starter's unfinished part (tests/course): what it says, and a command line that reaches it
STARTER_TODO = ("multi-homing is not written yet", ["Sender.py", "x", "localhost:9", "localhost:10"])
