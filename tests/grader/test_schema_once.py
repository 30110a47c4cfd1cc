"""nbgrader's cell-metadata check with its schema checked once: the same verdicts as
nbgrader's own, and the meta-schema check made once however many cells are checked."""

import jsonschema
import pytest
from nbformat.v4 import new_code_cell

from grader.notebook import schema_once

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)


def cell(**nbgrader):
    c = new_code_cell("x = 1")
    c.metadata["nbgrader"] = {
        "schema_version": 3,
        "grade": False,
        "locked": False,
        "solution": True,
        "task": False,
        "grade_id": "answer",
        **nbgrader,
    }
    return c


@pytest.fixture
def installed(monkeypatch):
    from nbgrader.nbgraderformat import common

    monkeypatch.setattr(common, "jsonschema", common.jsonschema)  # nbgrader's own again afterwards
    monkeypatch.setattr(schema_once, "_validators", {})
    schema_once.install()
    return common


def test_nbgraders_validator_gives_the_same_verdicts(installed):
    from nbgrader.nbgraderformat import MetadataValidator

    validator = MetadataValidator()
    validator.validate_cell(cell())
    validator.validate_cell(cell(grade=True, points=2))
    for bad in (cell(grade="yes"), cell(points=-1, grade=True)):
        with pytest.raises(jsonschema.ValidationError):
            validator.validate_cell(bad)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad.metadata["nbgrader"], validator.schema)  # nbgrader's own verdict


def test_the_schema_is_checked_once(installed, monkeypatch):
    from nbgrader.nbgraderformat import MetadataValidator

    validator = MetadataValidator()
    cls = jsonschema.validators.validator_for(validator.schema)
    checks = []
    monkeypatch.setattr(cls, "check_schema", classmethod(lambda c, schema: checks.append(schema)))
    for k in range(20):
        validator.validate_cell(cell(grade_id=f"answer_{k}"))
    assert checks == [validator.schema]
