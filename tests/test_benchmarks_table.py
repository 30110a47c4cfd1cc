"""BENCHMARKS.md's tables stay reproducible: every row has a date, the machine's cores
and commands that still exist and still take the arguments given.

A row's command column holds one or more commands in backticks, each of a known kind,
checked without running anything:
- `make TARGET...`: each target is in the Makefile;
- `python -m bench NAME ARGS` and `python -m bench.NAME ARGS`: the module exists (the
  first kind only for what `python -m bench` runs) and its own parser, `parser()`,
  accepts ARGS;
- `rdtlab SUBCOMMAND ARGS`: rdtlab's own parser accepts them;
- `pytest ARGS` (or `python -m pytest`): every path in ARGS exists;
- `cargo test ... --manifest-path M --test NAME`: M exists, and the test file beside it.
Leading `NAME=value` settings are allowed before any of them.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib
import io
import os
import re
import shlex

import pytest

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(ROOT, "BENCHMARKS.md")
COLUMNS = ["figure", "value", "date", "cores", "command", "what limits it"]
# pytest's options that take a value (the next word is not a path)
PYTEST_VALUED = {
    "-k",
    "-m",
    "-p",
    "-n",
    "-o",
    "-c",
    "--basetemp",
    "--rootdir",
    "--junitxml",
    "--timeout",
    "--deselect",
    "--ignore",
}


def cells(line: str) -> list[str]:
    """A Markdown table line's cells: split at `|`, but not inside `code` or at `\\|`."""
    out, cell, code, i = [], "", False, 0
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] == "|":
            cell += "|"
            i += 2
            continue
        if ch == "`":
            code = not code
        if ch == "|" and not code:
            out.append(cell.strip())
            cell = ""
        else:
            cell += ch
        i += 1
    out.append(cell.strip())
    return out


def tables(text: str) -> list[tuple[str, list[str], list[dict]]]:
    """(section, header, rows) for each table, its section the `## ` heading above it."""
    found, section, lines = [], "", text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        if line.lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|[\s|:-]+\|\s*$", lines[i + 1]):
            header = cells(line)
            rows, i = [], i + 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(dict(zip(header, cells(lines[i]))) | {"_line": lines[i], "_width": len(cells(lines[i]))})
                i += 1
            found.append((section, header, rows))
            continue
        i += 1
    return found


def makefile_targets() -> set[str]:
    """The Makefile's targets, with its simple variables expanded."""
    with open(os.path.join(ROOT, "Makefile")) as f:
        text = f.read().replace("\\\n", " ")
    variables = {
        m.group(1): m.group(2).strip()
        for m in re.finditer(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?::=|\?=|=)(.*)$", text, re.M)
    }

    def expand(s: str, depth: int = 0) -> str:
        if depth > 10:
            return s
        new = re.sub(r"\$\((\w+)\)", lambda m: variables.get(m.group(1), ""), s)
        return new if new == s else expand(new, depth + 1)

    targets = set()
    for m in re.finditer(r"^([^\s#=:][^=:]*?)\s*&?::?(?!=)", text, re.M):
        targets.update(expand(m.group(1)).split())
    return targets


