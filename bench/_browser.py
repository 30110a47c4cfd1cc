"""Debian's chromium, driven by Playwright without a browser download: headless, in a
new profile, with the flags these machines need. The tests and the benchmarks both look
through it."""

from __future__ import annotations

import os

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def launch(playwright, profile: str, width: int = 1100, height: int = 900):
    """Debian's chromium, headless, in the new profile `profile` (a persistent context)."""
    return playwright.chromium.launch_persistent_context(
        profile,
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": width, "height": height},
    )


def look_at(url: str, profile: str, screenshot: str, width: int = 1100) -> dict:
    """Open `url`, wait for it to load, save a full-page screenshot; what a person would
    check: the console's errors, the images and whether each loaded, the page's text."""
    return look_at_pages([(url, screenshot)], profile, width)[0]


def look_at_pages(pages: list[tuple[str, str]], profile: str, width: int = 1100, evaluate: str = "") -> list[dict]:
    """look_at for each (url, screenshot) in one browser; `evaluate`: a JavaScript
    expression whose value each page's dict also holds, as "evaluated"."""
    from playwright.sync_api import sync_playwright

    seen = []
    with sync_playwright() as p:
        browser = launch(p, profile, width)
        try:
            for url, screenshot in pages:
                page = browser.new_page()
                errors: list[str] = []
                page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                page.goto(url, wait_until="load")
                images = page.eval_on_selector_all(
                    "img", "els => els.map(e => [e.alt, e.complete && e.naturalWidth > 0])"
                )
                os.makedirs(os.path.dirname(screenshot), exist_ok=True)
                page.screenshot(path=screenshot, full_page=True)
                seen.append(
                    {
                        "errors": errors,
                        "images": images,
                        "text": page.inner_text("body"),
                        **({"evaluated": page.evaluate(evaluate)} if evaluate else {}),
                    }
                )
                page.close()
        finally:
            browser.close()
    return seen
