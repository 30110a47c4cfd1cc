"""Link engine benchmark: `python -m bench engine [--quick]`.

Measures the real `linkemu` on loopback (UDP-relay mode):

- delay: 20 ms at ~4 Mbit/s of 1000-byte datagrams (500/s). The sender's kernel
  stamps when each datagram left its socket (SO_TIMESTAMPING, software TX stamps); the
  receiver's kernel stamps its arrival (SO_TIMESTAMPNS). Both are CLOCK_REALTIME on the
  same host, so error = (receive − transmit) − 20 ms: everything between the two
  programs' sockets (loopback in and out, the engine's wake-up, recv, send). The
  error from the user-space send time (time.time_ns() just before send, written into
  the datagram) is reported too; it adds the sender's own syscall. The same run with a
  0-ms link gives the fixed cost of the path for comparison.
- rate: 10 and 100 Mbit/s with a sender at 1.2× the rate (the queue stays full). The
  delivered rate counts bytes as netem on lo does (payload + 42), between the kernel
  receive timestamps of the first and last datagram; inter-arrival gaps are compared
  with the serialisation time (1042 bytes × 8 / rate).
- capacity: 64-byte datagrams sent as fast as `udpbench blast` (sendmmsg) can, through
  linkemu with no impairment and through `udpbench relay` (recv/send, no pipeline),
  interleaved rounds; forwarded datagrams per second and their ratio.
- CPU: the engine's user+system time (/proc/PID/stat) while idle and during the tests.

Other work on the 2 cores moves single figures: capacity is a median over interleaved
rounds, and the results record the load average before the run (BENCHMARKS.md, "The
engine", says where it mattered).
"""

import argparse
import json
import os
import signal
import socket
import statistics
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from harness.engine import REPO

CRATE = REPO / "harness" / "linkemu"
RELEASE = CRATE / "target" / "release"
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
WIRE_EXTRA = 42  # UDP 8 + IPv4 20 + Ethernet 14: what netem on lo counts beyond the payload
CLK_TCK = os.sysconf("SC_CLK_TCK")
NORMAL_PRIORITY = {"LINKEMU_SCHED": "normal"}
HEAD = struct.Struct("Iq")  # datagram number, user-space send time (ns, CLOCK_REALTIME)
# Linux SO_TIMESTAMPING (include/uapi/linux/net_tstamp.h); Python lacks the names.
SO_TIMESTAMPING = 37
IP_RECVERR = 11
SOF_TX_SOFTWARE, SOF_SOFTWARE, SOF_OPT_ID, SOF_OPT_TSONLY = 1 << 1, 1 << 4, 1 << 7, 1 << 11
NO_SPIN = {"LINKEMU_SPIN_US": "0"}
SPIN_25 = {"LINKEMU_SPIN_US": "25"}


def build() -> None:
    subprocess.run(["cargo", "build", "--release", "--quiet", "--manifest-path", str(CRATE / "Cargo.toml")], check=True)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


class Relay:
    """A running relay process (linkemu or the plain one) with its ready line read."""

    def __init__(self, argv: list[str], env: dict | None = None):
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env)
        ready = json.loads(self.proc.stdout.readline())
        listen = ready["listen"] if "listen" in ready else ready["paths"][0]["listen"]
        host, port = listen.rsplit(":", 1)
        self.addr = (host, int(port))

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGTERM)
        out = self.proc.stdout.read()
        self.proc.wait(10)
        return out


def start_linkemu(target: tuple[str, int], forward: str, stats: Path, env: dict | None = None) -> Relay:
    """`env`: extra environment, e.g. LINKEMU_SCHED=normal or LINKEMU_SPIN_US=0."""
    env = {**os.environ, **env} if env else None
    return Relay(
        [
            str(RELEASE / "linkemu"),
            "udp",
            "--listen",
            "127.0.0.1:0",
            "--to",
            f"{target[0]}:{target[1]}",
            "--forward",
            forward,
            "--stats",
            str(stats),
        ],
        env,
    )


def receiver_socket() -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.settimeout(1.0)
    return s


def collect(sock: socket.socket, out: list, stop: threading.Event) -> None:
    """Append (kernel receive ns, header bytes, length) for each datagram until stopped."""
    while not stop.is_set():
        try:
            data, anc, _, _ = sock.recvmsg(2048, 64)
        except socket.timeout:
            continue
        rx = None
        for level, kind, body in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", body[:16])
                rx = sec * 1_000_000_000 + nsec
        out.append((rx, data[: HEAD.size], len(data)))


def enable_tx_timestamps(s: socket.socket) -> None:
    """Have the kernel report when each datagram left this socket (software stamps,
    CLOCK_REALTIME, numbered from 0 by OPT_ID) on the error queue."""
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, SOF_TX_SOFTWARE | SOF_SOFTWARE | SOF_OPT_ID | SOF_OPT_TSONLY)


