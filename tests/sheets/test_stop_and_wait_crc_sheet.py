"""The stop-and-wait-with-CRC sheet (seed 002) end to end through the real harness, engine
(TUN mode, IP fragments), reference programs and kernel TCP: a small plan over IPv4 and
IPv6 with 1 KB and 64 KB payloads renders its tables and plots with RTTs read from the
wire; resent 64 KB datagrams are counted on the wire; bad input gives one line."""

import os
import re
from dataclasses import replace

import pandas as pd
import pytest

from rdtlab.cli import main as rdtlab
from assignments.stop_and_wait_crc import sheet as swc
from harness.sheets.render import write_sheet
from harness.sheets.sheet import measure

TINY = replace(swc.QUICK, size=200_000, runs=1, sizes_kb=(1, 64), loss=3, loss_runs=1, tcp_runs=1, loss_kb=(64,))


@pytest.mark.netns
def test_small_sheet_over_ipv4_and_ipv6_from_real_transfers(tmp_path):
    sheet = swc.build(None, TINY, "netns")
    # in parallel (the sheet runs one at a time): the bounds below allow for it
    results = measure(sheet, jobs=4, results_path=str(tmp_path / "runs.jsonl"), progress=False, cpu_budget=4)
    paths = write_sheet(sheet, results, str(tmp_path / "out"))
    for name in ("throughput.png", "rtt.png", "loss.png", "sw.csv", "tcp.csv", "loss.csv"):
        assert os.path.getsize(tmp_path / "out" / name) > 0, name
    sw, tcp, loss = (pd.read_csv(tmp_path / "out" / f"{n}.csv") for n in ("sw", "tcp", "loss"))
    assert sw["ok"].all() and len(sw) == 4, sw[["family", "kb", "error"]]
    assert tcp["ok"].all() and len(tcp) == 2, tcp[["family", "error"]]
    assert loss["ok"].all() and len(loss) == 2, loss[["family", "kb", "error"]]
    by = sw.set_index(["family", "kb"])
    for family in ("IPv4", "IPv6"):
        # a 64 KB datagram crosses as 45-46 fragments: its round trip is their serialisation
        # at 10 Mbit/s plus 2 ms (about 55-57 ms), measured from the engine's trace
        model = swc.rtt_model_ms({"family": family, "kb": 64})
        assert model * 0.97 < by.loc[(family, 64), "rtt_ms"] < model + 40
        assert 2.5 < by.loc[(family, 1), "rtt_ms"] < 30
        # 3 full 64 KB packets (the shorter last one gives none; a spurious resend on a loaded
        # machine takes one away, Karn's rule)
        assert 2 <= by.loc[(family, 64), "rtt_samples"] <= 3 and by.loc[(family, 1), "rtt_samples"] > 150
        assert by.loc[(family, 64), "goodput_mbps"] > 2 * by.loc[(family, 1), "goodput_mbps"]
        assert by.loc[(family, 64), "delay_var_ms"] >= 0
    # 3% loss per IP packet loses a 45-fragment datagram 3 times in 4: the engine sees the
    # resends (each 45 IP packets), and the wire shows the timer doubling between them
    lossy = loss.set_index("family")
    assert (lossy["retransmissions"] >= 4).all() and (lossy["resends_per_packet"] >= 1).all()
    assert lossy["backoff_ratio"].between(1.6, 2.4).any(), lossy["backoff_ratio"]
    assert tcp.set_index("family")["goodput_mbps"].between(5, 10).all()
    md = open(paths["md"]).read()
    assert "65,495" in md and "| 7.51 |" in md and "Delay Variance (ms)" in md
    assert "kernel TCP, IPv6" in md and "could not be built" not in md


def test_missing_program_is_one_line(tmp_path, capsys):
    impl = tmp_path / "student"
    impl.mkdir()
    (impl / "Sender.py").write_text("")
    assert rdtlab(["sheet", "stop-and-wait-crc", "--impl", str(impl), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lacks Receiver.py" in err[0]


def test_student_sender_that_rejects_its_payload(tmp_path, capsys):
    impl = tmp_path / "student"
    impl.mkdir()
    (impl / "Sender.py").write_text(
        "import sys\nprint('usage: Sender.py host port file payload (<= 1024)', file=sys.stderr)\nsys.exit(2)\n"
    )
    (impl / "Receiver.py").write_text(
        "import socket, sys, time\ns = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\n"
        "s.bind(('', int(sys.argv[1])))\ntime.sleep(30)\n"
    )
    out = tmp_path / "out"
    status = rdtlab(
        [
            "sheet",
            "stop-and-wait-crc",
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
            "--backend",
            "local",
            "--jobs",
            "12",
            "--cpu-budget",
            "12",
        ]
    )
    err = capsys.readouterr().err
    assert status == 1
    assert re.search(
        r"sw cell family=IPv6, kb=64, payload=65495: every run failed: sender failed \(exit 2.*usage: "
        r"Sender\.py",
        err,
    )
    md = open(out / "stop-and-wait-crc" / "sheet.md").read()
    assert "FAILED: sender failed (exit 2" in md
    assert "**Not run**: kernel TCP between hosts needs the netns backend" in md
