"""Write a measured sheet to a directory: sheet.md, sheet.html, PNG plots, CSV per sweep.

Markdown and HTML are made from the same list of rendered blocks, so they always say
the same thing. A block that cannot be built (say, a table over a sweep with no rows)
becomes a line saying so: the rest of the sheet is still written.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")  # files only, no display (also inside notebooks' workers)
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from harness.sheets.sheet import Plot, Prompt, Results, Sheet, Table  # noqa: E402


@dataclass
class _Out:
    kind: str  # heading | para | table | image | question
    text: str = ""
    level: int = 2
    frame: pd.DataFrame | None = None
    path: str = ""


def write_sheet(sheet: Sheet, results: Results, out_dir: str, header: list[str] | None = None) -> dict[str, str]:
    """Render everything; returns {"md": path, "html": path, "csv": [paths], "png": [paths]}."""
    os.makedirs(out_dir, exist_ok=True)
    tcp = tcp_header(results)
    blocks = [_Out("heading", sheet.title, 1)] + [
        _Out("para", p) for p in (header or []) + ([tcp] if tcp else []) + sheet.intro
    ]
    if results.interrupted:
        blocks.append(
            _Out(
                "para",
                "**Interrupted**: this sheet shows what was measured before the "
                "interruption; re-run the same command to measure the rest.",
            )
        )
    pngs = []
    for section in sheet.sections:
        blocks.append(_Out("heading", section.title, 2))
        if section.title in results.skipped:
            blocks.append(_Out("para", f"**Not run**: {results.skipped[section.title]}"))
            continue
        for block in section.blocks:
            rendered = _render_block(block, results, out_dir)
            blocks += rendered
            pngs += [b.path for b in rendered if b.kind == "image"]
    csvs = []
    for name, frame in results.frames.items():
        path = os.path.join(out_dir, f"{name}.csv")
        frame.to_csv(path, index=False)
        csvs.append(path)
    md_path, html_path = os.path.join(out_dir, "sheet.md"), os.path.join(out_dir, "sheet.html")
    _write_atomic(md_path, to_markdown(blocks))
    _write_atomic(html_path, to_html(blocks, sheet.title))
    return {"md": md_path, "html": html_path, "csv": csvs, "png": pngs}


def tcp_header(results: Results) -> str | None:
    """One line for a sheet with kernel-TCP rows: the congestion control each sweep's
    connections ran (read back from them: the rows' `tcp_cc`) and the kernel; None
    without such rows."""
    from harness.backends import tcp

    ran, kernels = [], set()
    for name, frame in results.frames.items():
        if "tcp_cc" not in frame.columns:
            continue
        seen = frame["tcp_cc"].dropna()
        if seen.empty:
            continue
        counts = seen.value_counts()
        ran.append(f"{name}: " + ", ".join(f"{cc} ({n} connection{'s' if n != 1 else ''})" for cc, n in counts.items()))
        if "kernel" in frame.columns:
            kernels.update(frame["kernel"].dropna().astype(str))
    if not ran:
        return None
    pinned = ", ".join(f"{k}={v}" for k, v in tcp.SYSCTLS.items() if k not in ("tcp_rmem", "tcp_wmem"))
    return (
        f"**Kernel TCP**: congestion control read back from every connection: {'; '.join(ran)}. Linux "
        f"{', '.join(sorted(kernels)) or tcp.kernel()}. Pinned per route in the run's namespaces whatever the "
        f"host's default (`--tcp-cc`, default {tcp.DEFAULT}), with initcwnd {tcp.INITCWND} and {pinned} "
        "(harness/backends/tcp.py)."
    )


def _render_block(block, results: Results, out_dir: str) -> list[_Out]:
    try:
        if isinstance(block, str):
            return [_Out("para", block)]
        if isinstance(block, Table):
            out = [_Out("heading", block.title, 3), _Out("table", frame=block.build(results))]
            return out + ([_Out("para", block.note)] if block.note else [])
        if isinstance(block, Plot):
            fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=110)
            try:
                block.draw(results, ax)
                fig.tight_layout()
                path = os.path.join(out_dir, block.filename)
                fig.savefig(path)
            finally:
                plt.close(fig)
            out = [_Out("heading", block.title, 3), _Out("image", block.title, path=path)]
            return out + ([_Out("para", block.note)] if block.note else [])
        if isinstance(block, Prompt):
            return [_Out("question", block.question)] + [_Out("para", p) for p in block.answer(results).split("\n\n")]
    except Exception as e:  # one bad block must not cost the whole sheet
        title = getattr(block, "title", None) or getattr(block, "question", "block")
        return [_Out("para", f"*{title}: could not be built from these results ({type(e).__name__}: {e})*")]
    raise TypeError(f"unknown sheet block {block!r}")


def markdown_table(frame: pd.DataFrame) -> str:
    if frame is None or frame.empty:
        return "*(no rows)*"
    cell = lambda v: str(v).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    head = "| " + " | ".join(cell(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


def to_markdown(blocks: list[_Out]) -> str:
    parts = []
    for b in blocks:
        if b.kind == "heading":
            parts.append("#" * b.level + " " + b.text)
        elif b.kind == "table":
            parts.append(markdown_table(b.frame))
        elif b.kind == "image":
            parts.append(f"![{b.text}]({os.path.basename(b.path)})")
        elif b.kind == "question":
            parts.append(f"**{b.text}**")
        else:
            parts.append(b.text)
    return "\n\n".join(parts) + "\n"


CSS = """body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em;line-height:1.45}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}td,th{border:1px solid #bbb;padding:.2em .5em;text-align:right}
th{background:#eee}img{max-width:100%}.q{font-weight:bold;margin-top:1.2em}code{background:#f3f3f3}"""


def _inline(text: str) -> str:
    """HTML for a paragraph: escaped, with **bold** and `code` kept."""
    out, bold, code = [], False, False
    escaped = html.escape(text)
    i = 0
    while i < len(escaped):
        if escaped.startswith("**", i) and not code:
            out.append("</b>" if bold else "<b>")
            bold, i = not bold, i + 2
        elif escaped[i] == "`":
            out.append("</code>" if code else "<code>")
            code, i = not code, i + 1
        else:
            out.append(escaped[i])
            i += 1
    return "".join(out) + ("</b>" if bold else "") + ("</code>" if code else "")


def to_html(blocks: list[_Out], title: str) -> str:
    body = []
    for b in blocks:
        if b.kind == "heading":
            body.append(f"<h{b.level}>{html.escape(b.text)}</h{b.level}>")
        elif b.kind == "table":
            body.append(
                "<p><i>(no rows)</i></p>"
                if b.frame is None or b.frame.empty
                else b.frame.to_html(index=False, escape=True, border=0)
            )
        elif b.kind == "image":
            body.append(f'<p><img src="{html.escape(os.path.basename(b.path))}" alt="{html.escape(b.text)}"></p>')
        elif b.kind == "question":
            body.append(f'<p class="q">{_inline(b.text)}</p>')
        else:
            body.append(f"<p>{_inline(b.text)}</p>")
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _write_atomic(path: str, text: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
