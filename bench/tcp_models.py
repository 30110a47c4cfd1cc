"""Kernel Reno through the engine against the models that describe it.

    python -m bench tcp_models [--seeds N] [--cap S] [--losses 0.5,1,2,3,5] [--rtts 20,50,100,200]
    python -m bench tcp_models --q7 [--runs 5]

--q7: the COMN sheet's Q7 cell at -w 32 KB (1 MiB, 25 ms each way, 5% loss each way,
10 Mbit/s, one shared queue) with each algorithm pinned, whatever the host's default.

Where the models' assumptions hold the kit should reproduce them: one long-lived Reno
flow (pinned per route, read back from the connection), loss on the data direction only
(ACKs are cumulative, Mathis ignores their loss), the delay split evenly each way, no
rate limit and no receive-window limit (iperf3 without -w: autotuned buffers), MSS 1448
(MTU 1500 less IP, TCP and timestamp headers). iperf3 -t runs long enough for about 150
loss events (at most --cap seconds), and the figure is the receiver's goodput.

Models (harness/models/tcp.py), with b = 1 (Linux's Reno grows by the segments each ACK
covers, so delayed ACKs do not slow it): Mathis C·MSS/(RTT·√p), C = √1.5 (periodic loss,
congestion avoidance only); PFTK adds the timeouts, T0 = RTT + 200 ms (Linux's RTO:
smoothed RTT plus a variance term of at least 200 ms). They part where timeouts become a
large share of the losses: several losses in one window, or a window too small for three
duplicate ACKs, both more frequent as p grows.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from harness.backends import tcp
from harness.experiments.iperf import run_iperf, unavailable_reason
from harness.models import mathis, pftk

MSS = 1448
LOSS_EVENTS = 150
LINUX_MIN_RTO_S = 0.2


def models(loss: float, rtt_s: float) -> tuple[float, float]:
    """(Mathis, PFTK) in KiB/s for loss fraction `loss` and round trip `rtt_s`."""
    return (mathis(MSS, rtt_s, loss) / 1024, pftk(MSS, rtt_s, loss, rtt_s + LINUX_MIN_RTO_S, b=1) / 1024)


def duration_for(loss: float, rtt_s: float, cap_s: float, floor_s: float = 20.0) -> float:
    """Seconds for about LOSS_EVENTS losses at Mathis' rate, within [floor_s, cap_s]."""
    losses_per_s = loss * mathis(MSS, rtt_s, loss) / MSS
    return max(floor_s, min(cap_s, LOSS_EVENTS / losses_per_s))


