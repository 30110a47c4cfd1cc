"""End to end, through the real harness, engine and reference programs: a small COMN
sheet renders with its plot and numbers; a student directory with missing or broken
programs still gives a sheet, with the failures marked; parallel = serial on real cells."""

import os
import re
import shutil
from dataclasses import replace

import pandas as pd
import pytest

from rdtlab.cli import main as rdtlab
from harness.experiments.sweep import Sweep, grid, run_sweep, summarize_cells
from harness.experiments.transfers import TransferRun
from assignments.comn import sheet as comn
from harness.sheets.render import write_sheet
from harness.sheets.sheet import measure
from harness.transfer import Program

REF = comn.REFERENCE
TINY = replace(comn.QUICK, size=20 << 10, q1_timeouts=(20, 50))


def test_small_sheet_from_real_transfers(tmp_path):
    sheet = comn.build(REF, TINY, "auto", runs=2, questions=("q1",))
    results = measure(sheet, jobs=4, results_path=str(tmp_path / "runs.jsonl"), progress=False)
    paths = write_sheet(sheet, results, str(tmp_path / "comn"))
    for name in ("sheet.md", "sheet.html", "q1.png", "q1.csv"):
        assert os.path.getsize(tmp_path / "comn" / name) > 0, name
    assert open(tmp_path / "comn" / "q1.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    rows = pd.read_csv(tmp_path / "comn" / "q1.csv")
    assert len(rows) == 4 and rows["ok"].all(), rows[["timeout", "ok", "error"]]
    md = open(paths["md"]).read()
    for timeout in (20, 50):
        mean = rows[rows["timeout"] == timeout]["goodput_kBps"].mean()
        line = next(ln for ln in md.splitlines() if ln.startswith(f"| {timeout} |"))
        assert f"{mean:,.1f}" in line and "2/2" in line
    assert "**Not run**: not selected" in md  # q3, q5, q7 were left out
    assert "Optimal timeout from these measurements" in md
    assert "<table" in open(paths["html"]).read()


def _student_dir(tmp_path) -> str:
    """Stop-and-wait from the reference; a GBN sender that rejects its arguments; no SR."""
    impl = tmp_path / "student"
    impl.mkdir()
    for name in ("Sender2.py", "Receiver2.py", "Receiver3.py"):
        shutil.copy(os.path.join(REF, name), impl / name)  # they import `reference` via PYTHONPATH
    (impl / "Sender3.py").write_text(
        "import sys\nprint('usage: Sender3.py host port file timeout', file=sys.stderr)\nsys.exit(2)\n"
    )
    return str(impl)


def test_student_directory_with_missing_and_broken_programs(tmp_path, capsys):
    impl = _student_dir(tmp_path)
    out = tmp_path / "out"
    status = rdtlab(
        [
            "sheet",
            "comn",
            "--impl",
            impl,
            "--quick",
            "--size",
            "10KiB",
            "--questions",
            "q1,q3,q5",
            "--runs",
            "1",
            "--out",
            str(out),
            "--no-progress",
            "--jobs",
            "4",
        ]
    )
    err = capsys.readouterr().err
    assert status == 1  # some cells failed
    assert "q5 will not run: " in err and "lacks Sender4.py, Receiver4.py" in err
    assert re.search(
        r"q3 cell delay=5, loss=5, timeout=20, window=1: every run failed: sender failed \(exit 2.*usage: Sender3\.py",
        err,
    )
    md = open(out / "comn" / "sheet.md").read()
    assert "lacks Sender4.py, Receiver4.py" in md
    assert re.search(r"FAILED: sender failed \(exit 2.*usage: Sender3\.py host port file timeout", md)
    q1 = pd.read_csv(out / "comn" / "q1.csv")
    assert q1["ok"].all() and len(q1) == 5
    q3 = pd.read_csv(out / "comn" / "q3.csv")
    assert not q3["ok"].any() and len(q3) == 15  # one run per cell: all failed, none retried


def test_bad_sheet_arguments(tmp_path, capsys):
    assert rdtlab(["sheet", "comn", "--impl", str(tmp_path / "nope")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert rdtlab(["sheet", "comn", "--impl", str(tmp_path), "--questions", "q1,q3"]) == 2
    assert "has none of the programs" in capsys.readouterr().err
    assert rdtlab(["sheet", "comn", "--questions", "q2"]) == 2
    assert "unknown q2" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        rdtlab(["sheet", "comn", "--runs", "0"])


def test_parallel_and_serial_real_cells_agree(tmp_path):
    run = TransferRun(
        Program(f"python3 {REF}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} {{timeout}}", "comn-sw"),
        Program(f"python3 {REF}/Receiver2.py {{listen_port}} {{output}}"),
        "delay {delay}ms loss 5% rate 10mbit",
        size=30 << 10,
        time_limit=60,
    )
    cells = grid(delay=[5, 15], timeout=[40])
    serial = run_sweep(Sweep("pvs", run, cells, runs=3), jobs=1, progress=False)
    parallel = run_sweep(Sweep("pvs", run, cells, runs=3), jobs=6, progress=False)
    a = summarize_cells(serial, ["delay"], "goodput_kBps").set_index("delay")
    b = summarize_cells(parallel, ["delay"], "goodput_kBps").set_index("delay")
    assert (a["n"] == 3).all() and (b["n"] == 3).all()
    for delay in (5, 15):
        # The confidence intervals overlap (same seeds, so the same losses).
        assert abs(a.loc[delay, "mean"] - b.loc[delay, "mean"]) <= a.loc[delay, "margin"] + b.loc[delay, "margin"]
    assert a.loc[5, "mean"] > a.loc[15, "mean"]  # the delay shows in the numbers


def test_ctrl_c_keeps_partial_results_and_a_rerun_resumes(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "out"
    argv = [
        sys.executable,
        "-m",
        "rdtlab",
        "sheet",
        "comn",
        "--quick",
        "--questions",
        "q1",
        "--size",
        "30KiB",
        "--runs",
        "3",
        "--jobs",
        "2",
        "--out",
        str(out),
        "--no-progress",
    ]
    # SIGINT must be at its default: a background shell would start us with it ignored.
    scratch = tmp_path / "tmp"  # the runs' work directories go here (TMPDIR)
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch))
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    results = None
    while time.monotonic() < deadline and proc.poll() is None:
        found = list((out / "comn").glob("runs-*.jsonl")) if (out / "comn").exists() else []
        if found and found[0].read_text().count("\n") >= 2:
            results = found[0]
            break
        time.sleep(0.1)
    assert results is not None, "no run finished within 60 s"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted; partial results kept" in err
    assert "**Interrupted**" in (out / "comn" / "sheet.md").read_text()
    kept = results.read_text().splitlines()
    assert 2 <= len(kept) < 15
    assert not list(scratch.iterdir())  # every run cleaned up
    assert not _processes_working_in(scratch)  # and nothing left running
    assert subprocess.run(argv, capture_output=True, text=True, env=env).returncode == 0
    lines = results.read_text().splitlines()
    assert lines[: len(kept)] == kept and len(lines) == 15  # nothing measured twice
    assert "Interrupted" not in (out / "comn" / "sheet.md").read_text()


def _processes_working_in(directory) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.readlink(f"/proc/{entry}/cwd").startswith(str(directory)):
                found.append(int(entry))
        except OSError:
            pass
    return found
