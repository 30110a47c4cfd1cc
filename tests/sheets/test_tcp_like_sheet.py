"""The TCP-like sheet (seed 003) end to end through the real harness, engine and
reference programs: a small plan renders its tables, plots and the link's queueing
delay; a student directory whose sender rejects its arguments renders with the
failures marked."""

import os
import re
from dataclasses import replace

import pandas as pd

from rdtlab.cli import main as rdtlab
from assignments.tcp_like import sheet as tcp_like
from harness.sheets.render import write_sheet
from harness.sheets.sheet import measure

TINY = replace(
    tcp_like.QUICK, size=30_000, loss_size=30_000, runs=1, losses=(0, 20), windows=(1000, 15000), report_runs=0
)


def test_small_tcp_like_sheet_from_real_transfers(tmp_path):
    sheet = tcp_like.build(None, TINY, "auto")
    results = measure(sheet, jobs=4, results_path=str(tmp_path / "runs.jsonl"), progress=False)
    paths = write_sheet(sheet, results, str(tmp_path / "out"))
    for name in ("loss.png", "window_throughput.png", "window_queueing.png", "loss.csv", "window.csv"):
        assert os.path.getsize(tmp_path / "out" / name) > 0, name
    loss = pd.read_csv(tmp_path / "out" / "loss.csv")
    window = pd.read_csv(tmp_path / "out" / "window.csv")
    assert loss["ok"].all() and len(loss) == 4, loss[["loss", "fast_retransmit", "error"]]
    assert window["ok"].all() and len(window) == 2, window[["window", "error"]]
    # loss costs time: at 20% loss each way a 30-segment file loses segments and waits for them
    lossless = loss[loss["loss"] == 0]["wire_time_s"].max()
    assert (loss[loss["loss"] == 20]["wire_time_s"] > lossless).all()
    assert (loss[loss["loss"] == 20]["retransmissions"] > 0).all()
    # throughput follows the window (1,000 bytes per 20.9 ms round trip is 47 KB/s) ...
    small, big = (window[window["window"] == w]["goodput_kBps"].iloc[0] for w in (1000, 15000))
    assert 30 < small < 50 and big > 5 * small
    # ... and the link's queueing delay is measured, never negative, larger for the larger window
    q_small, q_big = (window[window["window"] == w]["queue_delay_mean_ms"].iloc[0] for w in (1000, 15000))
    assert 0 <= q_small < q_big
    md = open(paths["md"]).read()
    assert "**Not run**: not selected" in md  # the report's runs were left out
    assert "M/D/1" in md and "window/RTT" in md and "speed-up (off/on)" in md
    line = next(ln for ln in md.splitlines() if ln.startswith("| 15000 |"))
    assert f"{big:,.1f}" in line


def test_student_directory_with_a_broken_sender(tmp_path, capsys):
    impl = tmp_path / "student"
    impl.mkdir()
    (impl / "Sender.py").write_text(
        "import sys\nprint('usage: Sender.py host port file window k timeout', file=sys.stderr)\nsys.exit(2)\n"
    )
    (impl / "Receiver.py").write_text(
        "import socket, sys, time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "s.bind(('', int(sys.argv[1])))\ntime.sleep(30)\n"
    )
    out = tmp_path / "out"
    status = rdtlab(
        [
            "sheet",
            "tcp-like",
            "--impl",
            str(impl),
            "--quick",
            "--size",
            "5KB",
            "--runs",
            "1",
            "--out",
            str(out),
            "--no-progress",
            "--jobs",
            "8",
            "--backend",
            "local",
        ]
    )
    err = capsys.readouterr().err
    assert status == 1
    assert re.search(
        r"loss cell loss=0, fast_retransmit=0: every run failed: sender failed \(exit 2.*usage: Sender\.py", err
    )
    md = open(out / "tcp-like" / "sheet.md").read()
    assert "FAILED: sender failed (exit 2" in md
    assert os.path.exists(out / "tcp-like" / "sheet.html")


def test_bad_arguments(tmp_path, capsys):
    assert rdtlab(["sheet", "tcp-like", "--impl", str(tmp_path / "nope")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert rdtlab(["sheet", "multihoming", "--impl", str(tmp_path)]) == 2
    assert "lacks Sender.py, Receiver.py" in capsys.readouterr().err


def test_fast_retransmit_speed_up_and_verdict_from_the_report_runs():
    # two runs each of window 10,000 at 20% loss, off and on (no real transfers: the arithmetic)
    rows = [
        {"case": "fast retransmit", "window": 10_000, "loss": 20, "fast_retransmit": k, "ok": True, "wire_time_s": t}
        for k, times in ((0, (50.0, 60.0)), (tcp_like.REPORT_K, (10.0, 12.0)))
        for t in times
    ]
    frames = {"report": pd.DataFrame(rows)}
    up = tcp_like._speed_up(10_000)(frames)
    assert up["mean"] == 55.0 / 11.0 and up["n"] == 2
    assert tcp_like._speed_up(15_000)(frames) is None  # no runs of that window
    verdict = tcp_like._fast_retransmit_verdict(tcp_like.Results(frames=frames))
    assert verdict.startswith("Measured at 20% loss: window 10,000: ours 55.0 s off (report 78.1), 11.0 s on")
    assert "speed-up 5.00× against 3.84×, larger than the report's" in verdict and "15,000" not in verdict
