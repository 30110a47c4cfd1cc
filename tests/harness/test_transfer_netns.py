"""run_transfer on the netns backend: namespaces, TUN devices, IPv4/IPv6, TCP, two paths."""

import os
import shutil

import pytest

from harness import Link, Path, Program, run_transfer
from harness.backends.netns import sweep_stale
from tests.support.runs import interrupted_run, sw_receiver, sw_sender

pytestmark = pytest.mark.netns


@pytest.mark.parametrize("ipv6", [False, True], ids=["ipv4", "ipv6"])
def test_stop_and_wait_between_namespaces(ipv6):
    res = run_transfer(
        sw_sender(), sw_receiver(), Link("delay 2ms loss 10%"), size=40_000, seed=4, backend="netns", ipv6=ipv6
    )
    assert res.ok, res.error
    assert res.endpoints["targets"] == ["fd00:7264:746c:1::2:5001" if ipv6 else "198.18.1.2:5001"]
    # Only the programs' packets cross the link (no IPv6 autoconf chatter): every
    # forward packet is a data message or its retransmission.
    assert res.packets["forward"] == 40 + res.retransmissions
    assert res.retransmissions == res.printed["retransmissions"] > 0


def test_tcp_works_iperf3_across_the_link():
    if not shutil.which("iperf3"):
        pytest.fail("iperf3 is missing: `make debs` installs it")
    res = run_transfer(
        Program("iperf3 -c {receiver_host} -p {receiver_port} -n 1M --json", output_format="iperf3-json"),
        Program("iperf3 -s -1 -p {listen_port}"),
        Link("delay 5ms rate 10mbit"),
        backend="netns",
        seed=1,
        verify=False,
        time_limit=30,
    )
    assert res.ok, (res.error, res.sender.stderr_tail[-500:], res.receiver.stderr_tail[-500:])
    # The link's 10 Mbit/s (1220 KB/s) caps TCP; on an idle machine TCP over the 10 ms
    # RTT gets ~1100 KB/s, on the shared 2-core machine under load it can get far less.
    assert 100 < res.printed["throughput_kBps"] <= 1230, res.printed
    # The data crossed the engine (iperf3 -n 1M may close before its last bytes go).
    assert res.link["forward"]["bytes_delivered"] > 0.8 * (1 << 20)


def test_multi_homed_hosts_get_an_interface_per_path():
    sender = Program(
        sw_sender()
        .command.replace("{receiver_host}", "{receiver_host2}")
        .replace("{receiver_port}", "{receiver_port2}"),
        output_format="comn-sw",
    )
    res = run_transfer(
        sender,
        sw_receiver(),
        paths=[Path(Link("delay 1ms")), Path(Link("delay 3ms"), name="slow")],
        size=10_000,
        seed=1,
        backend="netns",
    )
    assert res.ok, res.error
    assert res.endpoints["targets"] == ["198.18.1.2:5001", "198.18.2.2:5001"]
    assert res.link["paths"]["p0"]["forward"]["packets_in"] == 0
    assert res.link["paths"]["slow"]["forward"]["packets_in"] == 10


def test_stale_namespaces_of_dead_runs_are_swept():
    from pyroute2 import netns

    name = "rdt-999999999-1-s"  # no such pid
    netns.create(name)
    assert name in sweep_stale()
    assert name not in netns.listnetns()


def test_hanging_sender_in_a_namespace_is_killed():
    from tests.support.runs import bad

    res = run_transfer(bad("hang"), sw_receiver(), Link(""), size=100, seed=1, backend="netns", time_limit=1)
    # -9 once it ignores SIGTERM; -15 if the limit came before its start-up got that far
    # (Python's start-up can take over a second on the loaded machine).
    assert res.error.startswith("timed out after 1 s") and res.sender.exit_code in (-9, -15)


def test_ctrl_c_mid_run_leaves_no_namespace_or_process():
    interrupted_run("netns")


def test_kernel_backend_set_up_over_veth(monkeypatch):
    """The kernel backend's namespaces, veth pair and addresses, with netem's absence
    patched over and a perfect link (which adds no qdisc): the set-up that does not
    need sch_netem is exercised here; with sch_netem the same path adds the qdiscs."""
    monkeypatch.setattr("harness.backends.kernel.unavailable_reason", lambda: None)
    res = run_transfer(sw_sender(), sw_receiver(), Link(""), size=20_000, seed=1, backend="kernel")
    assert res.ok, res.error
    assert res.backend == "kernel" and res.link is None and res.endpoints["targets"] == ["198.18.1.2:5001"]
    shared = run_transfer(
        sw_sender(), sw_receiver(), Link("", shared_queue=True), size=20_000, seed=1, backend="kernel"
    )
    assert shared.ok, shared.error
    assert shared.endpoints["targets"] == ["127.0.0.1:5001"]


def test_a_namespace_set_up_failure_is_a_failed_result(monkeypatch):
    """`ip` refusing a line of the set-up (here a device the engine did not make) fails
    the run in one line naming the namespace and ip's reason, and removes both namespaces."""
    from harness.backends import netns

    lines = netns.device_lines
    monkeypatch.setattr(netns, "device_lines", lambda *a: (lines(*a)[0] + ["link set dev nosuchdev up"], lines(*a)[1]))
    res = run_transfer(sw_sender(), sw_receiver(), Link(""), size=100, seed=1, backend="netns")
    assert not res.ok and res.error.startswith("engine failed: setting up rdt-") and "nosuchdev" in res.error, res.error
    assert "\n" not in res.error
    assert not [n for n in os.listdir("/run/netns") if n.startswith(f"rdt-{os.getpid()}-")]
