"""The class view, beside grades.csv: class.csv (a row per scenario: pass rate, who
failed, the symptoms and how many show each) and class.html (the score distribution per
part, pass rates, each symptom with who shows it, scenarios every submission fails, what
the machine disturbed and what was graded again, how long the grading took) and, where
the notebooks were autograded too, each question's scores from the gradebook. Static
HTML with its plots embedded, readable offline.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import os
from collections import Counter, defaultdict

from grader.protocol.symptoms import KINDS


def summary(results: list[dict]) -> dict:
    """The class's figures: per scenario (pass rate, failed students, symptoms), per part
    (scores), the symptoms' students, and what the machine disturbed."""
    scenarios: dict = {}
    parts: dict = defaultdict(lambda: defaultdict(float))
    who: dict = defaultdict(set)
    for r in results:
        for s in r["scenarios"]:
            row = scenarios.setdefault(
                s["name"],
                {
                    "name": s["name"],
                    "part": s["part"],
                    "max_score": s["max_score"],
                    "what": s.get("what", ""),
                    "passed": [],
                    "failed": [],
                    "ungraded": [],
                    "symptoms": Counter(),
                    "beyond_spec": bool(s.get("beyond_spec")) and not s.get("scored", True),
                },
            )
            if s.get("ungraded"):
                row["ungraded"].append(r["student"])
            elif s["passed"]:
                row["passed"].append(r["student"])
            else:
                row["failed"].append(r["student"])
                kind = (s.get("symptom") or {}).get("kind", "failed")
                row["symptoms"][kind] += 1
                who[(kind, s["name"])].add(r["student"])
            parts[s["part"]][r["student"]] += s["score"]
    part_max: dict = defaultdict(float)  # each scenario once, whoever ran it
    for row in scenarios.values():
        part_max[row["part"]] += row["max_score"]
        graded = len(row["passed"]) + len(row["failed"])
        row["pass_rate"] = len(row["passed"]) / graded if graded else None
    everyone = [n for n, row in scenarios.items() if row["failed"] and not row["passed"] and len(results) > 1]
    return {
        "students": len(results),
        "scenarios": scenarios,
        "parts": {p: dict(v) for p, v in sorted(parts.items())},
        "part_max": dict(part_max),
        "who": {k: sorted(v) for k, v in who.items()},
        "everyone_fails": everyone,
        "ungraded": {r["student"]: r["ungraded"] for r in results if r.get("ungraded")},
        "graded_again": {r["student"]: r["graded_again"] for r in results if r.get("graded_again")},
        "seconds": round(sum(r.get("execution_time", 0) for r in results), 1),
    }


def questions(notebooks: dict) -> list[dict]:
    """A row per notebook question (grader/notebook/gradebook.notebook_scores): its points,
    the class's mean, who has full marks and who not."""
    rows = []
    for notebook, cells in notebooks.items():
        for name, q in cells.items():
            scores = q["scores"]
            top = q["max"] or 0
            rows.append(
                {
                    "notebook": notebook,
                    "name": name,
                    "max_score": top,
                    "scores": scores,
                    "mean": sum(v or 0 for v in scores.values()) / len(scores) if scores else None,
                    "full": sorted(s for s, v in scores.items() if (v or 0) >= top),
                    "short": sorted(s for s, v in scores.items() if (v or 0) < top),
                }
            )
    return rows


def write_class_view(
    results: list[dict],
    folder: str,
    wall_seconds: float | None = None,
    moved: dict | None = None,
    notebooks: dict | None = None,
) -> None:
    """class.csv and class.html in `folder`, each written whole; `moved`: a regrade's
    changes per student (grader/compare.py), shown in class.html; `notebooks`: the
    gradebook's scores per question (grader/notebook/gradebook.notebook_scores)."""
    if not results:
        return
    view = summary(results)
    view["questions"] = questions(notebooks or {})
    _write(os.path.join(folder, "class.csv"), _csv(view))
    _write(os.path.join(folder, "class.html"), _html(view, results, wall_seconds, moved))