def measure_reno(loss: float, rtt_s: float, seed: int, duration_s: float) -> dict:
    """One Reno flow over `loss` (data only) and `rtt_s` (half each way): the iperf3 row
    with the models beside it."""
    delay = f"delay {rtt_s * 500:g}ms"
    row = run_iperf(
        f"{delay} loss {loss * 100:g}%",
        reverse=delay,
        shared_queue=False,
        window_bytes=None,
        mss=None,
        size=None,
        duration_s=duration_s,
        seed=seed,
        tcp_cc="reno",
        time_limit=duration_s + 60,
    )
    m, p = models(loss, rtt_s)
    row.update(loss=loss, rtt_s=rtt_s, seed=seed, duration_s=duration_s, mathis_kBps=m, pftk_kBps=p)
    return row


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench tcp_models")
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--cap", type=float, default=60.0, help="longest run, seconds (default 60)")
    p.add_argument("--losses", default="0.5,1,2,3,5", help="percent, data direction")
    p.add_argument("--rtts", default="20,50,100,200", help="round trips, ms")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--q7", action="store_true", help="COMN Q7 at -w 32 KB per algorithm instead")
    p.add_argument("--runs", type=int, default=5, help="--q7: runs per algorithm")
    return p


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    why = unavailable_reason()
    if why:
        print(f"tcp_models: skipped: {why}")
        return 0
    if args.q7:
        return q7_per_algorithm(args.runs, args.jobs)
    losses = [float(x) / 100 for x in args.losses.split(",")]
    rtts = [float(x) / 1000 for x in args.rtts.split(",")]
    jobs = [
        (p, r, seed, duration_for(p, r, args.cap)) for r in rtts for p in losses for seed in range(1, args.seeds + 1)
    ]
    started = time.monotonic()
    print(
        f"Kernel Reno (pinned, read back) through the engine, Linux {tcp.kernel()}; {len(jobs)} runs, "
        f"{args.jobs} at a time, ~{sum(j[3] for j in jobs) / args.jobs / 60:.0f} min",
        flush=True,
    )
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda j: measure_reno(*j), jobs))
    bad = [r for r in rows if not r.get("ok") or r.get("tcp_cc") != "reno"]
    for r in bad:
        print(
            f"  FAILED loss {r['loss']:.1%} rtt {r['rtt_s'] * 1000:g} ms seed {r['seed']}: "
            f"{r.get('error') or 'ran ' + str(r.get('tcp_cc'))}"
        )
    print("| RTT (ms) | loss | run (s) | Reno KiB/s (runs) | retransmits/s | Mathis | Reno/Mathis | PFTK | Reno/PFTK |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    failures = 0
    for r_s in rtts:
        for p in losses:
            cell = [
                r for r in rows if r["loss"] == p and r["rtt_s"] == r_s and r.get("ok") and r.get("tcp_cc") == "reno"
            ]
            if not cell:
                continue
            goodputs = [r["goodput_kBps"] for r in cell]
            mean = statistics.fmean(goodputs)
            m, pf = cell[0]["mathis_kBps"], cell[0]["pftk_kBps"]
            retx = statistics.fmean((r["retransmissions"] or 0) / r["wire_time_s"] for r in cell)
            print(
                f"| {r_s * 1000:g} | {p:.1%} | {cell[0]['duration_s']:.0f} | {mean:.0f} "
                f"({', '.join(f'{g:.0f}' for g in goodputs)}) | {retx:.1f} | {m:.0f} | {mean / m:.2f} | {pf:.0f} | "
                f"{mean / pf:.2f} |"
            )
            if math.isclose(r_s, 0.05):  # the bar applies at 25 ms each way
                bound = 0.10 if p <= 0.01 else (0.20 if p <= 0.03 else None)
                if bound is not None and abs(mean / m - 1) > bound:
                    failures += 1
                    print(f"  OUTSIDE: Reno/Mathis {mean / m:.2f} at {p:.1%}, 50 ms (bound ±{bound:.0%})")
    print(f"({time.monotonic() - started:.0f} s; {len(bad)} failed runs; {failures} cells at 50 ms outside the bound)")
    return 1 if bad or failures else 0


def q7_per_algorithm(runs: int, jobs: int) -> int:
    """COMN Q7 at -w 32 KB with each available algorithm pinned: the host's default decides
    nothing (its own is printed beside)."""
    from assignments.comn.sheet import LINK
    from harness.statistics import summarize

    with open("/proc/sys/net/ipv4/tcp_congestion_control") as f:
        host = f.read().strip()
    algorithms = [a for a in tcp.OFFERED if a in (tcp.available() or [])]
    spec = LINK.format(delay=25, loss=5)
    work = [(a, seed) for a in algorithms for seed in range(1, runs + 1)]
    with ThreadPoolExecutor(jobs) as pool:
        rows = list(
            pool.map(
                lambda j: dict(
                    run_iperf(spec, window_bytes=32 << 10, size=1 << 20, seed=j[1], tcp_cc=j[0], time_limit=300),
                    asked=j[0],
                ),
                work,
            )
        )
    print(f"COMN Q7 cell, -w 32 KB, 1 MiB, {runs} runs; host default {host}, Linux {tcp.kernel()}")
    print("| pinned | read back | KiB/s ±95% | runs ok |")
    print("|---|---|---|---|")
    for a in algorithms:
        cell = [r for r in rows if r["asked"] == a]
        ok = [r for r in cell if r.get("ok")]
        s = summarize([r["goodput_kBps"] for r in ok])
        print(
            f"| {a} | {'/'.join(sorted({str(r.get('tcp_cc')) for r in ok}))} | {s.mean:.1f} ± {s.margin:.1f} | "
            f"{len(ok)}/{len(cell)} |"
        )
    return 0 if all(r.get("ok") and r.get("tcp_cc") == r["asked"] for r in rows) else 1
