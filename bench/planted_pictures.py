"""Every planted bug's feedback as its student would open it. Each assignment's planted
bugs are graded in the jail (one seed) on the scenarios that must catch them, with the
failing runs' pictures; every feedback page is opened in chromium (a screenshot, the
console's errors), and the scenario that catches the bug must show the failing run's
graph and the reference's (a transfer drawn by its end only, the wrap's, its own alone),
loaded, with the symptom named. The class view of the bugs must list each under its
scenario. Also what the pictures and the class view cost, as a share of the grading's
own time.

    python -m bench.planted_pictures [--assignment NAME ...] [--jobs N] [--out DIR]

Screenshots go to DIR/<assignment>/<bug>.png. Exits 1 if a caught bug's page lacks its
picture, or a bug the manifest expects caught was not.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time

from bench import calibrate
from bench._browser import look_at_pages
from bench._clock import Stopwatch
from grader.export_class import write_class_view
from grader.protocol import grade as grade_module
from grader.protocol.battery import load_battery
from grader.protocol.pictures import tail_of

ASSIGNMENTS = ["comn", "tcp-like", "multihoming", "gbn-vs-tcp", "stop-and-wait-crc"]
SEED = 1
MAX_PAGE = 2 << 20  # a page of failures, pictures embedded (pcaps aside)
# each <h3> of the feedback's "Replay a failure": the scenario, its symptom, its images
SECTIONS = """[...document.querySelectorAll('h3')].map(h => {
  const out = {name: h.textContent, symptom: '', images: []};
  for (let e = h.nextElementSibling; e && e.tagName !== 'H3'; e = e.nextElementSibling) {
    if (e.textContent.startsWith('What went wrong: ')) out.symptom = e.textContent.slice(17);
    e.querySelectorAll('img').forEach(i => out.images.push([i.alt, i.complete && i.naturalWidth > 0]));
  }
  return out;
})"""


def PictureClock() -> Stopwatch:
    """The seconds spent drawing the failing runs' pictures (the reference runs they make
    included), summed over the pool's threads."""
    return Stopwatch(grade_module, "_pictures")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.planted_pictures", description=__doc__.split("\n\n")[0])
    p.add_argument("--assignment", action="append", choices=ASSIGNMENTS, help="(repeatable; default all five)")
    p.add_argument("--jobs", type=int, default=2, metavar="N", help="bugs graded at once (default 2)")
    p.add_argument("--out", metavar="DIR", help="keep the feedback folders and screenshots here")
    return p


