"""Record a full sheet's run times and CPU, for test_sheet_schedule.py.

    rdtlab sheet comn --fresh --out OUT          # or: python -m bench sheet full (OUT: out/bench-sheet-full)
    PYTHONPATH=$PWD python3 tests/harness/record_sheet_runs.py OUT/comn "how it was measured"

writes sheet_runs_<sheet>.json here, the sheet named by the folder (OUT/tcp-like:
sheet_runs_tcp-like.json).

Kept per run: sweep, cell, rep, its wall seconds and the CPU seconds of its programs and
engine (`cpu_s`) and of the harness's thread (`harness_cpu_s`): what the scheduler books a
run by. Re-record when the reference programs or the harness change what a run costs.
"""

import glob
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).parent
KEEP = ("sweep", "cell", "rep", "ok", "elapsed_s", "cpu_s", "harness_cpu_s")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not os.path.isdir(argv[0]):
        print(
            "usage: record_sheet_runs.py SHEET_DIR NOTE   (SHEET_DIR holds the sheet's runs-*.jsonl)", file=sys.stderr
        )
        return 2
    runs = []
    for path in sorted(glob.glob(os.path.join(argv[0], "runs-*.jsonl"))):
        with open(path) as f:
            runs += [json.loads(line) for line in f if line.strip()]
    runs = [{k: r.get(k) for k in KEEP} for r in runs if r.get("cpu_s") is not None]
    runs.sort(key=lambda r: (r["sweep"], r["cell"], r["rep"]))
    out = HERE / f"sheet_runs_{os.path.basename(os.path.normpath(argv[0]))}.json"
    with open(out, "w") as f:  # one run a line
        f.write('{"note": ' + json.dumps(argv[1]) + ',\n"runs": [\n')
        f.write(",\n".join(json.dumps(r) for r in runs) + "\n]}\n")
    print(f"{len(runs)} runs -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
