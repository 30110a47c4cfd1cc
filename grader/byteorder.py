"""Which byte order a submission speaks. COMN leaves it open, so real submissions use
either; the reference programs it meets must speak the same (RDT_BYTE_ORDER).

The probe: the student's sender sends a small file over a clean link to the
reference receiver in each order; the order in which it arrives intact is the
student's. If the sender cannot tell (missing, broken), the reference sender probes
the student's receiver the same way. Big-endian (network order) when nothing tells.
"""
from __future__ import annotations

from harness import Link, Program, run_transfer

from grader.battery import Battery
from grader.scenario import Side

ORDERS = ("big", "little")
PROBE_BYTES = 3000     # three messages, the last one short
PROBE_LINK = Link("delay 1ms", shared_queue=False)
PROBE_TIME_LIMIT = 5.0


def detect(battery: Battery, student: Side, reference: Side, backend: str) -> str:
    """The first part whose programs the student has decides (at most four short runs).
    Part 1 goes last: its receiver checks no sequence numbers, so it cannot tell."""
    for part in sorted(battery.programs, key=lambda p: (p == 1, p)):
        programs = battery.programs[part]
        names = (programs.name("sender"), programs.name("receiver"))
        if student.missing(names[0]) and student.missing(names[1]):
            continue
        for tx, rx in ((student, reference), (reference, student)):
            if student.missing(names[0] if tx is student else names[1]):
                continue
            for order in ORDERS:
                ref_env = {"RDT_BYTE_ORDER": order}
                sender = Program(tx.template(programs.sender), env=ref_env if tx is reference else None)
                receiver = Program(rx.template(programs.receiver), env=ref_env if rx is reference else None)
                result = run_transfer(sender, receiver, PROBE_LINK, params=programs.params, size=PROBE_BYTES,
                                      seed=1, backend=backend, time_limit=PROBE_TIME_LIMIT,
                                      isolate=student.isolated)
                if result.ok:
                    return order
        break
    return "big"
