"""The course's results-sheet notebooks as code: `builder.py` (cells with their nbgrader
roles, the cells every sheet shares) and one module per assignment with its questions,
reference answers and marking notes (`comn.py`, `tcp_like.py`, `multihoming.py`, `gbn_vs_tcp.py`, `stop_and_wait_crc.py`).
`python assignments/build_results_sheet.py` writes them all."""

# name -> module: the same as the harness's module per assignment (harness/assignments)
from harness.assignments import MODULES as ASSIGNMENTS  # noqa: E402,F401
