"""Benchmark: the reference programs on real sockets through the link engine.

    python -m bench reference [--quick] [--size BYTES] [--seed N] [--only sr|sr-ext|gbn|sw ...]

Link: 10 Mbit/s, 25 ms one-way delay, random loss X% in each direction (netem order:
loss before the rate queue, so a lost packet costs no capacity), a full-duplex link
(one rate queue per direction), local backend (linkemu UDP relay on loopback).

Programs: the COMN programs (COMN format, fixed RetryTimeout) and the general command
line with the extended format (selective ACKs, adaptive RTO).

Figures per run:
- goodput: the harness's, file KiB / wire time (first data packet into the link to
  the last packet out); also the sender's own COMN throughput as printed;
- capacity: the link's payload capacity, rate × payload / (payload + header + 42),
  42 = Ethernet 14 + IPv4 20 + UDP 8 (what netem on `lo` counts; linkemu counts the
  same), header = 3 (COMN) or 12 (ext); the ACKs have their own queue;
- packets per unique packet: data packets into the link / packets in the file;
- for stop-and-wait and Go-Back-N, the analytic model of harness.models
  (stop_and_wait, gbn_timeout) for the same link, timeout and window.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

RATE_BPS = 10e6
DELAY_S = 0.025
PAYLOAD = 1024
OVERHEAD = 42  # Ethernet + IPv4 + UDP, counted by the rate
HEADER = {"comn": 3, "ext": 12}

COMN = "python3 {impl}/Sender{n}.py {receiver_host} {receiver_port} {file} {timeout}"


def capacity_kBps(fmt: str) -> float:
    return RATE_BPS / 8 * PAYLOAD / (PAYLOAD + HEADER[fmt] + OVERHEAD) / 1024


def fixed_timeout_ms(window: int) -> int:
    """A RetryTimeout above the round trip with a full window queued: 2·delay plus the
    window's serialisation, plus 20 ms of slack."""
    t_data = (PAYLOAD + HEADER["comn"] + OVERHEAD) * 8 / RATE_BPS
    return round(1000 * (2 * DELAY_S + window * t_data) + 20)


def programs(kind: str, window: int, max_in_flight: int | None = None, extra: str = ""):
    from harness import Program

    if kind == "sw":
        return (
            Program(COMN.replace("{n}", "2"), output_format="comn-sw"),
            Program("python3 {impl}/Receiver2.py {listen_port} {output}"),
        )
    if kind in ("gbn", "sr"):
        n = 3 if kind == "gbn" else 4
        return (
            Program(COMN.replace("{n}", str(n)) + " {window}", output_format="comn"),
            Program(f"python3 {{impl}}/Receiver{n}.py {{listen_port}} {{output}}" + (" {window}" if n == 4 else "")),
        )
    # sr-ext: the general command line, extended format, adaptive RTO
    opts = "--protocol sr --format ext --window {window}"
    cap = f" --max-in-flight {max_in_flight}" if max_in_flight else ""
    return (
        Program(
            "python3 -m reference send --host {receiver_host} --port {receiver_port} --file {file} "
            "--adaptive --timeout {timeout} " + opts + cap + (f" {extra}" if extra else "")
        ),
        Program("python3 -m reference recv --port {listen_port} --file {output} " + opts),
    )


def model_kBps(kind: str, loss: float, window: int, timeout_ms: int, size: int):
    from harness import models

    link = models.Link(delay_s=DELAY_S, loss=loss, rate_bps=RATE_BPS, shared_queue=False)
    if kind == "sw":
        return models.stop_and_wait(link, timeout_ms / 1000, size).throughput_kBps
    if kind == "gbn":
        return models.gbn_timeout(link, window, timeout_ms / 1000)
    return None


