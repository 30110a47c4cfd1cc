"""The `comn` assignment (seed 004, the COMN results sheet): stop-and-wait, Go-Back-N and
Selective Repeat over UDP, and TCP measured by iperf3.

The student's programs: Sender1-4.py / Receiver1-4.py with COMN's command lines (DESIGN.md,
The COMN contract) and the common module rdt.py they import; starters in source/comn/."""

NAME = "comn"
PROGRAMS = tuple(f"{kind}{n}.py" for kind in ("Sender", "Receiver") for n in range(1, 5)) + ("rdt.py",)
# reference/comn/: the reference solution's programs with this contract (the honest student of the tests)
REFERENCE = "comn"
