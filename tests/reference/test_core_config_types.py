"""reference/core/config.pyi (the type checker's view of CoreConfig) names the same fields,
in the same order, as the named tuple config.py builds, with types its defaults have."""

import pytest
import ast
import os

from reference.core import config

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

STUB = os.path.join(os.path.dirname(config.__file__), "config.pyi")
TYPES = {"int": int, "float": (int, float), "bool": bool}


def stub_fields() -> dict[str, str]:
    tree = ast.parse(open(STUB).read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "CoreConfig")
    return {n.target.id: ast.unparse(n.annotation) for n in cls.body if isinstance(n, ast.AnnAssign)}


def test_the_stub_and_the_named_tuple_agree():
    fields = stub_fields()
    assert list(fields) == list(config._FIELDS) == list(config.CoreConfig._fields)
    for name, annotation in fields.items():
        default = config._FIELDS[name]
        base, _, optional = annotation.partition(" | ")
        if default is None:
            assert optional == "None", f"{name} defaults to None but is typed {annotation}"
        else:
            assert isinstance(default, TYPES[base]), f"{name}'s default {default!r} is not a {base}"
