"""The multi-homing results sheet (seed 000): one path against two, and fail-over.

Topology: the report's s–r3–d (experiment 1) and s–r1–d, s–r2–d (experiment 2) as paths
of the link engine, not as forwarding namespaces: a path is the two links s–rX and rX–d
folded into one, so the loss on every link, p, becomes 1 − (1 − p)² per direction of a
path (5% → 9.75%, 15% → 27.75%, 28% → 48.16%), on data and ACKs alike. The report does
not give its links' rate and delay (GENI VMs); we use 10 Mbit/s and 10 ms each way per
path (5 ms per link). Each cell is repeated until the 95% margin of error of the transfer
time is below 10% of the mean, the report's rule.

Programs: the reference multi-homed Selective Repeat (reference/core/multihomed.py:
adaptive RTO per path, α = 0.125, β = 0.25; dead-path detection), extended wire format
(CRC32), window 512 with at most 32 packets in flight per path (the bandwidth-delay
product is 25), in both experiments (one path or two). A student's directory
(`--impl DIR`) holds
    Sender.py <file> <host>:<port> [<host2>:<port2>]      one address per path
    Receiver.py <port> <file> <number of paths>
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from harness import time_limits
from harness.experiments.failover import data_arrivals, in_order_stall
from harness.experiments.sweep import Sweep
from harness.experiments.transfers import TransferRun
from harness.sheets import programs
from harness.sheets.plots import errorbar, legend
from harness.sheets.sheet import Plot, Prompt, Results, Section, Sheet, Table
from harness.sheets.tables import Metric, Reported, cells, comparison_table, fmt, mean_of, reported_table
from harness.statistics import compare, order

PATH = "delay 10ms rate 10mbit loss {path_loss}%"
ONE_WAY_S = 0.010
RATE_BPS = 10e6
PAYLOAD, WIRE_EXTRA = 1024, 12 + 42  # extended header; Ethernet + IPv4 + UDP
WINDOW = 512  # packets: wide, so a lost packet never blocks the sender
IN_FLIGHT = 32  # per path: a little above the 25-packet bandwidth-delay product
MARGIN = 0.10  # the report's stopping rule
FILES = ("Sender.py", "Receiver.py")
NO_PROGRESS_S = 30.0  # 48% loss each way on a path: be patient before calling a run stuck
REPORT_1 = {5: 48.150447404, 15: 81.197790027, 28: 172.959200991}  # Table 1 (s)
REPORT_2 = {5: 41.3456017956, 15: 73.1446991897, 28: 161.939675249}  # Table 2 (s)
REPORT_MARGIN_1 = {5: 9.9696, 15: 1.5739, 28: 8.8248}  # %
REPORT_MARGIN_2 = {5: 9.9737, 15: 9.9973, 28: 9.9912}


@dataclass(frozen=True)
class Plan:
    size: int
    runs: int  # minimum runs per cell before the margin rule applies
    cap: int  # most runs per cell
    losses: tuple
    failover_runs: int  # seeds of the fail-over experiment
    down_ms: int  # when path p1 goes down, from the first packet


FULL = Plan(5_000_000, 3, 20, (5, 15, 28), 5, 1500)
QUICK = Plan(1_000_000, 3, 8, (5, 15, 28), 3, 300)


def path_loss(p: float) -> float:
    """Loss per direction of a path of two links that lose p% each."""
    return round(100 * (1 - (1 - p / 100) ** 2), 4)


def missing_programs(impl: str | None) -> list[str]:
    return programs.missing(impl, FILES)


def _programs(impl: str | None, n_paths: int):
    if impl is None:
        more = " --path {receiver_host2}:{receiver_port2}" if n_paths == 2 else ""
        return (
            programs.reference(
                "send",
                "mh",
                "--host {receiver_host} --port {receiver_port}"
                + more
                + f" --file {{file}} --window {WINDOW} --max-in-flight {IN_FLIGHT * n_paths}"
                " --adaptive --timeout 100",
            ),
            programs.reference(
                "recv", "mh", f"--paths {n_paths} --port {{listen_port}} --file {{output}} --window {WINDOW}"
            ),
        )
    more = " {receiver_host2}:{receiver_port2}" if n_paths == 2 else ""
    return (
        programs.script(impl, "Sender.py", "{file} {receiver_host}:{receiver_port}" + more),
        programs.script(impl, "Receiver.py", f"{{listen_port}} {{output}} {n_paths}"),
    )


# ---- models ------------------------------------------------------------------------


def capacity_bound_s(cell: dict, size: int, n_paths: int) -> float:
    """No protocol beats this: the file's packets at the full rate of n paths, plus one
    round trip's propagation. Loss does not enter: netem (and the engine) drop a lost
    packet before the rate queue, so it costs the sender time, not link capacity."""
    per_packet = (PAYLOAD + WIRE_EXTRA) * 8 / RATE_BPS
    return math.ceil(size / PAYLOAD) * per_packet / n_paths + 2 * ONE_WAY_S


# ---- the sheet ---------------------------------------------------------------------


def build(
    impl: str | None = None,
    plan: Plan = FULL,
    backend: str = "auto",
    runs: int | None = None,
    until_margin: float | None = None,
    cap: int | None = None,
    seed: int = 1,
) -> Sheet:
    runs = runs or plan.runs
    margin = until_margin or MARGIN
    cap = max(cap or plan.cap, runs)
    missing = missing_programs(impl)
    unavailable = f"{impl} lacks {', '.join(missing)}" if missing else None
    cell_list = [{"loss": p, "path_loss": path_loss(p)} for p in plan.losses]

    def run(n_paths: int, **more) -> TransferRun:
        sender, receiver = _programs(impl, n_paths)
        return TransferRun(
            sender,
            receiver,
            "",
            shared_queue=False,
            size=plan.size,
            backend=backend,
            paths=(PATH,) * n_paths,
            time_limit=lambda c: time_limits.BOUND(capacity_bound_s(c, plan.size, 1)),
            no_progress=NO_PROGRESS_S,
            **more,
        )

    def sweep(name, run_one, n_paths, **kw) -> Sweep:
        return Sweep(
            name,
            run_one,
            kw.pop("cells", cell_list),
            seed=seed,
            metric="wire_time_s",
            cost=lambda c: capacity_bound_s(c, plan.size, n_paths) * (1 + c["path_loss"] / 25),
            load=lambda c: 1.0,
            **kw,
        )

    one = sweep("one_path", run(1, extra=_per_path), 1, runs=runs, until_margin=margin, cap=cap)
    two = sweep("two_paths", run(2, extra=_per_path), 2, runs=runs, until_margin=margin, cap=cap)
    fail_cells = [{"loss": 5, "path_loss": path_loss(5), "down_ms": plan.down_ms}]
    failover = sweep(
        "failover",
        run(2, schedule=_down_p1, extra=_stall, pcap=impl is None),
        2,
        cells=fail_cells,
        runs=plan.failover_runs,
    )

    intro = [
        "Topology: source s, destination d, routers r1, r2, r3 as paths of rdtlab's link engine (not forwarding "
        "namespaces): experiment 1 sends through s–r3–d, experiment 2 over s–r1–d and s–r2–d at once. Each path "
        "is `delay 10ms rate 10mbit loss <q>%` each way, where q = 1 − (1 − p)² folds the loss p of its two "
        "links (5% → 9.75%, 15% → 27.75%, 28% → 48.16%); the report does not give its links' rate and delay.",
        f"File: {plan.size:,} deterministic random bytes. Programs: "
        + (
            impl
            or f"the reference multi-homed Selective Repeat (adaptive RTO per path, α = 0.125, β = 0.25, "
            f"dead-path detection; extended format with CRC32; window {WINDOW}, at most {IN_FLIGHT} packets in flight "
            "per path)"
        )
        + f". Each cell is repeated until the 95% margin of error of the transfer time is under {margin:.0%} of "
        f"the mean (at least {runs}, at most {cap} runs), the report's rule. Transfer time is measured on the "
        "wire by the engine: first data packet in to the last ACK out.",
    ]
    sections = [
        Section(
            "Experiment 1 – one path (s–r3–d)",
            [one],
            experiment_blocks("one_path", 1, plan, cell_list, margin),
            unavailable,
        ),
        Section(
            "Experiment 2 – two paths (s–r1–d and s–r2–d)",
            [two],
            experiment_blocks("two_paths", 2, plan, cell_list, margin),
            unavailable,
        ),
        Section("Comparison with the report", [], comparison_blocks(plan), unavailable),
        Section(
            "Fail-over – path s–r2–d goes down mid-transfer",
            [failover],
            failover_blocks(plan, impl is None),
            unavailable,
        ),
    ]
    return Sheet("multihoming", "Multi-homed reliable transfer over UDP (rdtlab, seed 000)", intro, sections)


def _down_p1(cell: dict) -> list:
    return [{"at_ms": int(cell["down_ms"]), "cmd": "down", "path": "p1"}]


def _per_path(res, _pcap=None) -> dict:
    """Data packets the sender put on each path (the engine's counters)."""
    paths = (res.link or {}).get("paths") or {}
    return {f"{name}_packets": (p.get("forward") or {}).get("packets_in") for name, p in sorted(paths.items())}


def _stall(res, pcap: str | None) -> dict:
    out = _per_path(res)
    down = (res.params or {}).get("down_ms")
    if pcap and down is not None:
        out.update(in_order_stall(data_arrivals(pcap), float(down), ONE_WAY_S))
    return out


# ---- experiments 1 and 2 -------------------------------------------------------------


def report_style(frame: pd.DataFrame, cell_list: list[dict], margin: float) -> pd.DataFrame:
    """The report's Tables 1 and 2: loss, mean time, margin of error; plus runs, and
    whether the cell stopped at the cap before its margin came under the target."""
    s = cells(frame, ["loss"], "wire_time_s")
    rows = []
    for c in cell_list:
        row = s.get((c["loss"],))
        if row is None or not row["n"]:
            text = "not measured" if row is None else f"FAILED: {(row['error'] or '')[:80]}"
            rows.append({"Loss Percentage": f"{c['loss']} %", "Mean (s)": text, "Margin of Error": "–", "runs": 0})
            continue
        rows.append(
            {
                "Loss Percentage": f"{c['loss']} %",
                "Mean (s)": fmt(row["mean"], 3),
                "Margin of Error": f"{row['rel_margin'] * 100:.4f} %" if math.isfinite(row["rel_margin"]) else "–",
                "runs": f"{row['n']}"
                + (f" (+{row['failed']} failed)" if row["failed"] else "")
                + (" (cap reached)" if not row["rel_margin"] < margin else ""),
            }
        )
    return pd.DataFrame(rows)


def experiment_blocks(name: str, n_paths: int, plan: Plan, cell_list: list[dict], margin: float) -> list:
    number = 1 if n_paths == 1 else 2
    route = ["s–r3–d"] if n_paths == 1 else ["s–r1–d", "s–r2–d"]

    def detail(r: Results) -> pd.DataFrame:
        return comparison_table(
            r.rows(name),
            cell_list,
            [("Loss per link (%)", "loss"), ("per path (%)", "path_loss")],
            [
                Metric(
                    "Transfer time (s)",
                    "wire_time_s",
                    2,
                    [("capacity bound", lambda c: capacity_bound_s(c, plan.size, n_paths))],
                ),
                Metric("Retransmissions", "retransmissions", 0),
                *[Metric(f"packets on {label}", f"p{k}_packets", 0) for k, label in enumerate(route)],
            ],
        )

    def plot(r: Results, ax) -> None:
        _time_plot(ax, r, [(name, n_paths, "C0" if n_paths == 1 else "C2")], plan)

    return [
        Table(
            f"Table {number}: transfer time ({n_paths} path{'s' if n_paths > 1 else ''})",
            lambda r: report_style(r.rows(name), cell_list, margin),
            f'Runs: repeated until the margin of error was under {margin:.0%}; "cap reached" marks a cell '
            "that stopped at the most runs allowed first (on a loaded machine the two-path runs, which keep "
            "the Python sender busiest, vary most).",
        ),
        Plot(f"Figure {number}: file transfer time against packet loss", f"figure{number}.png", plot),
        Table(
            f"Experiment {number} in detail, with the capacity bound",
            detail,
            "Capacity bound: the file's packets at the paths' full rate (a lost packet costs no capacity: "
            "it is dropped before the rate queue, as by netem); the error column shows how far the "
            "protocol's time is above it, which is what loss costs this protocol.",
        ),
    ]


def _time_plot(ax, r: Results, series: list, plan: Plan) -> None:
    xs = list(plan.losses)
    for name, n_paths, colour in series:
        s = cells(r.rows(name), ["loss"], "wire_time_s")
        errorbar(
            ax, xs, s, [(p,) for p in xs], colour, f"experiment {n_paths} ({n_paths} path{'s' if n_paths > 1 else ''})"
        )
    ax.set_xlabel("packet loss on every link (%)")
    ax.set_ylabel("file transfer time (s)")
    ax.set_title(f"{plan.size:,} bytes, 10 Mbit/s, 10 ms per path")
    ax.set_ylim(bottom=0)
    legend(ax)


# ---- comparison -------------------------------------------------------------------


def _ours(name: str, loss: int):
    return lambda frames: cells(frames.get(name), ["loss"], "wire_time_s").get((loss,))


def _ratio(loss: int):
    def ours(frames):
        a, b = _ours("one_path", loss)(frames), _ours("two_paths", loss)(frames)
        if not (a and b and a["n"] and b["n"]):
            return None
        return {"mean": a["mean"] / b["mean"], "margin": float("nan"), "n": min(a["n"], b["n"])}

    return ours


def reported(plan: Plan) -> list[Reported]:
    out = [
        Reported(f"experiment 1 (one path), {p}% loss", REPORT_1[p], _ours("one_path", p), "Table 1")
        for p in plan.losses
        if p in REPORT_1
    ]
    out += [
        Reported(f"experiment 2 (two paths), {p}% loss", REPORT_2[p], _ours("two_paths", p), "Table 2")
        for p in plan.losses
        if p in REPORT_2
    ]
    out += [
        Reported(f"1-path / 2-path time ratio, {p}% loss", REPORT_1[p] / REPORT_2[p], _ratio(p), "Tables 1, 2")
        for p in plan.losses
        if p in REPORT_1
    ]
    return out


def comparison_blocks(plan: Plan) -> list:
    def plot(r: Results, ax) -> None:
        _time_plot(ax, r, [("one_path", 1, "C0"), ("two_paths", 2, "C2")], plan)
        xs = [p for p in plan.losses if p in REPORT_1]
        ax.plot(
            xs,
            [REPORT_1[p] * plan.size / 5e6 for p in xs],
            "C0:",
            label="report, experiment 1" + (" (scaled to this file)" if plan.size != 5_000_000 else ""),
        )
        ax.plot(
            xs,
            [REPORT_2[p] * plan.size / 5e6 for p in xs],
            "C2:",
            label="report, experiment 2" + (" (scaled to this file)" if plan.size != 5_000_000 else ""),
        )
        legend(ax)

    note = (
        ""
        if plan.size == 5_000_000
        else f" This run sent {plan.size:,} bytes, not the report's 5,000,000: times are not comparable one to one "
        "(the ratio is)."
    )
    return [
        Table(
            "The report's numbers beside ours",
            lambda r: reported_table(r.frames, reported(plan), "s", 2),
            "Report: Tables 1 and 2 (5,000,000 bytes, GENI, tc/netem, the authors' own protocol)." + note,
        ),
        Plot("Figure 3: experiment 1 against experiment 2 (report dotted)", "figure3.png", plot),
        Prompt(
            "Does multi-homing pay, and why do our times differ from the report's?",
            lambda r: comparison_answer(r, plan),
        ),
    ]


def comparison_answer(r: Results, plan: Plan) -> str:
    one = cells(r.rows("one_path"), ["loss"], "wire_time_s")
    two = cells(r.rows("two_paths"), ["loss"], "wire_time_s")
    if not one or not two:
        return "(not measured)"
    lines, faster = [], []
    for p in plan.losses:
        a, b = mean_of(one, (p,)), mean_of(two, (p,))
        if math.isfinite(a) and math.isfinite(b):
            lines.append(
                f"{p}%: "
                + compare(
                    "one path",
                    one[(p,)],
                    "two",
                    two[(p,)],
                    "s",
                    2,
                    higher="takes longer than",
                    lower="is quicker than",
                    ratio=True,
                )
            )
            faster.append(order(one[(p,)], two[(p,)]))
    verdict = (
        "Two paths are faster at every loss rate"
        if faster and all(f > 0 for f in faster)
        else "Two paths are NOT faster at every loss rate (a bug to look into)"
        if any(f < 0 for f in faster)
        else "Two paths are faster where the runs can tell, and no loss rate shows them slower"
    )
    return "\n\n".join(
        [
            verdict + ": " + "; ".join(lines) + ".",
            "Two paths give the sender twice the capacity and twice the window's worth of round trips, so with a "
            "protocol that keeps both busy the time nearly halves; the report's ratio is 1.07–1.16. The report's "
            "sender sleeps one whole timeout per packet in a thread of its own and alternates packets between the "
            "paths, so its time is set by its timers rather than by the links, and a second link helps it little. "
            "Our reference is much faster on the same loss (differences far above 15% in the table): besides the "
            "protocol, the report's GENI links' rate and delay are not stated, so the settings are comparable "
            "only in loss and file size.",
            "Loss costs more than in proportion: at 28% per link a round trip (two links each way for data, two for "
            "the ACK) succeeds only (1 − 0.28)⁴ = 27% of the time, so each packet is sent about twice and many "
            "are found lost only by a timeout.",
        ]
    )


# ---- fail-over ------------------------------------------------------------------------


def failover_blocks(plan: Plan, has_pcap: bool) -> list:
    def table(r: Results) -> pd.DataFrame:
        frame = r.rows("failover")
        if frame.empty:
            return pd.DataFrame()
        rows = []
        for row in frame.to_dict("records"):
            stall = row.get("stall_s")
            rows.append(
                {
                    "run": row["rep"],
                    "seed": row["seed"],
                    "completed": "yes" if row["ok"] else "NO",
                    "total time (s)": fmt(row.get("wire_time_s"), 2),
                    "stall after the down (ms)": fmt(stall * 1000, 0)
                    if isinstance(stall, float) and math.isfinite(stall)
                    else "–",
                    "retransmissions": fmt(row.get("retransmissions"), 0),
                    "error": row.get("error") or "",
                }
            )
        return pd.DataFrame(rows)

    def summary(r: Results) -> pd.DataFrame:
        fail = r.rows("failover")
        base = cells(r.rows("two_paths"), ["loss"], "wire_time_s").get((5,))
        total = cells(fail, ["loss"], "wire_time_s").get((5,))
        stall = cells(fail, ["loss"], "stall_s").get((5,)) if "stall_s" in fail else None
        return pd.DataFrame(
            [
                {
                    "runs completed": f"{total['n']}/{total['n'] + total['failed']}" if total else "0",
                    "total time (s)": fmt(total["mean"], 2) if total and total["n"] else "–",
                    "two paths, no failure (s)": fmt(base["mean"], 2) if base and base["n"] else "–",
                    "time to detect and recover (ms, mean)": fmt(stall["mean"] * 1000, 0)
                    if stall and stall["n"]
                    else "–",
                    "max (ms)": fmt(stall["max"] * 1000, 0) if stall and stall["n"] else "–",
                }
            ]
        )

    how = (
        "Time to detect and recover: from the down to when the receiver's in-order point moves again, read "
        "from the engine's pcap (the longest stall after the down; harness/experiments/failover.py)."
        if has_pcap
        else "The stall is read from the extended format's packet numbers: shown for the reference only."
    )
    return [
        f"Both paths at 5% loss per link; the engine's schedule takes path p1 (s–r2–d) down {plan.down_ms} ms after "
        f"the first packet and never brings it back. {plan.failover_runs} seeds. The sender must notice (the "
        "reference: no ACK on the path for 5 of its RTOs), resend what was in flight there on s–r1–d, and finish "
        "on that path alone.",
        Table("Fail-over: every seed", table, how),
        Table("Fail-over: summary", summary),
    ]


__all__ = ["build", "FULL", "QUICK", "Plan", "missing_programs", "path_loss"]
