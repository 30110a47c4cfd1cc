"""The `stop-and-wait-crc` assignment (seed 002): stop-and-wait with a CRC32 and
exponential back-off, payloads of 1-64 KB over IPv4 and IPv6, kernel TCP as the baseline.

The student's programs: Sender.py <host> <port> <file> <payload bytes>,
Receiver.py <port> <file> <payload bytes>, and rdt.py; starters in source/stop-and-wait-crc/."""

NAME = "stop-and-wait-crc"
PROGRAMS = ("Sender.py", "Receiver.py", "rdt.py")
# reference/stop_and_wait_crc/: the reference solution's programs with this contract (the honest student of the tests)
REFERENCE = "stop_and_wait_crc"
# The starter's unfinished part (tests/course): what it says, and a command line that reaches it
STARTER_TODO = (
    "exponential back-off is not written yet",
    ["Sender.py", "127.0.0.1", "9", "x", "1000"],
)  # at its first timeout