def _write(path: str, text: str) -> None:
    tmp = path + ".part"
    with open(tmp, "w", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def _csv(view: dict) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(
        ["scenario", "part", "points", "passed", "failed", "ungraded", "pass_rate", "symptoms", "failed_students"]
    )
    for row in view["scenarios"].values():
        w.writerow(
            [
                row["name"],
                row["part"],
                row["max_score"],
                len(row["passed"]),
                len(row["failed"]),
                len(row["ungraded"]),
                "" if row["pass_rate"] is None else f"{row['pass_rate']:.2f}",
                "; ".join(f"{k} x{n}" for k, n in row["symptoms"].most_common()),
                " ".join(row["failed"]),
            ]
        )
    for q in view.get("questions", []):  # a notebook's question: passed = at full marks
        graded = len(q["full"]) + len(q["short"])
        w.writerow(
            [
                f"{q['notebook']}/{q['name']}",
                "notebook",
                q["max_score"],
                len(q["full"]),
                len(q["short"]),
                0,
                f"{len(q['full']) / graded:.2f}" if graded else "",
                "" if q["mean"] is None else f"mean {q['mean']:.2f}",
                " ".join(q["short"]),
            ]
        )
    return out.getvalue()


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _plots(view: dict) -> tuple[str, str]:
    """(the scores per part, the pass rate per scenario) as embedded PNGs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parts = view["parts"]
    fig, axes = plt.subplots(1, len(parts), figsize=(3.2 * len(parts), 2.4), squeeze=False)
    for ax, (part, scores) in zip(axes[0], parts.items()):
        top = view["part_max"].get(part, 0) or 1
        ax.hist(list(scores.values()), bins=10, range=(0, top), color="#4477aa")
        ax.set_title(f"part {part} (of {top:g})", fontsize=9)
        ax.set_xlabel("points", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0][0].set_ylabel("students", fontsize=8)
    scores = _png(fig)
    rows = [r for r in view["scenarios"].values() if r["pass_rate"] is not None]
    rates = _percent_bars([(r["name"], 100 * r["pass_rate"]) for r in rows], "% of the class passing")
    return scores, rates


def _percent_bars(bars: list[tuple[str, float]], xlabel: str) -> str:
    """One horizontal bar per (name, percent), top to bottom in the order given, 0-100%,
    those under half in red, as an embedded PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names, values = [n for n, _ in bars][::-1], [v for _, v in bars][::-1]
    fig, ax = plt.subplots(figsize=(7, 0.22 * len(names) + 0.8))
    ax.barh(names, values, color=["#cc6677" if v < 50 else "#44aa99" for v in values])
    ax.set_xlim(0, 100)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.tick_params(labelsize=7)
    return _png(fig)


def _questions_plot(rows: list[dict]) -> str:
    """The class's mean per notebook question, as a share of its points."""
    rows = [q for q in rows if q["mean"] is not None and q["max_score"]]
    return _percent_bars(
        [(q["name"], 100 * q["mean"] / q["max_score"]) for q in rows], "the class's mean, % of the question's points"
    )


def _questions_html(rows: list[dict]) -> list[str]:
    e = html.escape
    out = [
        "<h2>Notebook questions</h2>",
        "<p>From the gradebook: nbgrader's autograded scores, or the grader's where it re-measured a cell.</p>",
        f"<img alt='mean score per notebook question' src='{_questions_plot(rows)}'>",
        "<table><tr><th>notebook</th><th>question</th><th>points</th><th>mean</th><th>full marks</th>"
        "<th>below full marks</th></tr>",
    ]
    for q in rows:
        mean = "" if q["mean"] is None else f"{round(q['mean'], 2):g}"
        out.append(
            f"<tr><td>{e(q['notebook'])}</td><td>{e(q['name'])}</td><td>{q['max_score']:g}</td><td>{mean}</td>"
            f"<td>{len(q['full'])}</td><td>{e(', '.join(q['short']))}</td></tr>"
        )
    out.append("</table>")
    return out


def _html(view: dict, results: list[dict], wall_seconds: float | None, moved: dict | None = None) -> str:
    e = html.escape
    battery = e(results[0].get("battery", ""))
    scores_png, rates_png = _plots(view)
    out = [
        "<!doctype html><meta charset='utf-8'>",
        f"<title>{battery}: the class</title>",
        "<style>body{font-family:sans-serif;max-width:1100px}td,th{padding:2px 8px;text-align:left}"
        "tr:nth-child(even){background:#f4f4f4}.warn{background:#fdd;padding:6px}</style>",
        f"<h1>{battery}: {view['students']} submission{'s' if view['students'] != 1 else ''}</h1>",
    ]
    took = f"{view['seconds']:.0f} s of grading (the submissions' own times)"
    if wall_seconds is not None:
        took += f", {wall_seconds:.0f} s by the wall"
    out.append(f"<p>{took}.</p>")
    if moved is not None:
        rows = [(student, c) for student, cs in sorted(moved.items()) for c in cs]
        regraded = sum(len(r.get("regraded", [])) for r in results)
        out.append(
            f"<h2>What the regrade changed</h2><p>{regraded} scenario grading(s) run again; "
            f"{len(rows)} verdict(s) moved.</p>"
        )
        if rows:
            out.append("<table><tr><th>student</th><th>scenario</th><th>score</th><th>what went wrong</th></tr>")
            for student, c in rows:
                out.append(
                    f"<tr><td>{e(student)}</td><td>{e(c['scenario'])}</td>"
                    f"<td>{c['score_before']:g} &rarr; {c['score_after']:g}</td>"
                    f"<td>{e(KINDS.get(c['symptom_before'] or '', 'passed'))} &rarr; "
                    f"{e(KINDS.get(c['symptom_after'] or '', 'passed'))}</td></tr>"
                )
            out.append("</table>")
    if view["everyone_fails"]:
        out.append(
            "<p class='warn'><b>Every submission fails:</b> "
            + ", ".join(e(n) for n in view["everyone_fails"])
            + ". A scenario no one passes is more likely a problem of the battery than of the class.</p>"
        )
    out += [
        "<h2>Scores per part</h2>",
        f"<img alt='scores per part' src='{scores_png}'>",
        "<h2>Scenarios</h2>",
        f"<img alt='pass rate per scenario' src='{rates_png}'>",
        "<table><tr><th>part</th><th>scenario</th><th>passed</th><th>failed</th><th>what went wrong</th></tr>",
    ]
    for row in view["scenarios"].values():
        symptoms = "; ".join(f"{e(KINDS.get(k, k))} ({n})" for k, n in row["symptoms"].most_common())
        name = e(row["name"]) + (" <i>(beyond the spec, not scored)</i>" if row["beyond_spec"] else "")
        out.append(
            f"<tr><td>{row['part']}</td><td title='{e(row['what'])}'>{name}</td><td>{len(row['passed'])}</td>"
            f"<td>{len(row['failed'])}</td><td>{symptoms}</td></tr>"
        )
    out.append("</table>")
    out += [
        "<h2>What went wrong, and who</h2>",
        "<table><tr><th>symptom</th><th>scenario</th><th>students</th><th>how many</th></tr>",
    ]
    for (kind, scenario), students in sorted(view["who"].items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(
            f"<tr><td>{e(KINDS.get(kind, kind))}</td><td>{e(scenario)}</td>"
            f"<td>{e(', '.join(students))}</td><td>{len(students)}</td></tr>"
        )
    out.append("</table>")
    if view["ungraded"] or view["graded_again"]:
        out.append("<h2>The machine</h2><ul>")
        for student, names in view["graded_again"].items():
            out.append(f"<li>{e(student)}: graded again alone: {e(', '.join(names))}</li>")
        for student, names in view["ungraded"].items():
            out.append(f"<li class='warn'>{e(student)}: not graded, disturbed on every try: {e(', '.join(names))}</li>")
        out.append("</ul>")
    if view["questions"]:
        out += _questions_html(view["questions"])
    notebook: dict = defaultdict(float)  # a student's points over every notebook question
    for q in view["questions"]:
        for student, points in q["scores"].items():
            notebook[student] += points or 0
    most = sum(q["max_score"] for q in view["questions"])
    head = "<th>notebook</th>" if view["questions"] else ""
    out += ["<h2>Students</h2>", f"<table><tr><th>student</th><th>name</th><th>programs</th>{head}</tr>"]
    for r in sorted(results, key=lambda r: r["student"]):
        link = f"{e(r['student'])}/feedback.html"
        out.append(
            f"<tr><td><a href='{link}'>{e(r['student'])}</a></td><td>{e(r.get('name') or '')}</td>"
            f"<td>{r['score']:g} / {r['max_score']:g}</td>"
            + (f"<td>{notebook.get(r['student'], 0):g} / {most:g}</td>" if view["questions"] else "")
            + "</tr>"
        )
    out.append("</table>")
    return "\n".join(out) + "\n"
