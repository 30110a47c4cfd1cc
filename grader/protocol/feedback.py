"""The student's feedback: every scenario, pass or fail, points, goodput against the
reference, the one-line reason, and for a failure the `rdtlab run` command that
replays it (with its seed) and the link's pcap for Wireshark. Markdown and HTML.
"""

from __future__ import annotations

import html
import json
import os

from grader.export_gradescope import gradescope_results
from grader.protocol.pictures import embedded


def write_outputs(result: dict, folder: str) -> None:
    """results.json (Gradescope's schema), feedback.md and feedback.html, each written whole."""
    _write(os.path.join(folder, "results.json"), json.dumps(gradescope_results(result, folder), indent=1))
    _write(os.path.join(folder, "feedback.md"), markdown(result))
    _write(os.path.join(folder, "feedback.html"), to_html(result, folder))


def _write(path: str, text: str) -> None:
    tmp = path + ".part"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _goodput(s: dict) -> str:
    runs = [r for r in s["runs"] if r.get("goodput_kBps")]
    if not runs:
        return ""
    r = runs[0]
    text = f"{r['goodput_kBps']:.1f} KB/s"
    if r.get("reference_goodput_kBps"):
        text += f" (reference {r['reference_goodput_kBps']:.1f})"
    return text


def _mark(s: dict) -> str:
    """A scenario's verdict as the table shows it."""
    mark = "UNGRADED" if s.get("ungraded") else "pass" if s["passed"] else "FAIL"
    if s.get("beyond_spec") and not s.get("scored", True):
        mark += " (beyond the spec, not scored)"
    return mark


def markdown(result: dict) -> str:
    who = result["name"] or result["student"]
    out = [
        f"# {result['battery']} feedback for {who}",
        "",
        f"**Score: {result['score']:g} / {result['max_score']:g}**",
        "",
    ]
    if result.get("build_error"):
        out += [f"Build: {result['build_error']}", ""]
    if result.get("ungraded"):
        out += [
            f"Not graded yet: {', '.join(result['ungraded'])} (the machine disturbed every try; "
            "they will be graded again on a quieter machine).",
            "",
        ]
    if result.get("graded_again"):
        out += [
            f"Graded again alone, after the others: {', '.join(result['graded_again'])} (graded beside "
            "other submissions they failed or were disturbed; the grading alone is the one shown).",
            "",
        ]
    out += ["| part | scenario | result | points | goodput | reason |", "|---|---|---|---|---|---|"]
    for s in result["scenarios"]:
        mark = _mark(s)
        out.append(
            f"| {s['part']} | {s['name']} | {mark} | {s['score']:g} / {s['max_score']:g} | {_goodput(s)} "
            f"| {s['reason'].replace('|', '/')} |"
        )
    out += _conventions_md(result)
    failing = [s for s in result["scenarios"] if not s["passed"] and not s.get("ungraded")]
    if failing:
        out += [
            "",
            "## Replay a failure",
            "",
            "Each command runs the same link with the same seed from your own folder.",
        ]
        for s in failing:
            out += ["", f"### {s['name']}", "", s["what"], ""]
            if s.get("symptom"):
                out += [f"What went wrong: **{s['symptom']['title']}**", ""]
            out += [f"Why: {s['reason']}", ""]
            shown = s.get("pictures") or {}
            if shown.get("yours"):
                out += [
                    f"![your run]({shown['yours']})"
                    + (f" ![the reference's run]({shown['reference']})" if shown.get("reference") else ""),
                    "",
                ]
            out += ["```", s["replay"], "```"]
            if s.get("pcap"):
                out += ["", f"The link's packets: `{s['pcap']}` (open it in Wireshark)."]
    return "\n".join(out) + "\n"


def _conventions_lines(result: dict) -> list[tuple[str, str, list[str]]]:
    """(part, what the reference spoke with it, why; departures) for each probed part."""
    return [
        (part, f"{c['summary']} ({c['why']})", c.get("departures") or [])
        for part, c in sorted((result.get("conventions") or {}).items())
    ]


def _conventions_md(result: dict) -> list[str]:
    rows = _conventions_lines(result)
    if not rows:
        return []
    out = [
        "",
        "## Conventions",
        "",
        "What the spec leaves open, as your programs do it; the reference spoke the same with them.",
    ]
    for part, text, departures in rows:
        out.append(f"- part {part}: {text}")
        out += [f"  - **wrong:** {d}" for d in departures]
    return out


def _pictures_html(s: dict, folder: str | None) -> str:
    """The failing run's picture beside the reference's, embedded (readable offline)."""
    shown = s.get("pictures") or {}
    if not folder or not shown.get("yours"):
        return ""
    cells = []
    for key, caption in (("yours", "your run"), ("reference", "the reference, same link and seed")):
        url = embedded(folder, shown.get(key))
        if url:
            cells.append(f"<figure><img alt='{caption}' src='{url}'><figcaption>{caption}</figcaption></figure>")
    return "<div class='pictures'>" + "".join(cells) + "</div>"


def to_html(result: dict, folder: str | None = None) -> str:
    who = html.escape(result["name"] or result["student"])
    rows = []
    for s in result["scenarios"]:
        mark = "pass" if s["passed"] else "FAIL"
        cells = [
            str(s["part"]),
            html.escape(s["name"]),
            html.escape(_mark(s)),
            f"{s['score']:g} / {s['max_score']:g}",
            html.escape(_goodput(s)),
            html.escape(s["reason"]),
        ]
        rows.append(f"<tr class='{mark.lower()}'>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    replays = "".join(
        f"<h3>{html.escape(s['name'])}</h3><p>{html.escape(s['what'])}</p>"
        + (f"<p>What went wrong: <b>{html.escape(s['symptom']['title'])}</b></p>" if s.get("symptom") else "")
        + f"<p>Why: {html.escape(s['reason'])}</p>"
        + _pictures_html(s, folder)
        + f"<pre>{html.escape(s['replay'])}</pre>"
        + (
            f"<p>The link's packets: <a href='{html.escape(s['pcap'])}'>{html.escape(s['pcap'])}</a></p>"
            if s.get("pcap")
            else ""
        )
        for s in result["scenarios"]
        if not s["passed"]
    )
    build = f"<p>Build: {html.escape(result['build_error'])}</p>" if result.get("build_error") else ""
    return (
        "<!doctype html><meta charset='utf-8'>"
        f"<title>{html.escape(result['battery'])} feedback: {who}</title>"
        "<style>body{font-family:sans-serif}td,th{padding:2px 8px}tr.fail{background:#fdd}"
        "tr.pass{background:#dfd}pre{background:#eee;padding:6px;white-space:pre-wrap}"
        ".pictures{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0}img{max-width:100%}</style>"
        f"<h1>{html.escape(result['battery'])} feedback for {who}</h1>"
        f"<p><b>Score: {result['score']:g} / {result['max_score']:g}</b></p>{build}"
        "<table><tr><th>part</th><th>scenario</th><th>result</th><th>points</th><th>goodput</th><th>reason</th></tr>"
        + "".join(rows)
        + "</table>"
        + _conventions_html(result)
        + (f"<h2>Replay a failure</h2>{replays}" if replays else "")
    )


def _conventions_html(result: dict) -> str:
    rows = _conventions_lines(result)
    if not rows:
        return ""
    items = "".join(
        f"<li>part {part}: {html.escape(text)}"
        + "".join(f"<br><b>wrong:</b> {html.escape(d)}" for d in departures)
        + "</li>"
        for part, text, departures in rows
    )
    return f"<h2>Conventions</h2><ul>{items}</ul>"
