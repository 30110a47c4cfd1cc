"""Points from checks: nothing unless the file was delivered; then the scenario's
points shared equally among its checks (a correct but slow program keeps most)."""

from __future__ import annotations

from grader.protocol.checks import Check


def scenario_points(points: float, checks: list[Check]) -> float:
    if not checks or not checks[0].passed:  # checks[0] is `delivered`
        return 0.0
    return round(points * sum(c.passed for c in checks) / len(checks), 3)


def reason(checks: list[Check]) -> str:
    """The one line a student reads: the first failed check, else the first's detail."""
    for c in checks:
        if not c.passed:
            return f"{c.name}: {c.detail}"
    return checks[0].detail if checks else ""
