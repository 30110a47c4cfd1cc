"""The documentation site (mkdocs.yml, docs/): it builds strict (a broken link, page or
anchor fails the build, and so does any warning), loads nothing from the network, and
every page opens in Debian's chromium with no console error and every image loaded.
Each page's full-page screenshot is kept in out/test-artifacts/docs/."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO
from bench._browser import CHROMIUM, CHROMIUM_ARGS

ARTIFACTS = REPO / "out" / "test-artifacts" / "docs"
MKDOCS = os.path.join(os.path.dirname(sys.executable), "mkdocs")
# what a page may load: its own files (scripts, styles, images, fonts); a link elsewhere is
# not loaded, so it may point anywhere
LOADS = re.compile(r"<(?:script|img|iframe|source|link)\b[^>]*\b(?:src|href)=\"(https?:)?//", re.I)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [MKDOCS, "build", "--strict", "--config-file", str(REPO / "mkdocs.yml"), "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{log[-4000:]}"
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    assert not warnings, "mkdocs warned:\n" + "\n".join(warnings)
    return out


def pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if p.name != "404.html")


def test_the_site_builds_strict_with_every_page(site):
    built = {str(p.relative_to(site)) for p in pages(site)}
    written = {str(p.relative_to(REPO / "docs").with_suffix(".html")) for p in (REPO / "docs").rglob("*.md")}
    written -= {"jail.html", "interfaces.html"}  # pointers left where code cites the old paths
    assert written | {"reference/cli.html"} <= built
    cli = (site / "reference" / "cli.html").read_text()
    for command in (
        "rdtlab run",
        "rdtlab grade",
        "rdtlab check",
        "--gradescope-package",
        "python -m grader.protocol.job",
    ):
        assert command in cli, f"the generated command-line page lacks {command}"


def test_nothing_is_fetched_from_the_network(site):
    for page in pages(site):
        html = page.read_text()
        assert not LOADS.search(html), f"{page.relative_to(site)} loads {LOADS.search(html).group(0)}"
    for css in site.rglob("*.css"):
        text = css.read_text(errors="replace")
        assert not re.search(r"@import|url\((['\"]?)(https?:)?//", text), f"{css.relative_to(site)} fetches"


def test_the_markdown_renders(site):
    """No fence or list left as text (Python-Markdown needs a blank line before a list,
    and takes no fence inside a list item)."""
    for page in pages(site):
        text = re.sub(r"<pre>.*?</pre>", "", page.read_text(), flags=re.S)
        assert "```" not in re.sub(r"<code>.*?</code>", "", text, flags=re.S), (
            f"{page.relative_to(site)}: a code fence rendered as text"
        )
        for paragraph in re.findall(r"<p>(.*?)</p>", text, flags=re.S):
            assert not re.search(r"\n(- |\d+\. )", paragraph), (
                f"{page.relative_to(site)}: a list rendered as a paragraph: {paragraph[:80]!r}"
            )


def test_every_page_opens_in_chromium(site):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    problems = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for path in pages(site):
                name = str(path.relative_to(site))
                page = browser.new_page(viewport={"width": 1100, "height": 900})
                errors, outside = [], []
                page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                page.on(
                    "request",
                    lambda r, outside=outside: (
                        outside.append(r.url) if not r.url.startswith(("file:", "data:")) else None
                    ),
                )
                page.goto(path.as_uri(), wait_until="load")
                images = page.eval_on_selector_all(
                    "img", "els => els.map(e => [e.src, e.complete && e.naturalWidth > 0])"
                )
                page.screenshot(
                    path=str(ARTIFACTS / (name.replace("/", "-").removesuffix(".html") + ".png")), full_page=True
                )
                page.close()
                problems += [f"{name}: console: {e}" for e in errors]
                problems += [f"{name}: fetched {u}" for u in outside]
                problems += [f"{name}: image did not load: {src}" for src, ok in images if not ok]
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
