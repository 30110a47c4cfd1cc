"""Benchmark: the reference's end of transfer at 30% and 50% loss each way, on real
sockets through the link engine (the rules: reference/PROTOCOL.md "How a
transfer ends", simulated over 200 seeds in tests/reference/test_ending.py).

    python -m bench reference_ending [--runs 20] [--size BYTES] [--only NAME,...]

Link: `delay 25ms loss X% rate 10mbit` each way, full duplex, local backend. Programs:
- sr-ext: the command line's SR at its widest, `python3 -m reference send/recv --protocol sr
  --format ext --window 1024 --adaptive --timeout 100 --max-in-flight 96`;
- sr-comn: Sender4/Receiver4, W=64, RetryTimeout 125 ms, the byte order alternating
  big/little-endian run by run (RDT_BYTE_ORDER);
- gbn-comn: Sender3/Receiver3, W=8, RetryTimeout 77 ms (smaller file: GBN at 50% is slow).
Seeds 1..runs. A run fails if the output is not byte-exact or either program exits
non-zero; the failure line says which (e.g. the sender's "no acknowledgement"). The
harness's no-progress stop is off: at 50% each way a sender may wait 10 s for its last
ACK now and then (0.75**17, ~0.7% of runs), which is the reference's to ride out.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace

from bench.reference import fixed_timeout_ms, programs

LOSSES = (0.30, 0.50)
KINDS = {  # name -> (programs kind, window, max in flight, timeout ms, share of --size)
    "sr-ext": ("sr-ext", 1024, 96, 100, 1.0),
    "sr-comn": ("sr", 64, None, fixed_timeout_ms(64), 0.25),
    "gbn-comn": ("gbn", 8, None, fixed_timeout_ms(8), 1 / 32),
}


def one_run(name: str, loss: float, seed: int, size: int):
    from harness import Link, run_transfer

    kind, window, cap, timeout_ms, share = KINDS[name]
    sender, receiver = programs(kind, window, cap)
    order = "little" if kind != "sr-ext" and seed % 2 == 0 else "big"
    if kind != "sr-ext":
        sender, receiver = (replace(p, env={"RDT_BYTE_ORDER": order}) for p in (sender, receiver))
    began = time.monotonic()
    res = run_transfer(
        sender=sender,
        receiver=receiver,
        link=Link(forward=f"delay 25ms loss {loss * 100:g}% rate 10mbit"),
        params={"impl": "reference/comn", "timeout": timeout_ms, "window": window},
        size=max(1024, int(size * share)),
        seed=seed,
        backend="local",
        time_limit=900,
        no_progress=0,
    )  # the reference's own ending is measured, not the harness's rule
    return res, order, time.monotonic() - began


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench reference_ending")
    p.add_argument("--runs", type=int, default=20, help="seeds per program and loss (default 20)")
    p.add_argument("--size", type=int, default=1 << 20, help="file bytes for sr-ext (default 1 MiB)")
    p.add_argument("--only", help=f"comma-separated subset of {', '.join(KINDS)}")
    return p


def run(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    names = args.only.split(",") if args.only else list(KINDS)
    if args.runs < 1 or args.size < 1 or not set(names) <= set(KINDS):
        print(f"reference_ending: --runs and --size must be >= 1, --only from {', '.join(KINDS)}", file=sys.stderr)
        return 2
    from harness.engine import find_linkemu

    try:
        find_linkemu()
    except Exception as e:
        print(f"bench reference_ending: needs the link engine ({e}); run `make build`", file=sys.stderr)
        return 1
    print("| program | loss each way | file | runs ok | goodput KiB/s median (min-max) | run time s median (max) |")
    print("|---|---|---|---|---|---|", flush=True)
    failed = 0
    for name in names:
        for loss in LOSSES:
            ok, goodputs, times, failures = 0, [], [], []
            for seed in range(1, args.runs + 1):
                res, order, took = one_run(name, loss, seed, args.size)
                times.append(took)
                if res.ok:
                    ok += 1
                    goodputs.append(res.goodput_kBps)
                else:
                    failures.append(f"seed {seed} ({order}-endian): {res.error}")
            failed += len(failures)
            size = max(1024, int(args.size * KINDS[name][4]))
            spread = f"{statistics.median(goodputs):.1f} ({min(goodputs):.1f}-{max(goodputs):.1f})" if goodputs else "—"
            print(
                f"| {name} | {loss:.0%} | {size // 1024} KiB | {ok}/{args.runs} | {spread} | "
                f"{statistics.median(times):.1f} ({max(times):.1f}) |",
                flush=True,
            )
            for line in failures:
                print(f"  FAILED {name} {loss:.0%} {line}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
