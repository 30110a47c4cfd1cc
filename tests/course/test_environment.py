"""The kit's Python environment, as `make setup` leaves it."""

import subprocess
import sys

# In a fresh process, as nbgrader's commands, alembic and JupyterLab's server start.
PROBE = """
import sys
import nbformat, jupyter_events.validators
nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]))
print("lark" in sys.modules)
"""


def test_nbformat_imports_without_compiling_jsonschemas_iri_grammars():
    """rdtlab/no_rfc3987_syntax.pth: jsonschema's IRI formats (used by no Jupyter schema)
    are left unchecked, not compiled from 35 grammars at every start,
    and validating a notebook still works."""
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"], "a grammar library was imported: the .pth is not in the environment"
