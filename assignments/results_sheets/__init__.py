"""The course's results-sheet notebooks as code: `builder.py` (cells with their nbgrader
roles, the cells every sheet shares) and one module per assignment with its questions,
reference answers and marking notes (`comn.py`, `tcp_like.py`, `multihoming.py`, `gbn_vs_tcp.py`, `stop_and_wait_crc.py`).
`python assignments/build_results_sheet.py` writes them all."""

ASSIGNMENTS = {"comn": "comn", "tcp-like": "tcp_like", "multihoming": "multihoming",   # name -> module
               "gbn-vs-tcp": "gbn_vs_tcp", "stop-and-wait-crc": "stop_and_wait_crc"}
