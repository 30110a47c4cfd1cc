"""Kernel TCP pinned in the namespaces a backend makes (harness/backends/tcp.py): each
algorithm read back from a live connection, whatever the host's default; the pinned
sysctls; the option's one-line error."""

import json
import sys

import pytest

from harness import Link, Program, run_transfer
from harness.backends import tcp
from rdtlab.cli import main
from harness.experiments.iperf import run_iperf
from harness.procs import UsageError

PY = sys.executable
TCPFILE_SEND = (
    f"{PY} -m reference.tcpfile send --host {{receiver_host}} --port {{receiver_port}} --file {{file}} --json"
)
TCPFILE_RECV = f"{PY} -m reference.tcpfile recv --port {{listen_port}} --file {{output}}"
HERE = tcp.available() or []


def host_default() -> str:
    with open("/proc/sys/net/ipv4/tcp_congestion_control") as f:
        return f.read().strip()


def test_an_unavailable_algorithm_is_one_line_naming_it_and_what_is_available():
    with pytest.raises(UsageError) as e:
        tcp.check("nosuchcc")
    text = str(e.value)
    assert "\n" not in text and "'nosuchcc'" in text
    assert all(name in text for name in HERE), text
    assert tcp.check(HERE[0]) == HERE[0]
    with pytest.raises(UsageError):
        run_transfer(Program("true"), Program("true"), Link(""), size=1, backend="netns", tcp_cc="nosuchcc")


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--sender", "true", "--receiver", "true", "--backend", "netns", "--tcp-cc", "nosuchcc"],
        ["sheet", "comn", "--quick", "--tcp-cc", "nosuchcc", "--out", "/nonexistent-rdtlab"],
        ["sheet", "gbn-vs-tcp", "--quick", "--tcp-cc", "nosuchcc", "--out", "/nonexistent-rdtlab"],
    ],
    ids=["run", "sheet-comn", "sheet-other"],
)
def test_the_option_says_so_in_one_line(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'nosuchcc' is not available" in err and "available:" in err, err


def test_the_sysctl_script_writes_the_stated_values():
    script = tcp.sysctl_script()
    assert "echo '1' > /proc/sys/net/ipv4/tcp_no_metrics_save" in script
    assert "echo '1' > /proc/sys/net/ipv4/tcp_sack" in script
    assert "tcp_congestion_control" not in script  # per route, never the namespace's default


@pytest.mark.netns
@pytest.mark.parametrize("cc", ["reno", "cubic", "bbr"])
def test_each_algorithm_is_pinned_and_read_back_from_the_connection(cc):
    if cc not in HERE:
        pytest.skip(f"this kernel lacks {cc}")
    res = run_transfer(
        Program(TCPFILE_SEND, output_format="json"),
        Program(TCPFILE_RECV),
        Link("delay 2ms"),
        size=100_000,
        seed=1,
        backend="netns",
        tcp_cc=cc,
        time_limit=30,
    )
    assert res.ok, res.error
    assert res.tcp_cc == cc
    assert res.printed["congestion_control"] == cc  # what the live connection ran
    assert res.printed["kernel"]


@pytest.mark.netns
def test_pinned_over_ipv6_to_loopback_and_with_the_stated_sysctls():
    """Not the host's default: an algorithm other than it, over IPv6, and over IPv4 to a
    receiver bound to loopback (the loopback NAT's path); the namespace's sysctls are the
    stated ones."""
    cc = next(c for c in ("reno", "cubic", "bbr") if c in HERE and c != host_default())
    res = run_transfer(
        Program(TCPFILE_SEND, output_format="json"),
        Program(TCPFILE_RECV),
        Link("delay 1ms"),
        size=50_000,
        seed=2,
        backend="netns",
        tcp_cc=cc,
        ipv6=True,
        time_limit=30,
    )
    assert res.ok and res.printed["congestion_control"] == cc, (res.error, res.printed)
    knobs = ("tcp_no_metrics_save", "tcp_sack", "tcp_timestamps", "tcp_ecn")
    show = "; ".join(f"cat /proc/sys/net/ipv4/{k} >&2" for k in knobs)
    sender = Program(
        f"sh -c '{show}; exec {TCPFILE_SEND.replace('{receiver_host}', 'localhost')}'", output_format="json"
    )
    res = run_transfer(
        sender,
        Program(TCPFILE_RECV + " --bind 127.0.0.1"),
        Link("delay 1ms"),
        size=50_000,
        seed=3,
        backend="netns",
        tcp_cc=cc,
        time_limit=30,
    )
    assert res.ok and res.printed["congestion_control"] == cc, (res.error, res.printed)
    assert res.sender.stderr_tail.split() == [tcp.SYSCTLS[k] for k in knobs]


@pytest.mark.netns
def test_iperf3_rows_record_the_algorithm_iperf3_read_back():
    cc = next(c for c in ("reno", "cubic", "bbr") if c in HERE and c != host_default())
    row = run_iperf("delay 2ms", window_bytes=65536, size=200_000, tcp_cc=cc, time_limit=30)
    assert row["ok"], row["error"]
    assert row["tcp_cc"] == cc and row["kernel"] == tcp.kernel()


def test_the_rows_of_a_tcpfile_run_name_the_algorithm():
    """row_from_result keeps what the program read back, and the kernel (no run needed)."""
    from harness.experiments.transfers import row_from_result
    from harness.transfer import TransferResult, parse_printed

    printed = parse_printed(
        "json", "noise\n" + json.dumps({"bytes": 1, "congestion_control": "reno", "kernel": "6.1.0"})
    )
    row = row_from_result(
        TransferResult(ok=True, verified=True, error=None, backend="netns", seed=1, size_bytes=1, printed=printed)
    )
    assert row["tcp_cc"] == "reno" and row["kernel"] == "6.1.0"
    assert "tcp_cc" not in row_from_result(
        TransferResult(ok=True, verified=True, error=None, backend="local", seed=1, size_bytes=1)
    )


def test_a_sheet_with_tcp_rows_states_the_algorithm_and_kernel_in_its_header():
    import pandas as pd

    from harness.sheets.render import tcp_header
    from harness.sheets.sheet import Results

    rows = pd.DataFrame(
        [{"ok": True, "tcp_cc": "cubic", "kernel": "6.1.0"}] * 3 + [{"ok": False, "tcp_cc": None, "kernel": None}]
    )
    line = tcp_header(Results(frames={"q7": rows, "q1": pd.DataFrame([{"ok": True}])}))
    assert "q7: cubic (3 connections)" in line and "Linux 6.1.0" in line and "q1" not in line
    assert tcp_header(Results(frames={"q1": pd.DataFrame([{"ok": True}])})) is None


def test_the_notebook_lab_takes_the_option(tmp_path):
    from harness.notebook import Lab

    lab = Lab("quick", "comn", folder=str(tmp_path), backend="local", tcp_cc="reno", progress=False)
    assert lab.sweeps["q7"].run_one.tcp_cc == "reno" and "q7reno" not in lab.sweeps
    assert (
        Lab("quick", "comn", folder=str(tmp_path), backend="local", progress=False).sweeps["q7"].run_one.tcp_cc is None
    )
    with pytest.raises(UsageError, match="must be a name"):
        Lab("quick", "comn", folder=str(tmp_path), backend="local", tcp_cc="")


def test_an_algorithm_this_machine_lacks_leaves_only_the_kernel_tcp_questions_unmeasured(tmp_path, capsys):
    """The set-up cell's description says so and the notebook goes on: the student's own
    programs' questions are measured as ever; Q7's table is empty, with the reason."""
    from harness.notebook import Lab

    lab = Lab("quick", "comn", folder=str(tmp_path), backend="local", tcp_cc="nosuchcc", progress=False)
    said = repr(lab).splitlines()[-1]
    assert said.startswith(
        "kernel TCP is not measured here: TCP congestion control 'nosuchcc' is not available on this machine's Linux"
    ), said
    assert lab.unavailable("q7") == said
    assert lab.unavailable("q1") == f"{tmp_path} has no Sender2.py, Receiver2.py"
    table = lab.measure("q7")
    assert table["throughput_kBps"].isna().all() and said in capsys.readouterr().out
    assert (
        repr(Lab("quick", "comn", folder=str(tmp_path), backend="local", tcp_cc="cubic"))
        .splitlines()[-1]
        .startswith("Kernel TCP: cubic congestion control")
    )


def _routes(ns: str) -> list[str]:
    import subprocess

    return [
        line.strip()
        for family in ("-4", "-6")
        for line in subprocess.run(
            ["ip", "-n", ns, family, "-d", "route", "show", "table", "all"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
    ]


@pytest.mark.netns
@pytest.mark.parametrize("ipv6", [False, True], ids=["ipv4", "ipv6"])
def test_every_unicast_and_local_route_of_both_namespaces_is_pinned(tmp_path, ipv6):
    """The routes are pinned from a list of what the kernel makes (one `ip -batch` per
    namespace): read the whole table back, so a route the list misses, or a copy left
    unpinned, fails here. Two paths, as multihoming runs."""
    from harness import backends
    from harness.procs import Processes

    cc = next(c for c in ("reno", "cubic", "bbr") if c in HERE and c != host_default())
    paths = [{"name": f"p{k}", "forward": "", "reverse": ""} for k in range(2)]
    with Processes() as procs:
        session = backends.open_session(
            "netns", paths=paths, config={"seed": 1}, workdir=str(tmp_path), procs=procs, ipv6=ipv6, tcp_cc=cc
        )
        try:
            for side, ns in ((1, session.sender.netns), (2, session.receiver.netns)):
                routes = _routes(ns)
                pinnable = [r for r in routes if r.split()[0] in ("unicast", "local")]
                assert all(f"initcwnd {tcp.INITCWND} congctl {cc}" in r for r in pinnable), routes
                dsts = {r.split()[1] for r in pinnable}
                assert dsts == {
                    "127.0.0.0/8",
                    "127.0.0.1",
                    "::1",
                    "198.18.1.0/24",
                    "198.18.2.0/24",
                    f"198.18.1.{side}",
                    f"198.18.2.{side}",
                    "fd00:7264:746c:1::/64",
                    "fd00:7264:746c:2::/64",
                    f"fd00:7264:746c:1::{side}",
                    f"fd00:7264:746c:2::{side}",
                }
                assert len(pinnable) == len(dsts), routes  # no unpinned original left beside a copy
        finally:
            session.close()
    import os

    assert not os.path.exists(f"/run/netns/{session.sender.netns}")


@pytest.mark.netns
def test_a_namespace_that_cannot_be_made_is_one_line_and_leaves_none_behind(tmp_path):
    from harness.backends import Host, Session
    from harness.backends.netns import create_namespaces
    from harness.engine import EngineError
    import os
    import subprocess

    prefix = f"rdt-{os.getpid()}-999999"
    subprocess.run(["ip", "netns", "add", f"{prefix}-r"], check=True)  # taken: the second fails
    try:
        session = Session("netns", Host("sender", None, []), Host("receiver", None, []), 5001, [], reachable=[])
        with pytest.raises(EngineError) as e:
            create_namespaces(session, prefix)
        session.close()
        assert "\n" not in str(e.value) and f"{prefix}-s, {prefix}-r" in str(e.value), e.value
        assert not os.path.exists(f"/run/netns/{prefix}-s")
    finally:
        subprocess.run(["ip", "netns", "del", f"{prefix}-r"], check=True)


@pytest.mark.parametrize("paths", [0, 1, 2])
def test_the_set_up_waits_for_one_ipv6_local_route_per_ipv6_address_and_lo(paths):
    devices = [(f"p{k}", f"198.18.{k}.1/24", f"fd00:{k}::1/64") for k in range(1, paths + 1)]
    pins = tcp.route_pins("cubic", devices)
    assert tcp.ipv6_locals(pins) == 1 + paths  # ::1, and each path's IPv6 address
    assert tcp.ipv6_locals(["route add local ::1 dev lo table local metric 1024"]) == 0
