"""Gradescope's results.json: score, and one test per scenario with name, score,
max_score, status, output and visibility (https://gradescope-autograders.readthedocs.io,
"Autograder Specifications"). Our own details go in `extra_data`, which the schema allows.
"""
from __future__ import annotations


def gradescope_results(result: dict) -> dict:
    tests = []
    for s in result["scenarios"]:
        output = s["reason"]
        if s.get("beyond_spec") and not s.get("scored", True):
            output = f"beyond the spec, not scored: {output}"
        if not s["passed"]:
            output += f"\nReplay it: {s['replay']}"
        tests.append({"name": f"part {s['part']}: {s['name']}", "score": s["score"], "max_score": s["max_score"],
                      "status": "passed" if s["passed"] else "failed", "output": output,
                      "visibility": "visible" if s["public"] else "after_published"})
    summary = f"{result['score']:g} / {result['max_score']:g} on the {result['battery']} battery"
    if result.get("build_error"):
        summary += f"\n{result['build_error']}"
    return {"score": result["score"], "execution_time": result.get("execution_time", 0), "output": summary,
            "visibility": "after_published", "stdout_visibility": "hidden", "tests": tests,
            "extra_data": {k: v for k, v in result.items() if k != "scenarios"} | {"scenarios": result["scenarios"]}}
