"""The real `linkemu` as a UDP relay on loopback: relaying, impairments seen end to
end, the shared queue, run-time control, the schedule, stats, determinism, bad input."""

import json
import os
import socket
import subprocess
import time

import pytest

from tests.support.engine import binomial_bounds, drain, udp_socket, wait_until


def exchange(client, target, payload: bytes, reply: bytes):
    """client -> engine -> target, then target -> engine -> client."""
    client.send(payload)
    got, upstream = target.recvfrom(70000)
    assert got == payload
    target.sendto(reply, upstream)
    assert client.recv(70000) == reply
    return upstream


def send_numbered(client, target, n: int) -> int:
    """Send n numbered datagrams in paced batches of 100 (so no socket buffer overflows);
    return how many reached the target."""
    received = 0
    for chunk in range(n // 100):
        for i in range(100):
            client.send(b"%d" % (chunk * 100 + i))
        received += len(drain(target, 0.05))
    return received + len(drain(target, 0.2))


def test_relays_both_ways_and_counts(relay):
    eng, client, target = relay()
    for i in range(20):
        exchange(client, target, b"data %d" % i, b"ack %d" % i)
    stats = eng.stop()
    for d in ("forward", "reverse"):
        s = stats["paths"]["p0"][d]
        assert s["packets_in"] == s["delivered"] == 20
        assert s == stats[d]
    assert stats["forward"]["bytes_in"] == sum(len(b"data %d" % i) for i in range(20))
    assert stats["seed"] == 1 and stats["mode"] == "udp"
    f = stats["forward"]
    assert f["first_in_ns"] <= f["last_in_ns"] <= f["last_out_ns"] <= time.monotonic_ns()
    assert f["lag_us"]["max"] is not None and f["repeats"] == 0


def test_ipv6(relay):
    eng, client, target = relay(family=socket.AF_INET6)
    assert eng.ready["paths"][0]["listen"].startswith("[::1]:")
    exchange(client, target, b"over v6", b"back v6")


def test_largest_datagram_both_ways(relay):
    eng, client, target = relay()
    big = os.urandom(65507)
    exchange(client, target, big, big[::-1])
    assert eng.stop()["forward"]["bytes_delivered"] == 65507


def test_each_client_gets_its_own_upstream_socket(relay):
    eng, client, target = relay()
    other = udp_socket()
    other.connect(eng.listen())
    a = exchange(client, target, b"from a", b"to a")
    b = exchange(other, target, b"from b", b"to b")
    assert a != b
    assert drain(client, 0.1) == []  # b's reply did not leak to a
    other.close()


def test_delay_seen_end_to_end(relay):
    eng, client, target = relay(forward="delay 20ms")
    delays = []
    for i in range(30):
        t0 = time.monotonic_ns()
        client.send(b"%d" % i)
        target.recv(100)
        delays.append((time.monotonic_ns() - t0) / 1e6)
        time.sleep(0.003)
    delays.sort()
    assert delays[0] >= 20.0, delays
    assert delays[len(delays) // 2] < 21.5, delays  # Python's own overhead included
    s = eng.stop()["forward"]
    assert 19960 <= s["delay_us"]["p50"] <= 20200  # histogram resolution 0.2%
    assert s["lag_us"]["p50"] < 1000


def test_loss_fraction_within_binomial_bounds(relay):
    n, p = 3000, 0.1
    eng, client, target = relay(forward="loss 10%", extra=["--seed", "7"])
    received = send_numbered(client, target, n)
    s = eng.stop()["forward"]
    lo, hi = binomial_bounds(n, p)
    assert s["packets_in"] == n
    assert lo <= s["lost"] <= hi
    assert s["delivered"] == received == n - s["lost"]


def test_counters_balance_when_copies_are_lost_or_corrupted(relay):
    """Every packet in, plus every link-made copy, is delivered, lost or dropped once:
    a duplicate that is itself lost or corrupted is counted like an original."""
    n = 2000
    eng, client, target = relay(forward="duplicate 40% loss 30% corrupt 20%", extra=["--seed", "11"])
    received = send_numbered(client, target, n)
    s = eng.stop()["forward"]
    assert s["packets_in"] == n
    assert s["delivered"] == received
    assert s["packets_in"] + s["duplicated"] == s["delivered"] + s["lost"] + s["queue_drops"] + s["down_drops"]
    # corruption is decided for every queued copy, delivered ones included
    lo, hi = binomial_bounds(s["delivered"], 0.2)
    assert lo <= s["corrupted"] <= hi


def test_repeats_count_payloads_seen_before(relay):
    eng, client, target = relay()
    for payload in [b"a", b"b", b"a", b"a", b"c"]:
        client.send(payload)
        target.recv(10)
    assert eng.stop()["forward"]["repeats"] == 2


def test_last_fresh_delivery_ignores_resends_after_it(relay):
    """`last_fresh_out_ns` is the last delivery of a payload not delivered before: a
    sender resending into the void after its data arrived does not move it, a lost
    copy's resend that delivers the data does (loss is decided on arrival, so the
    resend is a repeat there but fresh here)."""
    eng, client, target = relay(forward="loss 100%")
    client.send(b"lost first")
    time.sleep(0.05)
    assert eng.control({"cmd": "change", "path": "p0", "direction": "forward", "spec": ""}) == {"ok": True}
    stamps = []
    for payload in [b"a", b"lost first", b"a", b"a"]:
        client.send(payload)
        target.recv(20)
        stamps.append(time.monotonic_ns())
    f = eng.stop()["forward"]
    assert f["repeats"] == 3 and f["delivered"] == 4 and f["repeats_to_last_fresh"] == 1
    assert stamps[0] < f["last_fresh_out_ns"] < stamps[1] < f["last_out_ns"] < stamps[3]


def test_shared_queue_puts_replies_behind_data(start_engine):
    """At 1 Mbit/s, ten 1000-byte datagrams hold the one queue ~83 ms; a reply sent
    right after them waits behind them only when the queue is shared (netem on lo)."""

    def reply_wait(shared: bool) -> float:
        target, client = udp_socket(), udp_socket()
        eng = start_engine(
            ["--listen", "127.0.0.1:0", "--to", f"127.0.0.1:{target.getsockname()[1]}", "--forward", "rate 1mbit"]
            + (["--shared-queue"] if shared else [])
        )
        client.connect(eng.listen())
        upstream = exchange(client, target, b"hello", b"hi")
        for _ in range(10):
            client.send(bytes(1000))
        t0 = time.monotonic()
        target.sendto(b"reply", upstream)
        assert client.recv(100) == b"reply"
        waited = time.monotonic() - t0
        assert len(drain(target, 0.2)) == 10
        target.close(), client.close()
        return waited

    assert reply_wait(shared=True) > 0.06
    assert reply_wait(shared=False) < 0.03


def test_shared_queue_rejects_a_different_reverse_spec(linkemu_bin):
    r = subprocess.run(
        [
            linkemu_bin,
            "udp",
            "--listen",
            "127.0.0.1:0",
            "--to",
            "127.0.0.1:9",
            "--shared-queue",
            "--forward",
            "loss 1%",
            "--reverse",
            "loss 2%",
        ],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert r.returncode == 2
    assert "shared queue" in r.stderr and r.stderr.count("\n") == 1


def test_control_channel_down_up_change_stats(relay):
    eng, client, target = relay()
    exchange(client, target, b"1", b"r1")
    assert eng.control({"cmd": "down", "path": "p0"}) == {"ok": True}
    client.send(b"2")
    assert drain(target, 0.1) == []
    assert eng.control({"cmd": "up", "path": "p0"}) == {"ok": True}
    exchange(client, target, b"3", b"r3")
    assert eng.control({"cmd": "change", "path": "p0", "direction": "forward", "spec": "loss 100%"}) == {"ok": True}
    client.send(b"4")
    assert drain(target, 0.1) == []
    reply = eng.control({"cmd": "stats"})
    assert reply["ok"] is True
    f = reply["stats"]["paths"]["p0"]["forward"]
    assert (f["packets_in"], f["delivered"], f["down_drops"], f["lost"]) == (4, 2, 1, 1)
    assert reply["stats"]["paths"]["p0"]["up"] is True
    # The stats command also writes the stats file.
    assert json.loads(eng.stats_path.read_text())["forward"]["packets_in"] == 4


def test_one_direction_goes_down_and_up(relay):
    """A return path that is down drops the replies while the data still arrives."""
    eng, client, target = relay()
    upstream = exchange(client, target, b"1", b"r1")
    assert eng.control({"cmd": "down", "path": "p0", "direction": "reverse"}) == {"ok": True}
    client.send(b"2")
    assert target.recv(100) == b"2"
    target.sendto(b"r2", upstream)
    assert drain(client, 0.1) == []
    paths = eng.control({"cmd": "stats"})["stats"]["paths"]["p0"]
    assert (paths["up"], paths["forward_up"], paths["reverse_up"]) == (False, True, False)
    assert eng.control({"cmd": "up", "path": "p0", "direction": "reverse"}) == {"ok": True}
    exchange(client, target, b"3", b"r3")
    s = eng.stop()["paths"]["p0"]
    assert (s["forward"]["down_drops"], s["reverse"]["down_drops"], s["reverse"]["delivered"]) == (0, 1, 2)


@pytest.mark.parametrize(
    "request_text, error_part",
    [
        ("not json", "not JSON"),
        ('{"cmd": "explode"}', "unknown cmd"),
        ('{"cmd": "down", "path": "nope"}', "no path named"),
        ('{"cmd": "change", "path": "p0", "spec": "delay banana"}', "banana"),
        ('{"cmd": "change", "path": "p0", "direction": "sideways", "spec": ""}', "direction"),
        ("[]", "expected a JSON object"),
    ],
)
def test_control_channel_rejects_nonsense_and_keeps_serving(relay, request_text, error_part):
    eng, client, target = relay()
    reply = eng.control(request_text)
    assert reply["ok"] is False and error_part in reply["error"] and "\n" not in reply["error"]
    exchange(client, target, b"still", b"alive")


def test_schedule_takes_path_down_and_up(start_engine):
    target, client = udp_socket(), udp_socket()
    port = target.getsockname()[1]
    eng = start_engine(
        config={
            "mode": "udp",
            "seed": 3,
            "paths": [{"name": "main", "listen": "127.0.0.1:0", "to": f"127.0.0.1:{port}"}],
            "schedule": [{"at_ms": 300, "cmd": "down", "path": "main"}, {"at_ms": 600, "cmd": "up", "path": "main"}],
        }
    )
    client.connect(eng.listen())
    t0 = time.monotonic()
    for i in range(90):  # one every 10 ms for 0.9 s
        client.send(b"%d" % i)
        time.sleep(max(0, t0 + (i + 1) * 0.01 - time.monotonic()))
    arrived = drain(target, 0.2)
    s = eng.stop()["paths"]["main"]["forward"]
    assert s["packets_in"] == 90
    assert 24 <= s["down_drops"] <= 32, s  # ~30 packets sent while down
    assert s["delivered"] == len(arrived) == 90 - s["down_drops"]
    target.close(), client.close()


def test_two_paths_in_one_process(start_engine):
    t1, t2, c1, c2 = udp_socket(), udp_socket(), udp_socket(), udp_socket()
    eng = start_engine(
        config={
            "paths": [
                {"name": "a", "listen": "127.0.0.1:0", "to": f"127.0.0.1:{t1.getsockname()[1]}"},
                {
                    "name": "b",
                    "listen": "127.0.0.1:0",
                    "to": f"127.0.0.1:{t2.getsockname()[1]}",
                    "forward": "loss 100%",
                },
            ]
        }
    )
    c1.connect(eng.listen(0))
    c2.connect(eng.listen(1))
    exchange(c1, t1, b"on a", b"back on a")
    c2.send(b"on b")
    assert drain(t2, 0.1) == []
    s = eng.stop()
    assert s["paths"]["a"]["forward"]["delivered"] == 1
    assert s["paths"]["b"]["forward"]["lost"] == 1
    assert s["forward"]["packets_in"] == 2
    for sock in (t1, t2, c1, c2):
        sock.close()


def test_unreachable_target_is_counted_not_fatal(start_engine):
    dead = udp_socket()
    port = dead.getsockname()[1]
    dead.close()  # nobody listens there now: the kernel answers port unreachable
    client = udp_socket()
    eng = start_engine(["--listen", "127.0.0.1:0", "--to", f"127.0.0.1:{port}"])
    client.connect(eng.listen())
    for i in range(20):
        client.send(b"x")
        time.sleep(0.005)
    assert wait_until(lambda: eng.stats()["forward"]["io_errors"] > 0)
    assert eng.proc.poll() is None
    client.close()


def test_flood_is_bounded_by_the_queue_limit(relay):
    eng, client, target = relay(forward="delay 200ms limit 50")
    for i in range(2000):
        client.send(b"%d" % i)
    got = drain(target, 0.5)
    s = eng.stop()["forward"]
    assert s["queue_drops"] > 0
    assert s["delivered"] == len(got)
    assert s["delivered"] + s["queue_drops"] == s["packets_in"]


def test_sigint_also_writes_stats(relay):
    eng, client, target = relay()
    exchange(client, target, b"x", b"y")
    eng.proc.send_signal(2)
    assert eng.proc.wait(10) == 0
    assert json.loads(eng.stats_path.read_text())["forward"]["delivered"] == 1
    assert not eng.control_path.exists()


def received_sequence(start_engine, seed: int) -> list[bytes]:
    target, client = udp_socket(), udp_socket()
    eng = start_engine(
        [
            "--listen",
            "127.0.0.1:0",
            "--to",
            f"127.0.0.1:{target.getsockname()[1]}",
            "--forward",
            "loss 20% duplicate 10% corrupt 10%",
            "--seed",
            str(seed),
        ]
    )
    client.connect(eng.listen())
    got = []
    for i in range(300):  # serial and paced: the same arrival order every run
        client.send(b"packet %04d" % i)
        got += drain(target, 0.002)
    got += drain(target, 0.2)
    eng.stop()
    target.close(), client.close()
    return got


def test_same_seed_same_decisions(start_engine):
    a = received_sequence(start_engine, 11)
    b = received_sequence(start_engine, 11)
    c = received_sequence(start_engine, 12)
    assert a == b
    assert a != c
    assert 180 < len(a) < 300


@pytest.mark.parametrize(
    "args, bad",
    [
        (["--forward", "delay 10xs"], "10xs"),
        (["--forward", "loss 150%"], "150"),
        (["--seed", "abc"], "--seed"),
        (["--frobnicate"], "--frobnicate"),
    ],
)
def test_bad_cli_exits_2_with_one_line(linkemu_bin, args, bad):
    r = subprocess.run(
        [linkemu_bin, "udp", "--listen", "127.0.0.1:0", "--to", "127.0.0.1:9", *args],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and bad in r.stderr, r.stderr


def test_bad_config_and_check(linkemu_bin, tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text('{"mode": "udp", "paths": [{"listen": "127.0.0.1:0"}]}')
    r = subprocess.run([linkemu_bin, "run", str(cfg)], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and '"to" is required' in r.stderr and r.stderr.count("\n") == 1
    r = subprocess.run([linkemu_bin, "run", str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert r.returncode == 2 and "missing.json" in r.stderr
    assert subprocess.run([linkemu_bin, "check", "delay 5ms loss 5% rate 10mbit"]).returncode == 0
    r = subprocess.run([linkemu_bin, "check", "delay"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1


def test_stats_file_in_a_missing_directory_exits_2(linkemu_bin, tmp_path):
    r = subprocess.run(
        [
            linkemu_bin,
            "udp",
            "--listen",
            "127.0.0.1:0",
            "--to",
            "127.0.0.1:9",
            "--stats",
            str(tmp_path / "nope" / "s.json"),
        ],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert r.returncode == 2 and "does not exist" in r.stderr and r.stderr.count("\n") == 1


def test_listen_address_in_use_exits_2(linkemu_bin):
    busy = udp_socket()
    port = busy.getsockname()[1]
    r = subprocess.run(
        [linkemu_bin, "udp", "--listen", f"127.0.0.1:{port}", "--to", "127.0.0.1:9"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    busy.close()
    assert r.returncode == 2 and "in use" in r.stderr.lower() and r.stderr.count("\n") == 1


def test_pcap_records_what_crossed(relay, tmp_path):
    pcap = tmp_path / "link.pcap"
    eng, client, target = relay(extra=["--pcap", str(pcap)])
    exchange(client, target, b"hello pcap", b"reply")
    eng.stop()
    data = pcap.read_bytes()
    assert data[:4] == bytes.fromhex("d4c3b2a1")  # little-endian magic
    assert int.from_bytes(data[20:24], "little") == 101  # LINKTYPE_RAW
    assert b"hello pcap" in data and b"reply" in data
    first = data[24 + 16 :]
    assert first[0] == 0x45 and first[9] == 17  # IPv4, UDP


def test_empty_datagram_is_relayed(relay):
    eng, client, target = relay()
    exchange(client, target, b"", b"")
    s = eng.stop()["forward"]
    assert (s["delivered"], s["bytes_delivered"], s["repeats"]) == (1, 0, 0)


def test_clients_beyond_the_limit_are_dropped_and_counted(relay):
    eng, client, target = relay()
    extra = [udp_socket() for _ in range(64)]  # with `client`: 65 clients
    for i, s in enumerate([client] + extra):
        s.sendto(b"client %d" % i, eng.listen())
        time.sleep(0.001)
    got = drain(target, 0.3)
    s = eng.stop()["forward"]
    assert len(got) == s["delivered"] == 64
    assert s["io_errors"] == 1 and s["packets_in"] == 64
    for sock in extra:
        sock.close()
