"""The real `linkemu` in TUN mode between two network namespaces (needs root).

Each test makes two namespaces (sender side `s`, receiver side `r`), starts the engine
with a TUN device in each, addresses them as docs/reference/interfaces.md says (path 1:
198.18.1.1/.2 and fd00:7264:746c:1::1/::2) and runs small Python programs (or iperf3)
inside the namespaces. Namespaces are removed in the fixture's finalizer, always.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.netns

ADDR = {"s": ("198.18.1.1", "fd00:7264:746c:1::1"), "r": ("198.18.1.2", "fd00:7264:746c:1::2")}
IFA_F_NODAD = 0x02

UDP_ECHO = """
import socket, sys
fam = socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM); s.bind((sys.argv[1], 7000))
print('ready', flush=True)
for _ in range(int(sys.argv[2])):
    d, a = s.recvfrom(70000); s.sendto(d, a)
"""

UDP_PING = """
import json, socket, sys, time
fam = socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(5)
rtts = []
for i in range(int(sys.argv[2])):
    t0 = time.monotonic(); s.sendto(b'ping %d' % i, (sys.argv[1], 7000))
    assert s.recv(100) == b'ping %d' % i
    rtts.append((time.monotonic() - t0) * 1000); time.sleep(0.005)
print(json.dumps(rtts))
"""

UDP_SINK = """
import json, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((sys.argv[1], 7000)); s.settimeout(3)
print('ready', flush=True)
got = []
try:
    while len(got) < int(sys.argv[2]):
        got.append(s.recv(70000).hex())
except socket.timeout:
    pass
print(json.dumps(got))
"""

UDP_SEND = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[2])):
    s.sendto(bytes(64), (sys.argv[1], 7000)); time.sleep(0.002)
"""

TCP_SINK = """
import hashlib, socket, sys
srv = socket.create_server((sys.argv[1], 7001), family=socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET)
print('ready', flush=True)
srv.settimeout(30); c, _ = srv.accept(); c.settimeout(30)
h = hashlib.sha256()
while (d := c.recv(65536)):
    h.update(d)
print(h.hexdigest())
"""

TCP_SEND = """
import socket, sys
data = bytes.fromhex(sys.stdin.read().strip())
c = socket.create_connection((sys.argv[1], 7001), timeout=30); c.sendall(data); c.close()
"""


