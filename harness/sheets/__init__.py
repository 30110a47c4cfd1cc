"""Results sheets: declared sweeps, tables, plots and prompts (sheet.py), rendered to
Markdown, HTML, PNG and CSV (render.py). comn.py is the COMN sheet (seed 004)."""