def check_assignment(assignment: str, jobs: int, out: str) -> tuple[list[list[str]], list[str], dict]:
    """(a row per bug, what is wrong, the costs) of one assignment's planted bugs."""
    bugs = [m for m in calibrate.load_corpus(calibrate.corpus_of(assignment)) if m.kind == "bug"]
    sizes = {sc.name: sc.size_of(0) for sc in load_battery(assignment).scenarios}
    results: dict = {}
    started = time.monotonic()
    with PictureClock() as clock:
        calibrate.grade_corpus(
            bugs,
            [SEED],
            jobs,
            None,
            done=lambda m, seed, r: results.__setitem__(m.name, r),
            out=out,
            assignment=assignment,
        )
    wall = time.monotonic() - started
    t = time.monotonic()
    write_class_view(list(results.values()), out, wall)
    class_seconds = time.monotonic() - t
    with open(os.path.join(out, "class.csv")) as f:
        failed_in = {r["scenario"]: set(r["failed_students"].split()) for r in csv.DictReader(f)}

    rows, wrong, pages, page_of, caught_in = [], [], [], {}, {}
    for m in bugs:
        r = results[m.name]
        caught = caught_in[m.name] = [
            s for s in r["scenarios"] if s["name"] in m.caught_by and not s["passed"] and not s.get("ungraded")
        ]
        for s in r["scenarios"]:
            if s["name"] in m.caught_by and s.get("ungraded"):  # the machine's doing: no verdict to draw
                rows.append([assignment, m.name, s["name"], "not graded: the machine disturbed it", "", ""])
        if not caught:
            rows.append([assignment, m.name, ", ".join(m.caught_by), "missed", "", ""])
            if not m.missed_today:
                wrong.append(f"{assignment} {m.name}: not caught in {', '.join(m.caught_by)}")
            continue
        page_of[m.name] = len(pages)
        pages.append((f"file://{os.path.join(out, r['student'], 'feedback.html')}", os.path.join(out, f"{m.name}.png")))
    seen = look_at_pages(pages, tempfile.mkdtemp(prefix="rdt-chromium-"), evaluate=SECTIONS) if pages else []
    seen.append(
        look_at_pages(
            [(f"file://{os.path.join(out, 'class.html')}", os.path.join(out, "class.png"))],
            tempfile.mkdtemp(prefix="rdt-chromium-"),
        )[0]
    )
    if seen[-1]["errors"] or not all(ok for _, ok in seen[-1]["images"]):
        wrong.append(f"{assignment} class.html: {seen[-1]['errors']} {seen[-1]['images']}")
    for m in bugs:
        if m.name not in page_of:
            continue
        r, page = results[m.name], seen[page_of[m.name]]
        size = os.path.getsize(os.path.join(out, r["student"], "feedback.html"))
        for s in caught_in[m.name]:
            section = next((x for x in page["evaluated"] if x["name"] == s["name"]), None)
            shown = [alt for alt, ok in (section or {}).get("images", []) if ok]
            # a transfer drawn by its end (the wrap's 64 MiB) is shown without the reference's
            pictured = shown == ["your run", "the reference, same link and seed"] or (
                shown == ["your run"] and tail_of(sizes[s["name"]]) is not None
            )
            symptom = (section or {}).get("symptom", "")
            listed = r["student"] in failed_in.get(s["name"], set())
            excused = "not run" if (s.get("symptom") or {}).get("kind") == "skipped" else ""  # nothing to draw
            rows.append(
                [assignment, m.name, s["name"], symptom or "-"]
                + ["both" if pictured else excused or " + ".join(shown) or "none", f"{size / 1024:.0f} KiB"]
            )
            problems = [
                *(["no picture of the run and the reference"] if not (pictured or excused) else []),
                *(["no symptom named"] if not symptom else []),
                *(["not in class.csv under its scenario"] if not listed else []),
                *([f"console: {page['errors']}"] if page["errors"] else []),
                *([f"the page is {size} bytes"] if size > MAX_PAGE else []),
            ]
            if problems:
                wrong.append(f"{assignment} {m.name} in {s['name']}: {'; '.join(problems)}")
    graded = sum(r["execution_time"] for r in results.values())
    costs = {"grading": graded, "wall": wall, "pictures": clock.seconds, "class view": class_seconds}
    return rows, wrong, costs


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    out = os.path.abspath(args.out or tempfile.mkdtemp(prefix="rdt-planted-pictures-"))
    every, wrong = [], []
    for assignment in args.assignment or ASSIGNMENTS:
        folder = os.path.join(out, assignment)
        os.makedirs(folder, exist_ok=True)
        rows, bad, costs = check_assignment(assignment, args.jobs, folder)
        every += rows
        wrong += bad
        print(
            f"{assignment}: {len(rows)} bug-scenario(s); graded in {costs['wall']:.0f} s "
            f"({costs['grading']:.0f} s of the submissions' own time); the pictures "
            f"{costs['pictures']:.0f} s ({100 * costs['pictures'] / max(costs['grading'], 1e-9):.1f}%), "
            f"the class view {costs['class view']:.1f} s ({100 * costs['class view'] / max(costs['wall'], 1e-9):.1f}% "
            "of the wall)",
            flush=True,
        )
    width = max(len(r[1]) for r in every) if every else 10
    print(f"\n{'assignment':18} {'bug':{width}} {'scenario':26} {'pictures':14} {'page':>8}  symptom")
    for a, bug, scenario, symptom, pictures, size in every:
        print(f"{a:18} {bug:{width}} {scenario:26} {pictures:14} {size:>8}  {symptom}")
    print(f"\nfeedback folders and screenshots in {out}")
    for line in wrong:
        print(f"WRONG: {line}", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
