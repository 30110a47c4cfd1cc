"""The class CSV: one row per student, the total and each scenario's points (`ungraded`
where the machine disturbed every try: grader/disturbance.py)."""

from __future__ import annotations

import csv
import os


def write_class_csv(results: list[dict], path: str) -> None:
    names = []
    for r in results:
        for s in r["scenarios"]:
            if s["name"] not in names:
                names.append(s["name"])
    tmp = path + ".part"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", "name", "matric", "score", "max_score", *names])
        for r in sorted(results, key=lambda r: r["student"]):
            points = {s["name"]: "ungraded" if s.get("ungraded") else s["score"] for s in r["scenarios"]}
            w.writerow(
                [r["student"], r["name"], r["matric"], r["score"], r["max_score"], *[points.get(n, "") for n in names]]
            )
    os.replace(tmp, path)