def _parse(parser, args: list[str]) -> str | None:
    """None if the argparse parser accepts args, else its message."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(args)
    except SystemExit as e:
        if e.code not in (0, None):
            return err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else f"exit {e.code}"
    return None


def _bench(module: str, args: list[str]) -> str | None:
    if not os.path.isfile(os.path.join(ROOT, "bench", f"{module}.py")):
        return f"no module bench/{module}.py"
    mod = importlib.import_module(f"bench.{module}")
    if not callable(getattr(mod, "parser", None)):
        return f"bench.{module} has no parser() to check its arguments with"
    return _parse(mod.parser(), args)


def check_command(command: str) -> str | None:
    """None if the command is of a known kind and parses, else why not."""
    try:
        words = shlex.split(command)
    except ValueError as e:
        return f"cannot split {command!r}: {e}"
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]
    if not words:
        return "empty command"
    head = os.path.basename(words[0])
    if head in ("python", "python3") and words[1:3] == ["-m", "pytest"]:
        head, words = "pytest", ["pytest", *words[3:]]
    if head == "make":
        targets = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        missing = [t for t in targets if t not in makefile_targets()]
        return f"no Makefile target {', '.join(missing)}" if missing else None
    if head in ("python", "python3") and len(words) >= 3 and words[1] == "-m":
        module, args = words[2], words[3:]
        if module == "bench":
            if not args:
                return "python -m bench needs a benchmark's name"
            from bench.__main__ import available

            if args[0] not in available():
                return f"python -m bench runs no benchmark named {args[0]!r} (it runs: {', '.join(available())})"
            return _bench(args[0], args[1:])
        if module.startswith("bench."):
            return _bench(module[len("bench.") :], args)
        return f"unknown kind of command: python -m {module}"
    if head == "rdtlab":
        from rdtlab.cli import build_parser

        return _parse(build_parser(), words[1:])
    if head == "pytest":
        paths, skip = [], False
        for w in words[1:]:
            if skip:
                skip = False
            elif w in PYTEST_VALUED:
                skip = True
            elif not w.startswith("-"):
                paths.append(w.split("::")[0])
        missing = [p for p in paths if not os.path.exists(os.path.join(ROOT, p))]
        return f"no such test path {', '.join(missing)}" if missing else None
    if head == "cargo" and words[1:2] == ["test"]:
        if "--manifest-path" not in words or "--test" not in words:
            return "cargo test needs --manifest-path and --test NAME"
        manifest = words[words.index("--manifest-path") + 1]
        test = words[words.index("--test") + 1]
        if not os.path.isfile(os.path.join(ROOT, manifest)):
            return f"no manifest {manifest}"
        if not os.path.isfile(os.path.join(ROOT, os.path.dirname(manifest), "tests", f"{test}.rs")):
            return f"no test {test} beside {manifest}"
        return None
    return f"unknown kind of command: {command!r}"


def check_row(row: dict[str, str]) -> list[str]:
    """What is wrong with a table row, or [] if nothing."""
    problems = []
    if row.get("_width") != len(COLUMNS):
        problems.append(f"{row.get('_width')} cells, expected {len(COLUMNS)}")
    try:
        datetime.date.fromisoformat(row.get("date", ""))
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", row.get("date", "")):
            raise ValueError
    except ValueError:
        problems.append(f"date {row.get('date')!r} is not YYYY-MM-DD")
    if not re.fullmatch(r"[1-9]\d*", row.get("cores", "")):
        problems.append(f"cores {row.get('cores')!r} is not a number")
    commands = re.findall(r"`([^`]+)`", row.get("command", ""))
    if not commands:
        problems.append("no command in backticks")
    for command in commands:
        why = check_command(command)
        if why:
            problems.append(f"`{command}`: {why}")
    return problems


def _rows() -> list[tuple[str, dict[str, str]]]:
    with open(BENCHMARKS) as f:
        found = tables(f.read())
    return [(section, row) for section, _, rows in found for row in rows]


def test_every_table_has_the_columns_and_rows():
    with open(BENCHMARKS) as f:
        found = tables(f.read())
    assert found, "BENCHMARKS.md has no table"
    for section, header, rows in found:
        assert header == COLUMNS, f"{section}: columns {header}, expected {COLUMNS}"
        assert rows, f"{section}: an empty table"


@pytest.mark.parametrize("section,row", _rows(), ids=lambda x: x if isinstance(x, str) else x["figure"][:50])
def test_a_rows_date_cores_and_commands_are_valid(section, row):
    assert check_row(row) == [], f"{section}: {row['_line']}"


def test_a_command_naming_a_module_or_option_that_does_not_exist_fails():
    def row(command: str) -> dict[str, str]:
        ((_, _, [parsed]),) = tables(
            f"## X\n\n| {' | '.join(COLUMNS)} |\n|---|---|---|---|---|---|\n"
            f"| a figure | 1 s | 2026-01-02 | 2 | {command} | nothing |\n"
        )
        return parsed

    assert check_row(row("`python -m bench reference --quick`")) == []
    for bad in (
        "`python -m bench no_such_bench --quick`",  # no module
        "`python -m bench reference --no-such-option`",  # an option its parser refuses
        "`python -m bench.no_such_module`",
        "`python -m bench.calibrate --jobs many`",  # a value its parser refuses
        "`rdtlab sheet --no-such-flag`",
        "`make no-such-target`",
        "`pytest tests/no_such_test.py`",
        "`sh -c true`",  # not a known kind
        "no command at all",
    ):
        assert check_row(row(bad)), bad
    bad_date = row("`make test`") | {"date": "2026-13-01"}
    bad_cores = row("`make test`") | {"cores": "two"}
    assert check_row(bad_date) and check_row(bad_cores)
