"""Gradescope's results.json: score, and one test per scenario with name, score,
max_score, status, output and visibility (https://gradescope-autograders.readthedocs.io,
"Autograder Specifications"). Our own details go in `extra_data`, which the schema allows.
"""

from __future__ import annotations

import html

from grader.protocol.pictures import embedded


def gradescope_results(result: dict, folder: str | None = None) -> dict:
    """`folder`: the student's output folder; a failure's pictures there go in its test's
    output as HTML (Gradescope's output_format "html")."""
    tests = []
    for s in result["scenarios"]:
        output = s["reason"]
        if s.get("beyond_spec") and not s.get("scored", True):
            output = f"beyond the spec, not scored: {output}"
        test = {
            "name": f"part {s['part']}: {s['name']}",
            "score": s["score"],
            "max_score": s["max_score"],
            "status": "passed" if s["passed"] else "failed",
            "visibility": "visible" if s["public"] else "after_published",
        }
        if not s["passed"]:
            output += f"\nReplay it: {s['replay']}"
            images = [
                (caption, embedded(folder, (s.get("pictures") or {}).get(key))) if folder else (caption, None)
                for key, caption in (("yours", "your run"), ("reference", "the reference, same link and seed"))
            ]
            if any(url for _, url in images):
                what = f"<p><b>{html.escape(s['symptom']['title'])}</b></p>" if s.get("symptom") else ""
                output = f"{what}<p>{html.escape(output)}</p>" + "".join(
                    f"<figure><img alt='{c}' src='{u}'><figcaption>{c}</figcaption></figure>" for c, u in images if u
                )
                test["output_format"] = "html"
        test["output"] = output
        tests.append(test)
    summary = f"{result['score']:g} / {result['max_score']:g} on the {result['battery']} battery"
    if result.get("build_error"):
        summary += f"\n{result['build_error']}"
    return {
        "score": result["score"],
        "execution_time": result.get("execution_time", 0),
        "output": summary,
        "visibility": "after_published",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {k: v for k, v in result.items() if k != "scenarios"} | {"scenarios": result["scenarios"]},
    }