def read_tx_timestamps(s: socket.socket, out: dict) -> None:
    """Move the error queue's transmit stamps into out[datagram number]."""
    while True:
        try:
            _, anc, _, _ = s.recvmsg(0, 512, socket.MSG_ERRQUEUE | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        ts = ident = None
        for level, kind, body in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING:
                sec, nsec = struct.unpack("qq", body[:16])  # [0] is the software stamp
                ts = sec * 1_000_000_000 + nsec
            elif level == socket.SOL_IP and kind == IP_RECVERR:
                ident = struct.unpack("I", body[12:16])[0]  # sock_extended_err.ee_data
        if ts is not None and ident is not None:
            out[ident] = ts


def paced_send(dest, size: int, pps: float, seconds: float, tx_stamps: dict | None = None, prefill: int = 0) -> int:
    """Send `size`-byte datagrams at `pps` for `seconds`. Each carries its number and
    its user-space send time (time.time_ns()); with `tx_stamps`, the kernel's transmit
    stamps are collected there too. `prefill` datagrams go at once first, so a link
    meant to stay saturated has a backlog that outlasts the sender's pauses."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(dest)
    if tx_stamps is not None:
        enable_tx_timestamps(s)
    pad = bytes(size - HEAD.size)
    for sent in range(prefill):
        s.send(HEAD.pack(sent, time.time_ns()) + pad)
    start = time.monotonic()
    sent = prefill
    while (now := time.monotonic()) - start < seconds:
        due = prefill + int((now - start) * pps) + 1
        while sent < due:
            s.send(HEAD.pack(sent, time.time_ns()) + pad)
            sent += 1
        if tx_stamps is not None:
            read_tx_timestamps(s, tx_stamps)
        time.sleep(0.001)
    if tx_stamps is not None:
        time.sleep(0.01)
        read_tx_timestamps(s, tx_stamps)
    s.close()
    return sent


def quantiles(xs: list[float]) -> dict:
    xs = sorted(xs)
    pick = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))]
    return {"p50": round(pick(0.5), 1), "p99": round(pick(0.99), 1), "max": round(xs[-1], 1), "n": len(xs)}


def run_link(
    forward: str,
    size: int,
    pps: float,
    seconds: float,
    env: dict | None = None,
    tx_stamps: dict | None = None,
    prefill: int = 0,
) -> tuple[list, dict, float]:
    """Send through one linkemu; returns receptions, the engine's stats and its CPU share."""
    sink = receiver_socket()
    got: list = []
    stop = threading.Event()
    t = threading.Thread(target=collect, args=(sink, got, stop))
    t.start()
    with tempfile.TemporaryDirectory() as tmp:
        stats_path = Path(tmp) / "stats.json"
        eng = start_linkemu(sink.getsockname(), forward, stats_path, env)
        cpu0, t0 = cpu_seconds(eng.proc.pid), time.monotonic()
        sent = paced_send(eng.addr, size, pps, seconds, tx_stamps, prefill)
        cpu = (cpu_seconds(eng.proc.pid) - cpu0) / (time.monotonic() - t0)
        time.sleep(0.5)  # let the link drain
        eng.stop()
        stats = json.loads(stats_path.read_text())["forward"]
    stats["sent"] = sent
    stop.set()
    t.join()
    sink.close()
    return got, stats, cpu


def bench_delay(seconds: float) -> dict:
    """The default engine (10 µs final spin), then without the spin, with a 25 µs spin
    and without real-time priority (to show what each changes), and a 0-ms link for
    the fixed cost of the path."""
    variants = (
        ("delay_20ms", "delay 20ms", 20, None),
        ("delay_20ms_no_spin", "delay 20ms", 20, NO_SPIN),
        ("delay_20ms_spin25", "delay 20ms", 20, SPIN_25),
        ("delay_20ms_normal_priority", "delay 20ms", 20, NORMAL_PRIORITY),
        ("no_delay", "", 0, None),
    )
    res = {}
    for name, forward, nominal_ms, env in variants:
        tx: dict = {}
        got, stats, cpu = run_link(forward, 1000, 500, seconds, env, tx)
        nominal_ns = nominal_ms * 1_000_000
        kernel, user = [], []
        for rx, head, _ in got:
            seq, user_tx = HEAD.unpack(head)
            if rx is not None and seq in tx:
                kernel.append((rx - tx[seq] - nominal_ns) / 1000)
                user.append((rx - user_tx - nominal_ns) / 1000)
        res[name] = {
            "error_us": quantiles(kernel),
            "error_from_user_send_us": quantiles(user),
            "engine_lag_us": stats["lag_us"],
            "engine_cpu": round(cpu, 4),
            "delivered": stats["delivered"],
        }
    return res


def bench_rate(mbit: int, seconds: float, env: dict | None = None) -> dict:
    size = 1000
    pps = mbit * 1e6 / 8 / (size + WIRE_EXTRA) * 1.2
    # 500 queued at once (half the limit): the link stays busy through the sender's pauses.
    got, stats, cpu = run_link(f"rate {mbit}mbit", size, pps, seconds, env, prefill=500)
    rx = [r for r, _, _ in got if r]
    wire_bytes = (len(rx) - 1) * (size + WIRE_EXTRA)
    rate = wire_bytes * 8 / ((rx[-1] - rx[0]) / 1e9)
    t_ser_us = (size + WIRE_EXTRA) * 8 / (mbit * 1e6) * 1e6
    gaps = [(b - a) / 1000 for a, b in zip(rx, rx[1:])]
    return {
        "rate_mbit": round(rate / 1e6, 3),
        "rate_error_pct": round((rate / (mbit * 1e6) - 1) * 100, 3),
        "t_ser_us": round(t_ser_us, 2),
        "gap_us": quantiles(gaps),
        "gap_p1_us": round(sorted(gaps)[len(gaps) // 100], 1),
        "delivered": stats["delivered"],
        "queue_drops": stats["queue_drops"],
        # Lost outside the link (0 = none): before the engine took them in
        # (its socket buffer), and between its send and the receiver.
        "lost_before_engine": stats["sent"] - stats["packets_in"],
        "lost_after_engine": stats["delivered"] - len(got),
        "engine_cpu": round(cpu, 3),
        "engine_lag_us": stats["lag_us"],
    }


def bench_capacity(rounds: int, seconds: float) -> dict:
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # nobody reads: the kernel drops
    sink.bind(("127.0.0.1", 0))
    target = sink.getsockname()
    plain, engine = [], []
    blast = str(RELEASE / "udpbench")
    for _ in range(rounds):
        relay = Relay([blast, "relay", "127.0.0.1:0", f"{target[0]}:{target[1]}"])
        subprocess.run(
            [blast, "blast", f"{relay.addr[0]}:{relay.addr[1]}", "64", str(seconds)], check=True, capture_output=True
        )
        time.sleep(0.1)
        plain.append(json.loads(relay.stop().strip().splitlines()[-1])["forwarded"] / seconds)
        with tempfile.TemporaryDirectory() as tmp:
            stats_path = Path(tmp) / "s.json"
            # Same scheduling class as the plain relay: a like-for-like comparison.
            eng = start_linkemu(target, "", stats_path, env=NORMAL_PRIORITY)
            subprocess.run(
                [blast, "blast", f"{eng.addr[0]}:{eng.addr[1]}", "64", str(seconds)], check=True, capture_output=True
            )
            time.sleep(0.1)
            eng.stop()
            engine.append(json.loads(stats_path.read_text())["forward"]["delivered"] / seconds)
    sink.close()
    ratios = [e / p for e, p in zip(engine, plain)]
    return {
        "plain_relay_pps": [round(x) for x in plain],
        "linkemu_pps": [round(x) for x in engine],
        "ratio_median": round(statistics.median(ratios), 3),
        "ratios": [round(r, 3) for r in ratios],
    }


def bench_idle_cpu(seconds: float) -> float:
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    with tempfile.TemporaryDirectory() as tmp:
        eng = start_linkemu(sink.getsockname(), "delay 20ms rate 10mbit", Path(tmp) / "s.json")
        cpu0 = cpu_seconds(eng.proc.pid)
        time.sleep(seconds)
        cpu = (cpu_seconds(eng.proc.pid) - cpu0) / seconds
        eng.stop()
    sink.close()
    return cpu


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench engine")
    p.add_argument("--quick", action="store_true", help="shorter runs (3 s a step instead of 10)")
    return p


def run(argv: list[str]) -> int:
    try:
        quick = parser().parse_args(argv).quick
    except SystemExit as e:
        return int(e.code or 0)
    build()
    secs = 3 if quick else 10
    results = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "host": os.uname().nodename,
        "cpus": os.cpu_count(),
        "loadavg_before": os.getloadavg()[0],
    }
    steps = [
        ("idle_cpu", lambda: round(bench_idle_cpu(secs / 2), 5)),
        ("delay", lambda: bench_delay(secs)),
        ("rate_10mbit", lambda: bench_rate(10, secs / 2)),
        ("rate_100mbit", lambda: bench_rate(100, secs / 2)),
        ("rate_100mbit_no_spin", lambda: bench_rate(100, secs / 2, NO_SPIN)),
        ("rate_100mbit_spin25", lambda: bench_rate(100, secs / 2, SPIN_25)),
        ("capacity", lambda: bench_capacity(3 if quick else 5, 2 if quick else 3)),
    ]
    for name, step in steps:
        print(f"engine: {name} ...", flush=True)
        results[name] = step()
        print(json.dumps(results[name]), flush=True)
    results["loadavg_after"] = os.getloadavg()[0]
    out = REPO / "out" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "engine.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"engine: results in {out / 'engine.json'}")
    return 0
