"""The GBN-vs-TCP sheet (seed 001) end to end through the real harness, engine, reference
GBN and kernel TCP: a small plan (three objects, a few settings) renders its tables, plots
and the report's numbers; a student directory whose sender rejects its arguments renders
with the failures marked; bad arguments get one line."""

import os
import re
from dataclasses import replace

import pandas as pd

from rdtlab.cli import main as rdtlab
from assignments.gbn_vs_tcp import sheet as gbn_vs_tcp
from harness.sheets.render import write_sheet
from harness.sheets.sheet import measure

TINY = replace(
    gbn_vs_tcp.QUICK,
    size=30_000,
    objects=3,
    runs=1,
    rules=("", "loss 10%", "corrupt 10%"),
    tune_windows=(10, 25),
    tune_timeouts=(300,),
    tune_runs=1,
    tune_size=20_000,
)


def test_small_gbn_vs_tcp_sheet_from_real_transfers(tmp_path):
    sheet = gbn_vs_tcp.build(None, TINY, "netns")
    results = measure(sheet, jobs=8, results_path=str(tmp_path / "runs.jsonl"), progress=False)
    paths = write_sheet(sheet, results, str(tmp_path / "out"))
    for name in ("loss.png", "corruption.png", "tune.csv", "gbn.csv", "gbn_tuned.csv", "tcp.csv"):
        assert os.path.getsize(tmp_path / "out" / name) > 0, name
    frames = {k: pd.read_csv(tmp_path / "out" / f"{k}.csv", keep_default_na=False) for k in ("gbn", "gbn_tuned", "tcp")}
    for key, frame in frames.items():
        assert len(frame) == 3 and frame["ok"].all(), (key, list(frame["netem"]), list(frame["error"]))
        assert (frame["objects"] == 3).all()
    # the tuned GBN ran with the best pair of the tuning sweep
    tune = pd.read_csv(tmp_path / "out" / "tune.csv")
    best = tune.loc[tune["wire_time_s"].idxmin()]
    assert (frames["gbn_tuned"]["window"] == best["window"]).all() and (frames["gbn_tuned"]["timeout"] == 300).all()
    gbn, tcp = (f.set_index("netem") for f in (frames["gbn"], frames["tcp"]))
    # a lost packet costs GBN a 0.7 s timeout; kernel TCP delivered every object intact
    # through 10% corruption because the engine's netem rule made its kernel drop them
    assert gbn.loc["loss 10%", "total_s"] > gbn.loc["", "total_s"] + 0.5
    assert tcp.loc["corrupt 10%", "ok"]
    md = open(paths["md"]).read()
    assert "GBN / TCP time ratio, loss 10%" in md and "ours / report" in md
    assert f"GBN tuned {int(best['window'])}/0.3s avg" in md
    assert "FAILED" not in md and "not measured" not in md.split("## 6. Duplication")[0]


def test_student_directory_with_a_broken_sender(tmp_path, capsys):
    impl = tmp_path / "student"
    impl.mkdir()
    (impl / "Sender3.py").write_text(
        "import sys\nprint('usage: Sender3.py host port file timeout window', file=sys.stderr)\nsys.exit(2)\n"
    )
    (impl / "Receiver3.py").write_text(
        "import socket, sys, time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "s.bind(('', int(sys.argv[1])))\ntime.sleep(30)\n"
    )
    out = tmp_path / "out"
    status = rdtlab(
        [
            "sheet",
            "gbn-vs-tcp",
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
        r"gbn cell netem=loss 10%: every run failed: object 1 of 10 \([\d,]+ bytes\): sender failed "
        r"\(exit 2.*usage: Sender3\.py",
        err,
    ), err
    assert "gbn_tuned cell" in err and "the tuning sweep measured nothing" in err
    md = open(out / "gbn-vs-tcp" / "sheet.md").read()
    assert "FAILED: object 1 of 10" in md
    assert "**Not run**: kernel TCP runs between network namespaces" in md  # local backend: no TCP
    assert os.path.exists(out / "gbn-vs-tcp" / "sheet.html") and os.path.exists(out / "gbn-vs-tcp" / "loss.png")


def test_bad_arguments(tmp_path, capsys):
    assert rdtlab(["sheet", "gbn-vs-tcp", "--impl", str(tmp_path / "nope")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert rdtlab(["sheet", "gbn-vs-tcp", "--impl", str(tmp_path)]) == 2
    assert "lacks Sender3.py, Receiver3.py" in capsys.readouterr().err
