"""Benchmark: the reference Selective Repeat at 5/15/30% loss each way, 10 seeds each,
in the simulator and on real sockets, with and without tail copies.

    python -m bench reference_loss [--seeds N] [--size BYTES] [--no-sockets] [--no-before]

The program: `python3 -m reference send|recv --protocol sr --format ext
--window 1024 --max-in-flight 96 --adaptive --timeout 100` (SACK, RFC 6298 RTO from
100 ms, tail copies 3 by default), over `delay 25ms loss X% rate 10mbit` each way, full
duplex, a 4 MiB file of seeded random bytes. "before" is the same command with
`--tail-copies 1`, side by side on the same seeds (the runtime's reading of waiting ACKs
before timers has no switch: it is in both).

Figures: share of the payload capacity, rate x 1024 / (1024 + 12 + 42) (42 = Ethernet,
IPv4, UDP, as linkemu counts; the simulator is given the same wire sizes), mean, worst
and best over the seeds; packets per unique; the real/simulated ratio of the means.
Targets: mean >= 95% at 5% and 15% (worst >= 92%), mean >= 90% at 30% (worst >= 85%),
every transfer byte-exact and ended, simulator and sockets within 10%.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from reference.sim import IP_UDP, Channel, WireSizes, simulate

RATE = 10e6
LOSSES = (0.05, 0.15, 0.30)
TARGETS = {0.05: (0.95, 0.92), 0.15: (0.95, 0.92), 0.30: (0.90, 0.85)}  # (mean, worst)
# The sender's options (the receiver takes the format and the window).
OPTIONS = ("--format", "ext", "--window", "1024", "--max-in-flight", "96", "--adaptive", "--timeout", "100")
BEFORE = ("--tail-copies", "1")
# the extended format over Ethernet, IPv4 and UDP: what linkemu's rate counts
ETH_EXT = WireSizes(data_overhead=14 + IP_UDP + 12, ack_bytes=14 + IP_UDP + 13)


def capacity_Bps() -> float:
    return RATE / 8 * 1024 / (1024 + ETH_EXT.data_overhead)


def sim_config(*extra: str):
    """The sender's core configuration exactly as `python3 -m reference send` builds it."""
    from reference.cli import build_parser, settings

    args = build_parser().parse_args(
        ["send", "--protocol", "sr", "--host", "h", "--port", "1", "--file", "f", *OPTIONS, *extra]
    )
    return settings(args)[0]


def simulated(loss: float, seed: int, size: int, extra: tuple[str, ...] = ()) -> dict:
    from reference.core import make_receiver, make_sender

    config = sim_config(*extra)
    data = random.Random(seed).randbytes(size)
    res = simulate(
        make_sender("sr", data, config),
        make_receiver("sr", config),
        Channel(delay=0.025, loss=loss, rate=RATE),
        seed=seed,
        sizes=ETH_EXT,
    )
    return {
        "ok": res.ok,
        "share": res.goodput_Bps / capacity_Bps() if res.ok else 0.0,
        "per_unique": res.packets_per_unique,
    }


def real(loss: float, seed: int, size: int, extra: tuple[str, ...] = ()) -> dict:
    from bench.reference import measure

    row = measure("sr-ext", loss, 1024, size, seed, 96, " ".join(extra))
    return {
        "ok": row["ok"],
        "share": (row["goodput"] or 0) * 1024 / capacity_Bps() if row["ok"] else 0.0,
        "per_unique": row["per_unique"] or 0.0,
        "error": row["error"],
    }


def summary(runs: list[dict]) -> str:
    shares = [r["share"] for r in runs]
    failed = sum(not r["ok"] for r in runs)
    return (
        f"{100 * statistics.mean(shares):.1f}% | {100 * min(shares):.1f}% | {100 * max(shares):.1f}% | "
        f"{statistics.mean(r['per_unique'] for r in runs):.3f} | {len(runs) - failed}/{len(runs)}"
    )


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench reference_loss")
    p.add_argument("--seeds", type=int, default=10, help="seeds per loss rate (default 10)")
    p.add_argument("--size", type=int, default=4 << 20, help="file bytes (default 4 MiB)")
    p.add_argument("--no-sockets", action="store_true", help="the simulator only")
    p.add_argument("--no-before", action="store_true", help="skip the runs without tail copies")
    return p


def run(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if args.seeds < 1 or args.size < 1:
        print("reference_loss: --seeds and --size must be at least 1", file=sys.stderr)
        return 2
    sockets = not args.no_sockets
    if sockets:
        from harness.engine import find_linkemu

        try:
            find_linkemu()
        except Exception as e:  # not built: say so, as the other benchmarks do
            print(f"bench reference_loss: needs the link engine ({e}); run `make build`", file=sys.stderr)
            return 1
    seeds = range(1, args.seeds + 1)
    variants = [("after", ())] + ([] if args.no_before else [("before", BEFORE)])
    print(f"## Reference SR at high loss: {' '.join(OPTIONS)}, {args.size} bytes, seeds 1-{args.seeds}")
    print(f"payload capacity {capacity_Bps() / 1024:.1f} KiB/s; before = `--tail-copies 1`\n")
    print("| loss | where | version | mean share | worst | best | packets/unique | ok | target (mean, worst) |")
    print("|---|---|---|---|---|---|---|---|---|")
    ok = True
    started = time.monotonic()
    for loss in LOSSES:
        means = {}
        for where, measure in [("sim", simulated)] + ([("sockets", real)] if sockets else []):
            for version, extra in variants:
                runs = [measure(loss, seed, args.size, extra) for seed in seeds]
                for seed, r in zip(seeds, runs):
                    if not r["ok"]:
                        print(f"  {where} {version} {loss:.0%} seed {seed} FAILED: {r.get('error')}", flush=True)
                each = " ".join(f"{100 * r['share']:.1f}" for r in runs)
                print(f"<!-- {loss:.0%} {where} {version}, seeds {seeds[0]}-{seeds[-1]}: {each} -->", flush=True)
                shares = [r["share"] for r in runs]
                means[where, version] = statistics.mean(shares)
                target = ""
                if version == "after":
                    want_mean, want_worst = TARGETS[loss]
                    met = (
                        all(r["ok"] for r in runs) and means[where, version] >= want_mean and min(shares) >= want_worst
                    )
                    ok &= met
                    target = f"{want_mean:.0%}, {want_worst:.0%}: {'met' if met else 'MISSED'}"
                print(f"| {loss:.0%} | {where} | {version} | {summary(runs)} | {target} |", flush=True)
        if sockets:
            ratio = means["sockets", "after"] / means["sim", "after"]
            agree = abs(ratio - 1) <= 0.10
            ok &= agree
            print(
                f"| {loss:.0%} | sockets / sim | after | {ratio:.3f} | | | | | within 10%: "
                f"{'yes' if agree else 'NO'} |",
                flush=True,
            )
    print(f"\n({time.monotonic() - started:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
