"""Regrades that show what changed (`rdtlab grade ... --compare EARLIER`): each scenario's
definition (its link, checks, limits, points, programs) is recorded with its verdict as a
digest, so a regrade against an earlier output folder runs only the scenarios whose
definition changed (or that the earlier grading lacks, or left ungraded), keeps the rest
as they were (the seeds come from the submission and the scenario: a rerun would give
the same), and says per student which verdicts and scores moved and the symptom before
and after.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os

from grader.protocol.battery import Battery, Scenario


def definition(scenario: Scenario, battery: Battery) -> str:
    """A digest of everything that decides a scenario's verdict."""
    fields = dataclasses.asdict(scenario)
    programs = dataclasses.asdict(battery.programs[scenario.part])
    decides: dict[str, object] = {
        "scenario": fields,
        "programs": programs,
        "reference": battery.reference,
        "conventions": battery.conventions,
    }
    if battery.build_time_limit is not None:  # whether a build finishes decides every verdict
        decides["build_time_limit"] = battery.build_time_limit
    text = json.dumps(decides, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def earlier(folder: str, student: str) -> dict | None:
    """The result a grading wrote for `student` in `folder` (results.json), or None."""
    try:
        with open(os.path.join(folder, student, "results.json")) as f:
            data = json.load(f).get("extra_data")
    except (OSError, ValueError, AttributeError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("scenarios"), list) else None


def to_run(battery: Battery, before: dict | None) -> list[str]:
    """The scenarios to grade again: those whose definition changed, new ones, and those
    left ungraded before; all of them without an earlier result."""
    if before is None:
        return [s.name for s in battery.scenarios]
    kept = {r["name"]: r for r in before["scenarios"]}
    return [
        s.name
        for s in battery.scenarios
        if s.name not in kept
        or kept[s.name].get("definition") != definition(s, battery)
        or kept[s.name].get("ungraded")
    ]


def merge(battery: Battery, before: dict, fresh: dict) -> dict:
    """The earlier result with the freshly graded scenarios in place, in battery order
    (scenarios no longer in the battery are dropped)."""
    new = {r["name"]: r for r in fresh["scenarios"]}
    old = {r["name"]: r for r in before["scenarios"]}
    scenarios = [new.get(s.name) or old[s.name] for s in battery.scenarios if s.name in new or s.name in old]
    return {
        **fresh,
        "scenarios": scenarios,
        "score": round(sum(r["score"] for r in scenarios), 3),
        "max_score": battery.max_score,
        "ungraded": [r["name"] for r in scenarios if r.get("ungraded")],
        "regraded": sorted(new),
        "execution_time": fresh["execution_time"],
    }


def changes(before: dict | None, after: dict) -> list[dict]:
    """Each scenario whose verdict or score moved: before and after, with symptoms."""
    if before is None:
        return []
    old = {r["name"]: r for r in before["scenarios"]}
    out = []
    for r in after["scenarios"]:
        was = old.get(r["name"])
        if was is None or (was["passed"], was["score"]) == (r["passed"], r["score"]):
            continue
        out.append(
            {
                "scenario": r["name"],
                "score_before": was["score"],
                "score_after": r["score"],
                "passed_before": was["passed"],
                "passed_after": r["passed"],
                "symptom_before": (was.get("symptom") or {}).get("kind"),
                "symptom_after": (r.get("symptom") or {}).get("kind"),
            }
        )
    return out