def in_ns(ns: str, code: str, *args, stdin=None) -> subprocess.Popen:
    return subprocess.Popen(
        ["ip", "netns", "exec", ns, sys.executable, "-c", code, *map(str, args)],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_ready(p: subprocess.Popen):
    line = p.stdout.readline()
    assert line.strip() == "ready", p.stderr.read()


def finish(p: subprocess.Popen, timeout=60, stdin_text=None) -> str:
    out, err = p.communicate(stdin_text, timeout=timeout)
    assert p.returncode == 0, err
    return out


@pytest.fixture
def namespaces():
    from pyroute2 import netns

    names = {side: f"le-{os.getpid()}-{side}" for side in ("s", "r")}
    for n in names.values():
        netns.create(n)
    yield names
    for n in names.values():
        try:
            netns.remove(n)
        except OSError:
            pass


@pytest.fixture
def tun_link(start_engine, namespaces):
    """tun_link(forward, reverse, **config) -> engine, with both devices addressed and up."""
    from pyroute2 import NetNS

    def make(forward: str = "", reverse: str | None = None, **extra):
        path = {
            "name": "p0",
            "forward": forward,
            "tun_a": {"netns": namespaces["s"], "ifname": "rdt0"},
            "tun_b": {"netns": namespaces["r"], "ifname": "rdt0"},
        }
        if reverse is not None:
            path["reverse"] = reverse
        eng = start_engine(config={"mode": "tun", "seed": 5, "paths": [path], **extra})
        assert eng.ready["paths"][0]["tun"] == ["rdt0", "rdt0"]
        for side, ns_name in namespaces.items():
            with NetNS(ns_name) as ns:
                idx = ns.link_lookup(ifname="rdt0")[0]
                ns.addr("add", index=idx, address=ADDR[side][0], prefixlen=24)
                ns.addr("add", index=idx, address=ADDR[side][1], prefixlen=64, flags=IFA_F_NODAD)
                ns.link("set", index=idx, state="up")
        return eng

    return make


@pytest.mark.parametrize("family", [0, 1], ids=["ipv4", "ipv6"])
def test_udp_across_with_delay(tun_link, namespaces, family):
    eng = tun_link(forward="delay 10ms", reverse="delay 10ms")
    server = in_ns(namespaces["r"], UDP_ECHO, ADDR["r"][family], 20)
    wait_ready(server)
    rtts = sorted(json.loads(finish(in_ns(namespaces["s"], UDP_PING, ADDR["r"][family], 20))))
    finish(server)
    assert rtts[0] >= 20.0, rtts
    assert rtts[len(rtts) // 2] < 23.0, rtts
    s = eng.stop()
    assert s["mode"] == "tun"
    assert s["forward"]["delivered"] >= 20 and s["reverse"]["delivered"] >= 20
    assert 9980 <= s["forward"]["delay_us"]["p50"] <= 10200


def test_tcp_across_a_lossy_link_and_repeats(tun_link, namespaces):
    eng = tun_link(forward="delay 5ms loss 2%", reverse="delay 5ms")
    data = hashlib.shake_256(b"rdtlab").digest(1_000_000)
    sink = in_ns(namespaces["r"], TCP_SINK, ADDR["r"][0])
    wait_ready(sink)
    finish(in_ns(namespaces["s"], TCP_SEND, ADDR["r"][0], stdin=subprocess.PIPE), stdin_text=data.hex())
    assert finish(sink).strip() == hashlib.sha256(data).hexdigest()
    f = eng.stop()["forward"]
    assert f["lost"] > 0
    assert f["repeats"] > 0  # the lost segments were retransmitted: same seq, same bytes


@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 not installed (make setup installs it)")
def test_iperf3_over_a_10mbit_link(tun_link, namespaces):
    tun_link(forward="delay 5ms rate 10mbit", reverse="delay 5ms rate 10mbit")
    server = subprocess.Popen(
        ["ip", "netns", "exec", namespaces["r"], "iperf3", "-s", "-1", "-B", ADDR["r"][0]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(50):  # wait for the server to listen
            r = subprocess.run(["ip", "netns", "exec", namespaces["r"], "ss", "-ltn"], capture_output=True, text=True)
            if ":5201" in r.stdout:
                break
            subprocess.run(["sleep", "0.1"])
        r = subprocess.run(
            ["ip", "netns", "exec", namespaces["s"], "iperf3", "-c", ADDR["r"][0], "-t", "3", "-J"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert r.returncode == 0, r.stdout[-500:] + r.stderr
        mbps = json.loads(r.stdout)["end"]["sum_received"]["bits_per_second"] / 1e6
        # TCP goodput under a 10 Mbit/s link that counts IP + 14 Ethernet bytes per packet.
        assert 9.0 < mbps < 9.8, mbps  # 1448 payload bytes per 1514 counted: 9.56
    finally:
        server.kill()
        server.wait()


def test_corruption_reaches_the_application(tun_link, namespaces):
    eng = tun_link(forward="corrupt 100%")
    sink = in_ns(namespaces["r"], UDP_SINK, ADDR["r"][0], 40)
    wait_ready(sink)
    finish(in_ns(namespaces["s"], UDP_SEND, ADDR["r"][0], 40))
    got = [bytes.fromhex(h) for h in json.loads(finish(sink))]
    # The receiving kernel checked the (recomputed) UDP checksum and delivered each one.
    assert len(got) == 40
    for d in got:
        assert len(d) == 64 and sum(bin(b).count("1") for b in d) == 1
    assert eng.stop()["forward"]["corrupted"] >= 40


def test_devices_vanish_with_the_engine(tun_link, namespaces):
    from pyroute2 import NetNS

    eng = tun_link()
    eng.stop()
    for ns_name in namespaces.values():
        with NetNS(ns_name) as ns:
            assert ns.link_lookup(ifname="rdt0") == []


def test_missing_namespace_exits_2(linkemu_bin, tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(
        json.dumps(
            {
                "mode": "tun",
                "paths": [{"tun_a": {"netns": "le-no-such-ns", "ifname": "rdt0"}, "tun_b": {"ifname": "rdt1"}}],
            }
        )
    )
    r = subprocess.run([linkemu_bin, "run", str(cfg)], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and "le-no-such-ns" in r.stderr and r.stderr.count("\n") == 1


def test_control_and_pcap_in_tun_mode(tun_link, namespaces, tmp_path):
    pcap = tmp_path / "tun.pcap"
    eng = tun_link(pcap=str(pcap))
    server = in_ns(namespaces["r"], UDP_ECHO, ADDR["r"][0], 2)
    wait_ready(server)
    finish(in_ns(namespaces["s"], UDP_PING, ADDR["r"][0], 1))
    assert eng.control({"cmd": "down", "path": "p0"}) == {"ok": True}
    lost = in_ns(namespaces["s"], UDP_PING, ADDR["r"][0], 1)
    lost.communicate(timeout=30)
    assert lost.returncode != 0  # its datagram was dropped: recv timed out
    assert eng.control({"cmd": "up", "path": "p0"}) == {"ok": True}
    finish(in_ns(namespaces["s"], UDP_PING, ADDR["r"][0], 1))
    finish(server)
    s = eng.stop()["paths"]["p0"]
    assert s["forward"]["down_drops"] >= 1 and s["forward"]["delivered"] >= 2
    data = pcap.read_bytes()
    assert int.from_bytes(data[20:24], "little") == 101
    assert b"ping 0" in data and data[24 + 16] >> 4 in (4, 6)  # raw IP packets
