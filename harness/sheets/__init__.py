"""Results sheets: declared sweeps, tables, plots and prompts (sheet.py), rendered to
Markdown, HTML, PNG and CSV (render.py), with what the sheets share (tables.py, plots.py,
programs.py) and `rdtlab sheet` (cli.py). Each sheet is its assignment's
(assignments/<name>/sheet.py; assignments/comn/sheet.py is the COMN sheet, seed 004)."""
