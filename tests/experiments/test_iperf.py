"""The iperf3 baseline: argument building and report parsing (known values), and one
real iperf3 TCP transfer between namespaces through the engine (needs root)."""

import json

import pytest

from harness.experiments.iperf import IperfRun, client_argv, parse_iperf_json
from harness.experiments.sweep import Sweep, grid, run_sweep, summarize_cells
from harness.procs import UsageError


def test_client_arguments():
    argv = client_argv("198.18.1.2", 4096, 1 << 20, None, 1024)
    assert argv == ["iperf3", "-c", "198.18.1.2", "-p", "5201", "-J", "-M", "1024", "-w", "4096", "-n", "1048576"]
    assert client_argv("198.18.1.2", 1024, None, 2.5, 1024)[-2:] == ["-t", "2.5"]
    with pytest.raises(UsageError):
        client_argv("h", 1024, None, None, 1024)


def test_report_parsing_uses_the_receiver_side():
    report = {
        "end": {
            "sum_sent": {"bytes": 1048576, "seconds": 10.0, "retransmits": 42},
            "sum_received": {"bytes": 1024000, "seconds": 10.0},
        }
    }
    row = parse_iperf_json(json.dumps(report))
    assert row == {
        "ok": True,
        "error": None,
        "goodput_kBps": 100.0,
        "bytes": 1024000,
        "wire_time_s": 10.0,
        "retransmissions": 42,
        "tcp_cc": None,
    }
    assert (
        parse_iperf_json(json.dumps({"error": "unable to connect to server"}))["error"]
        == "iperf3: unable to connect to server"
    )
    assert "no JSON report" in parse_iperf_json("iperf3: error - bad\n")["error"]
    assert not parse_iperf_json(json.dumps({"end": {}}))["ok"]


@pytest.mark.netns
def test_iperf3_tcp_through_the_engine():
    run = IperfRun("delay {delay}ms loss {loss}% rate 10mbit", size=200 << 10, time_limit=60)
    frame = run_sweep(Sweep("tcp", run, grid(delay=[5], loss=[0], window_kB=[4, 32]), runs=1), jobs=2, progress=False)
    table = summarize_cells(frame, ["delay", "loss", "window_kB"], "goodput_kBps").set_index("window_kB")
    assert (table["status"] == "ok").all(), frame["error"].tolist()
    # A 4 KiB window over an ~11 ms round trip carries at most ~4/0.011 = 360 KiB/s;
    # 32 KiB is not window-limited that way, and nothing beats 10 Mbit/s (1220 KiB/s).
    assert table.loc[4, "mean"] < 420
    assert table.loc[4, "mean"] < table.loc[32, "mean"] < 1221
