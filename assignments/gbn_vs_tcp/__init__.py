"""The `gbn-vs-tcp` assignment (seed 001): Go-Back-N over UDP against kernel TCP,
downloading objects under loss, corruption, duplication and delay.

The student's programs: COMN part 3's Sender3.py <host> <port> <file> <timeout ms> <window>
and Receiver3.py <port> <file>, and rdt.py; starters in source/gbn-vs-tcp/."""

NAME = "gbn-vs-tcp"
PROGRAMS = ("Sender3.py", "Receiver3.py", "rdt.py")
# reference/gbn_vs_tcp/: the reference solution's programs with this contract (the honest student of the tests)
REFERENCE = "gbn_vs_tcp"
# The starter's unfinished part (tests/course): what it says, and a command line that reaches it
STARTER_TODO = ("Go-Back-N is not written yet", ["Sender3.py", "localhost", "9", "x", "700", "25"])
