"""No grade from a disturbed run.

The engine knows when the machine disturbed a run: it measures how late each packet
left against its due time, and a p99 lag above a millisecond (harness/transfer.py,
LAG_WARN_US) means the link's timing was not the battery's. A student's protocol graded
on such a run can time out, resend or fall behind the reference for the machine's sake,
not its own; a reference run so disturbed would skew every comparison with it.

So a disturbed run is run again with the same seed (the engine draws the same link
decisions: the replay command still reproduces what is graded), up to TRIES times. A
scenario still disturbed after that is not scored: it is marked `ungraded`, and once the
class's pool has finished, grade_all grades those scenarios again one submission at a
time (the quietest the machine can be). What is still disturbed then stays ungraded:
0 points, said as such in the feedback, the class CSV and the grader's output, for the
instructor to grade again on a quieter machine.

The engine runs at a higher priority than the programs (harness/engine.py), so a
student's own busy loop does not disturb the link it is graded on.
"""
from __future__ import annotations

TRIES = 3


def why(run) -> str | None:
    """The engine's word that the machine delayed the run's packets, or None."""
    return getattr(run, "lag_warning", None) if run is not None else None


def ungraded_reason(disturbance: str) -> str:
    return (f"not graded: every try of this scenario was disturbed by the machine ({disturbance}); "
            "it will be graded again on a quieter machine")