def measure(
    kind: str, loss: float, window: int, size: int, seed: int, max_in_flight: int | None = None, extra: str = ""
) -> dict:
    """One transfer; ``extra``: more options for the sr-ext sender."""
    from harness import Link, run_transfer

    timeout_ms = fixed_timeout_ms(window) if kind != "sr-ext" else 100  # ext: initial RTO
    sender, receiver = programs(kind, window, max_in_flight, extra)
    spec = f"delay {DELAY_S * 1000:g}ms loss {loss * 100:g}% rate {RATE_BPS / 1e6:g}mbit"
    began = time.monotonic()
    r = run_transfer(
        sender=sender,
        receiver=receiver,
        link=Link(forward=spec),
        params={"impl": "reference/comn", "timeout": timeout_ms, "window": window},
        size=size,
        seed=seed,
        backend="local",
        time_limit=600,
    )
    fmt = "ext" if kind == "sr-ext" else "comn"
    unique = max(1, math.ceil(size / PAYLOAD))
    row = {
        "kind": kind,
        "loss": loss,
        "window": window,
        "cap": max_in_flight,
        "timeout_ms": timeout_ms,
        "ok": r.ok,
        "error": r.error,
        "goodput": r.goodput_kBps,
        "capacity": capacity_kBps(fmt),
        "printed": (r.printed or {}).get("throughput_kBps"),
        "per_unique": (r.packets or {}).get("forward", 0) / unique if r.packets else None,
        "model": model_kBps(kind, loss, window, timeout_ms, size),
        "lag_p99_us": (r.lag_us or {}).get("p99"),
        "seconds": time.monotonic() - began,
    }
    return row


def plan(quick: bool) -> list[tuple[str, float, int, int | None]]:
    """(program, loss, window, max packets in flight or None)."""
    losses = [0.05, 0.15, 0.30]
    sr_windows = [256, 1024] if quick else [64, 256, 1024, 2048]
    gbn_windows = [16] if quick else [8, 16, 64]
    runs = [("sr", p, w, None) for p in losses for w in sr_windows]
    runs += [("sr-ext", p, w, None) for p in losses for w in sr_windows]
    # a wide window for repairs, packets in flight capped near the BDP (~60 packets)
    runs += [("sr-ext", p, 1024, cap) for p in losses for cap in ([96] if quick else [96, 128])]
    runs += [("gbn", p, w, None) for p in losses for w in gbn_windows]
    runs += [("sw", p, 1, None) for p in losses]
    return runs


def fmt_row(row: dict) -> str:
    def num(x, spec=".1f"):
        return "—" if x is None else format(x, spec)

    share = None if row["goodput"] is None else 100 * row["goodput"] / row["capacity"]
    vs_model = None if row["model"] is None or row["goodput"] is None else 100 * (row["goodput"] / row["model"] - 1)
    return (
        f"| {row['kind']} | {row['loss'] * 100:g}% | {row['window']} | {row['cap'] or '—'} | {row['timeout_ms']} | "
        f"{num(row['goodput'])} | {num(row['printed'])} | {num(share, '.0f')}% | {num(row['per_unique'], '.3f')} | "
        f"{num(row['model'])} | {num(vs_model, '+.0f')}{'%' if vs_model is not None else ''} |"
        + ("" if row["ok"] else f" FAILED: {row['error']}")
    )


HEADER_LINE = (
    "| program | loss each way | window | max in flight | timeout ms | goodput KiB/s | printed KiB/s | "
    "of capacity | packets per unique | model KiB/s | vs model |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|"
)


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench reference")
    p.add_argument("--quick", action="store_true", help="fewer windows")
    p.add_argument("--size", type=int, default=4 << 20, help="file bytes for SR (default 4 MiB)")
    p.add_argument("--gbn-size", type=int, default=256 << 10, help="file bytes for GBN (default 256 KiB)")
    p.add_argument("--sw-size", type=int, default=100 << 10, help="file bytes for stop-and-wait (100 KiB)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--only", action="append", choices=["sr", "sr-ext", "gbn", "sw"], help="these programs only (repeat for more)"
    )
    return p


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    from harness.engine import find_linkemu

    try:
        find_linkemu()
    except Exception as e:  # not built: say so, as the other benchmarks do
        print(f"bench reference: needs the link engine ({e}); run `make build`", file=sys.stderr)
        return 1
    print(f"capacity (payload): COMN {capacity_kBps('comn'):.1f} KiB/s, ext {capacity_kBps('ext'):.1f} KiB/s")
    print(HEADER_LINE, flush=True)
    failed = 0
    for kind, loss, window, cap in plan(args.quick):
        if args.only and kind not in args.only:
            continue
        size = {"sw": args.sw_size, "gbn": args.gbn_size}.get(kind, args.size)
        row = measure(kind, loss, window, size, args.seed, cap)
        failed += not row["ok"]
        print(fmt_row(row), flush=True)
    return 1 if failed else 0
