"""MkDocs hook: the command-line reference (reference/cli.md), written at build time from
the argparse parsers themselves, so every command and option on the page is the one the
code accepts. Nothing it writes is committed.

`rdtlab` builds its parser in rdtlab.cli.build_parser(), the reference programs in
reference/cli.py and reference/tcpfile.py, and the benchmarks in each bench module's
parser(); the other commands build theirs inside main(), so the hook runs main() with
parse_args stopped at its first call, which hands over the finished parser before
anything else happens.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from mkdocs.structure.files import File

PAGE = "reference/cli.md"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WIDTH = "96"  # argparse wraps usage lines at $COLUMNS: fixed, so the page does not depend on the terminal

INTRO = """# Command line

Every command and option, generated from the parsers of the code when the site is
built (`docs/hooks/reference.py`), so this page cannot drift from what the commands
accept. Each command also answers `--help`.

Exit status of `rdtlab`: 0 success, 1 the transfer (or job) failed, 2 bad usage (one
line naming the problem), 130 interrupted, 143 terminated. The reference programs: 0
done, 1 the transfer failed, 2 bad arguments.
"""

# (the command as typed, module, how to get the parser, what it is for)
COMMANDS = [
    (
        "python3 -m reference",
        "reference.cli",
        "build_parser",
        "The reference programs' general command line: every protocol and option (standard library only).",
    ),
    (
        "python3 -m reference.tcpfile",
        "reference.tcpfile",
        "build_parser",
        "One file over kernel TCP, the baseline beside the UDP protocols.",
    ),
    (
        "python -m grader.protocol.job",
        "grader.protocol.job",
        "main",
        "One submission, one job with a stable command line (any scheduler).",
    ),
    (
        "python -m grader.notebook.autograde",
        "grader.notebook.autograde",
        "main",
        "One student's notebooks autograded by nbgrader with the kernel in the student's jail.",
    ),
    (
        "rdtlab-hub-grade",
        "rdtlab.hub.grade",
        "main",
        "The course hub's grader account: collect, grade in the grading container, release the feedback.",
    ),
    (
        "python assignments/lab.py",
        "assignments.lab",
        "main",
        "JupyterLab on 127.0.0.1 on a student's copy of an assignment's release: what `make lab` runs.",
    ),
]


class _Parser(Exception):
    """Carries the parser out of a main() stopped at its first parse."""


def parser_of(module: str, how: str) -> argparse.ArgumentParser:
    mod = importlib.import_module(module)
    if how in ("build_parser", "parser"):
        return getattr(mod, how)()

    def hand_over(self, *args, **kwargs):
        raise _Parser(self)

    saved = argparse.ArgumentParser.parse_known_args
    argparse.ArgumentParser.parse_known_args = hand_over  # parse_args calls it too
    try:
        getattr(mod, how)(["--help"])
    except _Parser as got:
        return got.args[0]
    finally:
        argparse.ArgumentParser.parse_known_args = saved
    raise RuntimeError(f"{module}.{how}() parsed no arguments: the reference page cannot show it")


def cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def option_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    formatter = parser._get_formatter()
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.option_strings:
            name = ", ".join(action.option_strings)
            if action.nargs != 0:
                metavar = action.metavar or (
                    ("{" + ",".join(map(str, action.choices)) + "}") if action.choices else action.dest.upper()
                )
                name += " " + (metavar if isinstance(metavar, str) else " ".join(metavar))
            name = f"`{name}`"
        else:
            name = f"`{action.metavar or action.dest}`"
        meaning = formatter._expand_help(action) if action.help else ""
        if action.choices and not (action.metavar and "|" in str(action.metavar)):
            meaning = (meaning + " " if meaning else "") + "One of " + ", ".join(f"`{c}`" for c in action.choices) + "."
        default = ""
        if action.required and action.option_strings:
            default = "required"
        elif action.default not in (None, False, "", argparse.SUPPRESS, []) and action.nargs != 0:
            default = f"`{action.default}`"
        rows.append(f"| {cell(name)} | {cell(meaning)} | {cell(default)} |")
    return rows


def section(title: str, parser: argparse.ArgumentParser, about: str, level: int = 2) -> list[str]:
    out = [f"{'#' * level} `{title}`", ""]
    if about:
        out += [about, ""]
    out += ["```text", parser.format_usage().strip(), "```", ""]
    rows = option_rows(parser)
    if rows:
        out += ["| argument | what it does | default |", "|---|---|---|", *rows, ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                out += section(
                    f"{parser.prog} {name}".strip(),
                    sub,
                    helps.get(name) or sub.description or "",
                    level + 1 if level < 3 else level,
                )
    return out


def render() -> str:
    os.environ["COLUMNS"] = WIDTH
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)  # bench/ is not installed: it runs from a checkout
    from rdtlab import cli

    lines = [
        INTRO,
        "## `rdtlab`",
        "",
        "The kit's command: one subcommand per job.",
        "",
        "```text",
        cli.build_parser().format_usage().strip(),
        "```",
        "",
    ]
    top = cli.build_parser()
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                lines += section(f"rdtlab {name}", sub, helps.get(name, ""), level=3)
    lines += [
        "## Other commands",
        "",
        "The link engine `linkemu` is Rust: its command line is in "
        "[the interfaces](interfaces.md#1-the-link-engine-linkemu-rust-harnesslinkemu) and "
        "`harness/linkemu/README.md`.",
        "",
    ]
    for title, module, how, about in COMMANDS:
        parser = parser_of(module, how)
        parser.prog = title  # as typed (a script's own default would be the builder's name)
        lines += section(title, parser, about, level=3)
    lines += benchmarks()
    return "\n".join(lines) + "\n"


def benchmarks() -> list[str]:
    """`python -m bench NAME` for each benchmark `all` runs, `python -m bench.NAME` for
    the ones with commands of their own (bench/__main__.py), each from its parser()."""
    from bench import __main__ as bench_main

    lines = [
        "## Benchmarks",
        "",
        "Run from a checkout (`bench/` is not installed); `make bench` runs the long ones, and "
        "`python -m bench all` runs every benchmark below the separate commands. Today's figures: "
        "`BENCHMARKS.md`.",
        "",
    ]
    names = [(f"python -m bench {n}", n) for n in bench_main.available()]
    names += [(f"python -m bench.{n}", n) for n in bench_main.SEPARATE]
    for title, name in names:
        module = importlib.import_module(f"bench.{name}")
        about = (module.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        parser = module.parser()
        parser.prog = title
        lines += section(title, parser, about, level=3)
    return lines


def on_files(files, config, **kwargs):
    files.append(File.generated(config, PAGE, content=render()))
    return files
