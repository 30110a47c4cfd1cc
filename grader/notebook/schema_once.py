"""nbgrader's check of its cell metadata, with the schema checked once a process.

nbgrader 0.9 checks each graded cell's `nbgrader` metadata with
`jsonschema.validate(metadata, schema)`, and that function first checks the schema
itself against JSON Schema's meta-schema: for every cell, at every step that checks
(CheckCellMetadata before and after the kernel ran), most of what the check costs
(BENCHMARKS.md, "Notebooks"). `install()` gives nbgrader's module the same validation,
with each schema's validator made, and the schema checked, at its first use.
"""

from __future__ import annotations

from types import SimpleNamespace

import jsonschema
from jsonschema.exceptions import best_match

_validators: dict[int, tuple] = {}


def validate(instance, schema) -> None:
    """jsonschema.validate(instance, schema), the schema checked at its first use only."""
    entry = _validators.get(id(schema))
    if entry is None or entry[0] is not schema:  # the schema kept: its id is not reused
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        entry = _validators[id(schema)] = (schema, cls(schema))
    error = best_match(entry[1].iter_errors(instance))
    if error is not None:
        raise error


def install() -> None:
    """Make nbgrader's metadata validator (nbgrader.nbgraderformat.common) use `validate`."""
    from nbgrader.nbgraderformat import common

    common.jsonschema = SimpleNamespace(validate=validate, ValidationError=jsonschema.ValidationError)
