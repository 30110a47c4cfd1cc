"""Corruption in TUN mode under the engine's two rules, with kernel TCP (needs root).

`tun_corruption: netem` flips a bit and leaves the checksum wrong, as tc-netem: the
receiving kernel must drop every corrupted segment (its own counters say so), and TCP
must still deliver the file byte for byte by retransmitting. The default rule,
`repair`, hands the damage to the application, so TCP delivers a damaged file: the
reason the gbn-vs-tcp sheet uses the netem rule for TCP.
"""

import pytest

from harness.transfer import Link, Program, run_transfer

pytestmark = pytest.mark.netns

SIZE = 300_000
SEND = "python3 -m reference.tcpfile send --host {receiver_host} --port {receiver_port} --file {file}"
# The receiver prints its namespace's IP and TCP counters once the file is written (after
# a pause, so the sender's last ACK has crossed the link too).
RECV_AND_COUNT = (
    'sh -c \'python3 -m reference.tcpfile recv --port "$1" --file "$2" && sleep 0.3 '
    "&& cat /proc/net/snmp' receiver {listen_port} {output}"
)


def snmp(text: str) -> dict[str, dict[str, int]]:
    """/proc/net/snmp as {"Ip": {"InHdrErrors": n, ...}, "Tcp": {...}, ...}."""
    lines = [ln.split() for ln in text.splitlines() if ":" in ln]
    out = {}
    for names, values in zip(lines[::2], lines[1::2]):
        if names[0] == values[0]:
            out[names[0].rstrip(":")] = dict(zip(names[1:], map(int, values[1:])))
    return out


def transfer(rule: str, receiver: str = RECV_AND_COUNT):
    return run_transfer(
        Program(SEND),
        Program(receiver),
        Link("corrupt 10%", tun_corruption=rule),
        size=SIZE,
        seed=7,
        backend="netns",
        time_limit=60,
        stop_receiver_when_done=False,
    )


def test_netem_rule_corrupted_segments_are_dropped_by_the_kernel_and_tcp_recovers():
    res = transfer("netem")
    assert res.ok and res.verified, res.error  # byte for byte, through the kernel's TCP
    corrupted = res.link["forward"]["corrupted"]
    assert corrupted >= 10, res.link["forward"]  # ~10% of ~220 segments and ACKs
    assert res.link["reverse"]["corrupted"] > 0  # ACKs are damaged too, as by netem
    counters = snmp(res.receiver.stdout_tail)
    # Every flipped bit broke a checksum the receiving kernel checks: the IPv4 header's
    # (InHdrErrors) or TCP's (InCsumErrors); none reached the application.
    dropped = counters["Ip"]["InHdrErrors"] + counters["Tcp"]["InCsumErrors"]
    assert dropped == corrupted, (counters["Ip"], counters["Tcp"], res.link["forward"])
    assert res.retransmissions >= 1  # TCP resent what the kernel dropped


def test_repair_rule_hands_the_damage_to_tcp_and_its_file():
    res = transfer("repair", "python3 -m reference.tcpfile recv --port {listen_port} --file {output}")
    assert res.link["forward"]["corrupted"] > 0
    # Every byte arrived, yet the file differs (the harness may see the receiver leave
    # with its output complete in length but wrong before it sees the sender exit).
    assert not res.ok and not res.verified
    assert "output differs from input at byte" in res.error or f"{SIZE} of {SIZE} bytes" in res.error, res.error


def test_netem_rule_needs_the_netns_backend():
    from harness.procs import UsageError

    with pytest.raises(UsageError, match="needs the netns backend"):
        run_transfer(
            Program(SEND),
            Program("true {listen_port}"),
            Link("corrupt 1%", tun_corruption="netem"),
            size=10,
            backend="local",
        )
    with pytest.raises(UsageError, match="tun_corruption must be one of repair, netem"):
        run_transfer(Program(SEND), Program("true {listen_port}"), Link("", tun_corruption="drop"), size=10)
