"""The machinery of the course's results-sheet notebooks: `builder.py` (cells with their
nbgrader roles, the cells every sheet shares). Each assignment's own cells are in its
folder (assignments/<name>/notebook.py); `python assignments/build_results_sheet.py`
writes them all."""
