"""One page of feedback per notebook, as nbgrader's exchange hands it back: nbgrader
releases only `feedback/<student>/<assignment>/<notebook>.html`, so the protocol's
feedback (every scenario, the failing runs' graphs beside the reference's, the replay
lines; pictures embedded) is put at the end of each notebook's page."""

from __future__ import annotations

import os
import re

MARK = "<!-- rdtlab: the programs' feedback -->"
_BODY = re.compile(r"<body[^>]*>(.*)</body>", re.S | re.I)
_STYLE = re.compile(r"<style[^>]*>.*?</style>", re.S | re.I)


def merged(notebook_page: str, protocol_page: str) -> str:
    """The notebook's page with the protocol page's body (and styles) appended; done
    again, it replaces what an earlier merge put in."""
    if MARK in notebook_page:
        notebook_page = notebook_page.split(MARK, 1)[0] + "</body></html>\n"
    body = _BODY.search(protocol_page)
    section = body.group(1) if body else protocol_page
    styles = "".join(_STYLE.findall(protocol_page.split("<body", 1)[0]))
    insert = (
        f'{MARK}\n<section id="rdtlab-programs" style="margin: 2em auto; max-width: 70em">{styles}{section}</section>\n'
    )
    at = notebook_page.lower().rfind("</body>")
    if at < 0:
        return notebook_page + insert
    return notebook_page[:at] + insert + notebook_page[at:]


def merge_class(course: str, assignment: str, graded: str) -> list[str]:
    """For every student with both, the protocol feedback `graded/<student>/feedback.html`
    into each of their notebook pages in nbgrader's feedback folder. Returns the pages."""
    done = []
    root = os.path.join(course, "feedback")
    for student in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        protocol = os.path.join(graded, student, "feedback.html")
        folder = os.path.join(root, student, assignment)
        if not os.path.isfile(protocol) or not os.path.isdir(folder):
            continue
        with open(protocol) as f:
            protocol_page = f.read()
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".html"):
                continue
            path = os.path.join(folder, name)
            with open(path) as f:
                page = f.read()
            tmp = path + ".part"
            with open(tmp, "w") as f:
                f.write(merged(page, protocol_page))
            os.replace(tmp, path)
            done.append(path)
    return done
