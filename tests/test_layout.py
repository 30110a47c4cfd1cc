"""What the layout promises: the benchmarks stand on the kit alone (bench/ imports nothing
from tests/; the tests may drive the benchmarks' code)."""

import ast
import pathlib

import pytest

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

ROOT = pathlib.Path(__file__).resolve().parent.parent


def imported(path: pathlib.Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_bench_imports_nothing_from_tests():
    offenders = {
        str(p.relative_to(ROOT)): sorted(n for n in imported(p) if n.split(".")[0] == "tests")
        for p in (ROOT / "bench").rglob("*.py")
    }
    assert not {p: n for p, n in offenders.items() if n}, offenders


def test_the_check_sees_an_import_from_tests(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from tests.support import course\n")
    assert "tests.support" in imported(module)
