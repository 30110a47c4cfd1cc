"""The COMN results sheet (seed 004): questions 1-8, measured, modelled and discussed.

Link: `loss 5% delay <d>ms rate 10mbit` as netem on `lo`: the same spec both ways,
one shared rate queue for data and ACKs. File: `size` deterministic random bytes
(1 MiB for the full sheet, like COMN's ~1 MB picture). Programs: the COMN ones
(Sender2..4.py / Receiver2..4.py) from `impl`, the reference by default.

The COMN sheet leaves the GBN/SR timeout open; we use the idle round trip plus 10 ms,
rounded: 2·delay + 10 ms (20, 60 and 210 ms at 5, 25 and 100 ms), close to the
20/66/219 ms of the seed's RTT-based choice.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from harness.backends import tcp
from harness.experiments.iperf import IperfRun, unavailable_reason as iperf_unavailable
from harness.experiments.sweep import Sweep
from harness.experiments.transfers import TransferRun
from harness.models import (
    Link,
    gbn_textbook,
    gbn_timeout,
    mathis,
    pftk,
    pipelined_no_loss,
    sr_textbook,
    sr_timeout,
    stop_and_wait,
)
from harness.sheets import programs
from harness.sheets.plots import errorbar
from harness.sheets.sheet import Plot, Prompt, Results, Section, Sheet, Table
from harness.sheets.tables import DASH, Metric, cells, comparison_table, fmt, fmt_error, mean_of, runs_text
from harness.statistics import best_sentence, compare, order
from harness import time_limits

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFERENCE = os.path.join(REPO, "reference", "comn")
LOSS = 5  # percent, each direction
RATE = "10mbit"
LINK = "delay {delay}ms loss {loss}% rate " + RATE
RUN_OVERHEAD_S = 3.0  # start-up and end (the harness stops a lingering receiver once its output is right)
TCP_MIN_RTO_S = 0.2  # Linux's minimum RTO, for PFTK's T0


@dataclass(frozen=True)
class Plan:
    """What the sheet measures: the full COMN sheet, or the quick one."""

    size: int
    runs: int
    q1_timeouts: tuple
    q3_delays: tuple
    q3_windows: tuple
    q5_windows: tuple
    q7_windows_kB: tuple


FULL = Plan(
    1 << 20,
    5,
    (5, 10, 15, 20, 25, 30, 40, 50, 75, 100),
    (5, 25, 100),
    (1, 2, 4, 8, 16, 32, 64, 128, 256),
    (1, 2, 4, 8, 16, 32, 64),
    (1, 2, 4, 8, 16, 32),
)
QUICK = Plan(100 << 10, 2, (5, 10, 20, 50, 100), (5, 25, 100), (1, 4, 16, 64, 256), (1, 4, 16, 64), (1, 4, 16, 32))

QUESTIONS = ("q1", "q3", "q5", "q7")  # measured questions, each run on its own (`rdtlab sheet comn --questions`)
PROGRAMS = {  # question -> the files it needs
    "q1": ("Sender2.py", "Receiver2.py"),
    "q3": ("Sender3.py", "Receiver3.py"),
    "q5": ("Sender4.py", "Receiver4.py"),
}


def gbn_timeout_ms(delay_ms: float) -> int:
    return int(2 * delay_ms + 10)


def link_model(cell: dict) -> Link:
    return Link(cell["delay"] / 1000, cell["loss"] / 100)


def missing_by_question(impl: str | None) -> dict[str, list[str]]:
    """{question: [the files impl lacks]} for each question that runs programs (its
    questions run one by one: a question whose programs are missing is left out)."""
    return {q: programs.missing(impl, files) for q, files in PROGRAMS.items()}


def missing_programs(impl: str | None) -> list[str]:
    """The files of the whole sheet that `impl` lacks (none for the reference, impl None)."""
    return [f for files in missing_by_question(impl).values() for f in files]


# ---- models per question -------------------------------------------------------------


def q1_model(cell: dict, size: int):
    return stop_and_wait(link_model(cell), cell["timeout"] / 1000, size)


def q3_model(cell: dict) -> float:
    return gbn_timeout(link_model(cell), cell["window"], cell["timeout"] / 1000)


def q3_textbook(cell: dict) -> float:
    return gbn_textbook(link_model(cell), cell["window"])


def q5_model(cell: dict) -> float:
    return sr_timeout(link_model(cell), cell["window"], cell["timeout"] / 1000)


def q5_textbook(cell: dict) -> float:
    return sr_textbook(link_model(cell), cell["window"])


def tcp_rtt(cell: dict) -> float:
    """RTT of a 1 KiB segment and its ACK (TCP/IP headers: 1024 + 52 + 14 bytes)."""
    return Link(cell["delay"] / 1000, payload=1024, header=52 + 14, overhead=0, ack_bytes=66).rtt


def q7_pftk(cell: dict) -> float:
    rtt = tcp_rtt(cell)
    return (
        pftk(1024, rtt, cell["loss"] / 100, max(TCP_MIN_RTO_S, 2 * rtt) + rtt, wmax_packets=cell["window_kB"], b=1)
        / 1024
    )


def q7_mathis(cell: dict) -> float:
    return mathis(1024, tcp_rtt(cell), cell["loss"] / 100) / 1024


def offered_load(cell: dict) -> float:
    """How hard a run drives the link: the window's rate over an idle round trip as a
    share of the capacity (1 = saturating). Saturating runs are CPU-sensitive, so the
    sweep keeps few of them in flight at once (Sweep.load)."""
    link = link_model(cell)
    window = cell.get("window", cell.get("window_kB", 1))
    return min(1.0, window / link.rtt / link.capacity_pps)


# What a run costs the CPU after its start-up (its programs, the engine and the harness's
# thread), for the sweep's booking until the cell's own runs are measured. Measured on the
# 2-core machine (BENCHMARKS.md, "The sheets": what a COMN run uses, by kind). The guess
# grows with the offered load and errs high; the sweep books each cell by its own runs
# once one has ended.
CPU_IDLE = 0.01
CPU_SATURATING = {"stop-and-wait": 0.7, "window": 0.31, "iperf": 0.11}  # a packet at a time costs most


def expected_cpu(cell: dict, kind: str = "window") -> float:
    """Cores a run is expected to use after its start-up: more the faster it sends (a
    window per round trip, or per timeout where that is shorter; see CPU_SATURATING)."""
    rtt = link_model(cell).rtt
    faster = rtt / min(rtt, cell["timeout"] / 1000) if "timeout" in cell else 1.0
    return CPU_IDLE + (CPU_SATURATING[kind] - CPU_IDLE) * min(1.0, offered_load(cell) * faster)


def expected_seconds(kBps: float, size: int) -> float:
    return size / 1024 / max(kBps, 0.1) + RUN_OVERHEAD_S


# ---- the sheet ---------------------------------------------------------------------


@dataclass
class Measured:
    """One measured question: its sweep and the cells it covers, in sheet order."""

    sweep: Sweep
    cells: list[dict]


def sweeps(
    impl: str = REFERENCE,
    plan: Plan = FULL,
    backend: str = "auto",
    runs: int | None = None,
    until_margin: float | None = None,
    cap: int = 30,
    seed: int = 1,
    tcp_cc: str | None = None,
) -> dict[str, Measured]:
    """The sheet's four sweeps ({"q1", "q3", "q5", "q7"}) over the programs in `impl`:
    what both this sheet and the course notebook (harness/notebook.py) measure."""
    runs = runs or plan.runs
    size = plan.size

    def sweep(name: str, run_one, cell_list: list[dict], kBps) -> Measured:
        cost = lambda c: expected_seconds(kBps(c), size)  # noqa: E731
        kind = "iperf" if isinstance(run_one, IperfRun) else "stop-and-wait" if name == "q1" else "window"
        run_one = _with_limit(run_one, lambda c: time_limits.RUN(cost(c)))  # 3x the model, 30-900 s
        return Measured(
            Sweep(
                name,
                run_one,
                cell_list,
                runs=runs,
                until_margin=until_margin,
                cap=cap,
                seed=seed,
                cost=cost,
                load=offered_load,
                cpu=lambda c: expected_cpu(c, kind),
            ),
            cell_list,
        )

    q1_cells = [{"delay": 5, "loss": LOSS, "timeout": t} for t in plan.q1_timeouts]
    q3_cells = [
        {"delay": d, "loss": LOSS, "timeout": gbn_timeout_ms(d), "window": w}
        for d in plan.q3_delays
        for w in plan.q3_windows
    ]
    q5_cells = [{"delay": 25, "loss": LOSS, "timeout": gbn_timeout_ms(25), "window": w} for w in plan.q5_windows]
    q7_cells = [{"delay": 25, "loss": LOSS, "window_kB": w} for w in plan.q7_windows_kB]
    return {
        "q1": sweep(
            "q1",
            TransferRun(
                programs.script(impl, "Sender2.py", "{receiver_host} {receiver_port} {file} {timeout}", "comn-sw"),
                programs.script(impl, "Receiver2.py", "{listen_port} {output}"),
                LINK,
                size=size,
                backend=backend,
            ),
            q1_cells,
            lambda c: q1_model(c, size).throughput_kBps,
        ),
        "q3": sweep(
            "q3",
            TransferRun(
                programs.script(
                    impl, "Sender3.py", "{receiver_host} {receiver_port} {file} {timeout} {window}", "comn"
                ),
                programs.script(impl, "Receiver3.py", "{listen_port} {output}"),
                LINK,
                size=size,
                backend=backend,
            ),
            q3_cells,
            q3_model,
        ),
        "q5": sweep(
            "q5",
            TransferRun(
                programs.script(
                    impl, "Sender4.py", "{receiver_host} {receiver_port} {file} {timeout} {window}", "comn"
                ),
                programs.script(impl, "Receiver4.py", "{listen_port} {output} {window}"),
                LINK,
                size=size,
                backend=backend,
            ),
            q5_cells,
            q5_model,
        ),
        "q7": sweep("q7", IperfRun(LINK, size=size, tcp_cc=tcp_cc), q7_cells, q7_pftk),
        # Mathis and PFTK model Reno: Reno measured beside them, whatever "today's TCP" is
        **(
            {}
            if (tcp_cc or tcp.DEFAULT) == "reno"
            else {"q7reno": sweep("q7reno", IperfRun(LINK, size=size, tcp_cc="reno"), q7_cells, q7_pftk)}
        ),
    }


def build(
    impl: str | None = REFERENCE,
    plan: Plan = FULL,
    backend: str = "auto",
    runs: int | None = None,
    until_margin: float | None = None,
    cap: int = 30,
    seed: int = 1,
    questions: tuple = QUESTIONS,
    tcp_cc: str | None = None,
) -> Sheet:
    """The sheet over the programs in `impl` (None: the reference's, reference/comn)."""
    impl = impl or REFERENCE
    runs = runs or plan.runs
    size = plan.size
    missing = {q: files for q, files in missing_by_question(impl).items() if files}
    measured = sweeps(impl, plan, backend, runs, until_margin, cap, seed, tcp_cc)
    q1, q3, q5, q7 = (measured[q].sweep for q in ("q1", "q3", "q5", "q7"))
    q7_sweeps = [q7] + ([measured["q7reno"].sweep] if "q7reno" in measured else [])
    q1_cells, q3_cells, q5_cells, q7_cells = (measured[q].cells for q in ("q1", "q3", "q5", "q7"))

    def unavailable(q: str) -> str | None:
        if q not in questions:
            return "not selected (--questions)"
        if q in missing:
            return f"{impl} lacks {', '.join(missing[q])}"
        if q == "q7":
            why = iperf_unavailable()
            if why or backend == "local":
                return why or "iperf3 needs the netns backend (TCP through the engine in TUN mode)"
        return None

    sections = [
        Section(
            "Question 1 – stop-and-wait: retransmissions and throughput against the timeout",
            [q1],
            q1_blocks(q1_cells, size),
            unavailable("q1"),
        ),
        Section(
            "Question 2 – discussion of question 1", [], [Prompt(Q2, lambda r: q2_answer(r, size))], unavailable("q1")
        ),
        Section(
            "Question 3 – Go-Back-N: throughput against window and delay",
            [q3],
            q3_blocks(q3_cells, plan),
            unavailable("q3"),
        ),
        Section(
            "Question 4 – discussion of question 3", [], [Prompt(Q4, lambda r: q4_answer(r, plan))], unavailable("q3")
        ),
        Section("Question 5 – Selective Repeat at 25 ms", [q5], q5_blocks(q5_cells), unavailable("q5")),
        Section(
            "Question 6 – Selective Repeat against Go-Back-N",
            [],
            [Prompt(Q6, lambda r: q6_answer(r, plan))],
            unavailable("q5") or unavailable("q3"),
        ),
        Section("Question 7 – TCP (iperf3) at 25 ms", q7_sweeps, q7_blocks(q7_cells), unavailable("q7")),
        Section(
            "Question 8 – TCP against Go-Back-N and Selective Repeat", [], [Prompt(Q8, q8_answer)], unavailable("q7")
        ),
    ]
    intro = [
        f"Link: `loss {LOSS}% delay <d>ms rate {RATE}` as netem on `lo` (one shared rate queue, loss and "
        f"delay once per direction), emulated by rdtlab's link engine. File: {size} deterministic random "
        f"bytes ({math.ceil(size / 1024)} packets of 1024 bytes). {runs} runs per cell"
        + (
            f", more until the 95% margin of error is under {until_margin:.0%} of the mean (at most {cap})"
            if until_margin
            else ""
        )
        + ".",
        f"Programs: `{impl}`. Timeouts for Go-Back-N and Selective Repeat (the COMN sheet leaves them open): "
        "2·delay + 10 ms, the idle round trip plus 10 ms: "
        + ", ".join(f"{gbn_timeout_ms(d)} ms at {d} ms" for d in plan.q3_delays)
        + ".",
        "Throughput is goodput measured on the wire by the engine (file bytes / 1024 / time from the first "
        "data packet to the last packet out), in KB/s (KiB/s); ±95% is the half-width of the 95% confidence "
        "interval of the mean (Student t). Model errors are (model − measured) / measured.",
    ]
    return Sheet("comn", "COMN Assignment 2 results sheet (rdtlab)", intro, sections)


def _with_limit(run_one, limit):
    """Give a TransferRun/IperfRun a time limit per cell (a copy; they are frozen)."""
    from dataclasses import replace

    return replace(run_one, time_limit=limit)


# ---- question 1 and 2 ----------------------------------------------------------------


def q1_blocks(cell_list: list[dict], size: int) -> list:
    def table(r: Results):
        return comparison_table(
            r.rows("q1"),
            cell_list,
            [("Timeout (ms)", "timeout")],
            [
                Metric(
                    "Retransmissions (wire)",
                    "retransmissions",
                    0,
                    [("retx model", lambda c: q1_model(c, size).retransmissions)],
                ),
                Metric("printed by Sender2", "printed_retransmissions", 0),
                Metric(
                    "Throughput (KB/s)",
                    "goodput_kBps",
                    1,
                    [("KB/s model", lambda c: q1_model(c, size).throughput_kBps)],
                ),
                Metric("printed KB/s", "printed_throughput_kBps", 1),
            ],
        )

    def plot(r: Results, ax):
        s_tp = cells(r.rows("q1"), ["timeout"], "goodput_kBps")
        s_rx = cells(r.rows("q1"), ["timeout"], "retransmissions")
        ts = [c["timeout"] for c in cell_list]
        errorbar(ax, ts, s_tp, [(t,) for t in ts], "C0", "throughput (measured)")
        ax.plot(ts, [q1_model(c, size).throughput_kBps for c in cell_list], "C0--", label="throughput (model)")
        ax.set_xlabel("retransmission timeout (ms)")
        ax.set_ylabel("throughput (KB/s)")
        ax2 = ax.twinx()
        errorbar(ax2, ts, s_rx, [(t,) for t in ts], "C3", "retransmissions (measured)")
        ax2.plot(ts, [q1_model(c, size).retransmissions for c in cell_list], "C3--", label="retransmissions (model)")
        ax2.set_ylabel("retransmissions")
        lines = ax.get_legend_handles_labels()
        lines2 = ax2.get_legend_handles_labels()
        ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize=8, loc="upper right")
        ax.set_title("Stop-and-wait, 5 ms, 5% loss, 10 Mbit/s")

    return [
        Table(
            "Q1: stop-and-wait, 5 ms delay, 5% loss",
            table,
            "Model: an attempt succeeds when neither the packet nor its ACK is lost (q = 0.95²); a failed "
            "attempt costs the timeout; a timeout below the round trip sends ceil(RTT/timeout) − 1 extra copies "
            "(harness/models/stop_and_wait.py). 'wire' counts payloads seen twice on the link "
            "before the file had all arrived; 'printed' is what Sender2 printed (it also counts resends of the "
            "last message whose ACK was lost).",
        ),
        Plot("Q1: throughput and retransmissions against the timeout", "q1.png", plot),
    ]


Q2 = (
    "Question 2 – Discuss the impact of retransmission timeout value on the number of retransmissions "
    "and throughput. Indicate the optimal timeout value from a communication efficiency viewpoint."
)


def q2_answer(r: Results, size: int) -> str:
    tp = cells(r.rows("q1"), ["timeout"], "goodput_kBps")
    rx = cells(r.rows("q1"), ["timeout"], "retransmissions")
    if not tp:
        return "(not measured)"
    cell = {"delay": 5, "loss": LOSS}
    link = link_model(cell)
    floor = q1_model({**cell, "timeout": 1000}, size).retransmissions
    timeouts = sorted(t for (t,) in tp)
    premature = [t for t in timeouts if t < link.rtt * 1000]
    sane = [t for t in timeouts if mean_of(rx, (t,)) <= 1.25 * floor and math.isfinite(mean_of(tp, (t,)))]
    best = max(sane, key=lambda t: mean_of(tp, (t,))) if sane else None

    def throughput(t: int) -> float:
        return mean_of(tp, (t,)) if math.isfinite(mean_of(tp, (t,))) else -1.0

    above = [t for t in timeouts if t not in premature] or timeouts
    fastest_overall = max(timeouts, key=throughput)
    parts = [
        f"The idle round trip is {link.rtt * 1000:.1f} ms: 2 × 5 ms of delay plus serialising a 1069-byte "
        f"packet ({link.t_data * 1000:.2f} ms) and a 44-byte ACK at 10 Mbit/s. Loss alone costs about "
        f"{floor:.0f} retransmissions for {link.packets(size)} packets (1024 · (1 − q)/q, q = 0.95²).",
    ]
    if premature:
        parts.append(
            "With timeouts below the round trip (" + ", ".join(f"{t} ms" for t in premature) + ") the sender "
            "resends before any ACK can be back: "
            + ", ".join(
                f"{fmt(mean_of(rx, (t,)), 0)} retransmissions at {t} ms (model "
                f"{q1_model({**cell, 'timeout': t}, size).retransmissions:.0f})"
                for t in premature
            )
            + "."
        )
    longest = timeouts[-1]
    ms = lambda k: f"{k[0]} ms"  # noqa: E731
    parts.append(
        f"Above the round trip the retransmissions stay near the loss floor, while each loss costs a whole "
        f"timeout, so throughput should fall as the timeout grows (model "
        f"{q1_model({**cell, 'timeout': above[0]}, size).throughput_kBps:.1f} KB/s at {above[0]} ms, "
        f"{q1_model({**cell, 'timeout': longest}, size).throughput_kBps:.1f} at {longest} ms). Measured: "
        + (
            compare(f"{above[0]} ms", tp[(above[0],)], f"{longest} ms", tp[(longest,)], "KB/s")
            if above[0] != longest and (above[0],) in tp
            else f"{fmt(mean_of(tp, (longest,)))} KB/s at {longest} ms"
        )
        + "."
    )
    if fastest_overall in premature:
        parts.append(
            best_sentence("The highest throughput of all", tp, ms, "KB/s")
            + f", bought with {fmt(mean_of(rx, (fastest_overall,)), 0)} retransmissions at {fastest_overall} ms: on "
            "a link nobody else uses, resending early only spends capacity that would have gone unused."
        )
    if best is not None:
        parts.append(
            best_sentence(
                "Optimal timeout from these measurements (the highest throughput among timeouts "
                "whose retransmissions stay within 25% of the loss floor)",
                {(t,): tp[(t,)] for t in sane},
                ms,
                "KB/s",
            )
            + f", with {fmt(mean_of(rx, (best,)), 0)} retransmissions. Rule of thumb: a little above one RTT, well "
            "below 2–3 RTTs."
        )
    return "\n\n".join(parts)


# ---- question 3 and 4 ----------------------------------------------------------------


def q3_blocks(cell_list: list[dict], plan: Plan) -> list:
    def table(r: Results):
        return comparison_table(
            r.rows("q3"),
            cell_list,
            [("Delay (ms)", "delay"), ("Timeout (ms)", "timeout"), ("Window", "window")],
            [Metric("Throughput (KB/s)", "goodput_kBps", 1, [("GBN model", q3_model), ("textbook", q3_textbook)])],
        )

    def wide(r: Results):
        s = cells(r.rows("q3"), ["delay", "window"], "goodput_kBps")
        rows = []
        for w in plan.q3_windows:
            row = {"Window": w}
            for d in plan.q3_delays:
                summary = s.get((d, w))
                row[f"Delay = {d} ms"] = (
                    "FAILED" if summary and summary["status"] == "failed" else fmt(mean_of(s, (d, w)))
                )
            rows.append(row)
        import pandas as pd

        return pd.DataFrame(rows)

    def plot(r: Results, ax):
        s = cells(r.rows("q3"), ["delay", "window"], "goodput_kBps")
        ws = list(plan.q3_windows)
        for i, d in enumerate(plan.q3_delays):
            colour = f"C{i}"
            errorbar(ax, ws, s, [(d, w) for w in ws], colour, f"{d} ms measured")
            model_cells = [{"delay": d, "loss": LOSS, "timeout": gbn_timeout_ms(d), "window": w} for w in ws]
            ax.plot(ws, [q3_model(c) for c in model_cells], colour + "--", lw=1.2, label=f"{d} ms model")
            ax.plot(ws, [q3_textbook(c) for c in model_cells], colour + ":", lw=1, label=f"{d} ms textbook")
        _window_axes(ax, ws, "window size (packets)", "Go-Back-N, 5% loss, 10 Mbit/s")
        ax.legend(fontsize=7, ncol=3)

    return [
        Table("Q3: average throughput (KB/s), as on the COMN sheet", wide),
        Plot(
            "Q3: throughput against window size, one line per delay (models dashed, textbook dotted)",
            "q3.png",
            plot,
            "Dashed: harness/models gbn_timeout (a loss costs the timeout plus the discarded window; the round "
            "trip grows with the shared queue). Dotted: the textbook GBN efficiency, which ignores both.",
        ),
        Table(
            "Q3 in detail: every cell with its models",
            table,
            "The textbook model (Stallings: U = (1−P)/(1+2aP) or W(1−P)/((1+2a)(1−P+WP))) assumes a loss is "
            "noticed one round trip later and that ACKs cost nothing. Here a loss costs a timeout and, at large "
            "windows, ACKs wait behind the data in the shared queue, so it is far too high there.",
        ),
    ]


Q4 = "Question 4 – Discuss your results from Question 3."


def q4_answer(r: Results, plan: Plan) -> str:
    s = cells(r.rows("q3"), ["delay", "window"], "goodput_kBps")
    if not s:
        return "(not measured)"
    parts = []
    peaks = []
    for d in plan.q3_delays:
        measured = {w: mean_of(s, (d, w)) for w in plan.q3_windows if math.isfinite(mean_of(s, (d, w)))}
        if not measured:
            continue
        at_d = {(w,): s[(d, w)] for w in measured}
        peaks.append(
            best_sentence(
                f"at {d} ms (timeout {gbn_timeout_ms(d)} ms) the best window", at_d, lambda k: f"{k[0]}", "KB/s"
            )
        )
    parts.append(
        "Measured: " + "; ".join(peaks) + ". Throughput first grows with the window, because more "
        "packets share each round trip, until the window covers the bandwidth-delay product; the "
        "longer the delay, the larger that window."
    )
    small, big = plan.q3_windows[0], plan.q3_windows[-1]
    d0 = plan.q3_delays[0]
    ratios = []
    for d in plan.q3_delays[1:]:
        for w in (small, big):
            if (d0, w) in s and (d, w) in s:
                ratios.append(
                    f"at window {w}, " + compare(f"{d0} ms", s[(d0, w)], f"{d} ms", s[(d, w)], "KB/s", ratio=True)
                )
    if ratios:
        parts.append(
            "Delay should hurt small windows most: with small windows the sender waits for the round "
            "trip; with large ones the transmission time of the window dominates. Measured: " + "; ".join(ratios) + "."
        )
    collapses = []
    for d in plan.q3_delays:
        measured = [(w, mean_of(s, (d, w))) for w in plan.q3_windows if math.isfinite(mean_of(s, (d, w)))]
        if not measured:
            continue
        peak_w, peak = max(measured, key=lambda wm: wm[1])
        # a collapse only where the runs tell it from the peak
        drop = next(
            ((w, m) for w, m in measured if w > peak_w and m < 0.6 * peak and order(s[(d, w)], s[(d, peak_w)]) < 0),
            None,
        )
        if drop:
            queue_ms = drop[0] * _per_packet_ms(d)
            collapses.append(
                f"at {d} ms, window {drop[0]}: a full window queues for about {queue_ms:.0f} ms, "
                f"{queue_ms / gbn_timeout_ms(d):.1f}× the {gbn_timeout_ms(d)} ms timeout, and throughput "
                f"drops to {fmt(drop[1])} KB/s from {fmt(peak)} at window {peak_w}"
            )
    parts.append(
        f"Large windows lose throughput. On `lo` data and ACKs share one 10 Mbit/s queue, so with W packets in "
        f"flight the round trip grows to about W × (t_data + t_ack) = W × {_per_packet_ms(d0):.2f} ms once that "
        "exceeds the idle round trip. When it is well above the timeout, packets time out while their ACKs are "
        "still waiting in the queue, and every timeout pushes a whole window more into that queue (Go-Back-N "
        "resends everything after the oldest unacknowledged packet): the link carries duplicates. "
        + ("Measured: " + "; ".join(collapses) + ". " if collapses else "")
        + "Every loss also makes the receiver discard the rest of the window, which the sender then sends "
        "again, so the cost of a loss grows with the window."
    )
    cell_big = {"delay": d0, "loss": LOSS, "timeout": gbn_timeout_ms(d0), "window": big}
    meas_big = mean_of(s, (d0, big))
    parts.append(
        f"Models: at window {big} and {d0} ms the textbook GBN efficiency predicts {q3_textbook(cell_big):.0f} KB/s, "
        f"{_times(q3_textbook(cell_big), meas_big)} the measured {fmt(meas_big)}; the timeout-and-shared-queue "
        f"model (harness/models gbn_timeout, which charges each loss a timeout plus the discarded window) predicts "
        f"{q3_model(cell_big):.0f} KB/s. The textbook model is close only while the window is small; neither "
        "captures the timeout cascade: see each cell's model errors in the detailed table of question 3."
    )
    return "\n\n".join(parts)


def _per_packet_ms(delay_ms: float) -> float:
    """Shared-queue time of one data packet and its ACK."""
    link = link_model({"delay": delay_ms, "loss": LOSS})
    return (link.t_data + link.t_ack) * 1000


def _times(model: float, measured: float) -> str:
    if not (math.isfinite(measured) and measured > 0):
        return "against"
    return f"{model / measured:.1f}×"


# ---- question 5 and 6 ----------------------------------------------------------------


def q5_blocks(cell_list: list[dict]) -> list:
    def table(r: Results):
        return comparison_table(
            r.rows("q5"),
            cell_list,
            [("Window", "window")],
            [Metric("Throughput (KB/s)", "goodput_kBps", 1, [("SR model", q5_model), ("textbook", q5_textbook)])],
        )

    return [
        Table(
            "Q5: Selective Repeat, 25 ms delay, timeout 60 ms",
            table,
            "SR model: rounds of W packets, each lasting one round trip plus one timeout per failed "
            "attempt of its unluckiest packet (harness/models sr_timeout). Textbook: U = W(1−P)/(1+2a), at "
            "most 1−P, with P the loss of a packet or its ACK (COMN ACKs acknowledge one packet).",
        )
    ]


Q6 = (
    "Question 6 – Compare the throughput obtained when using Selective Repeat with the corresponding results "
    "you got from the Go Back N experiment and explain the reasons behind any differences."
)


def q6_answer(r: Results, plan: Plan) -> str:
    sr = cells(r.rows("q5"), ["window"], "goodput_kBps")
    gbn = cells(r.rows("q3"), ["delay", "window"], "goodput_kBps")
    if not sr or not gbn:
        return "(not measured)"
    pairs, ahead = [], []
    for w in plan.q5_windows:
        if (w,) in sr and (25, w) in gbn:
            pairs.append(f"window {w}: " + compare("SR", sr[(w,)], "GBN", gbn[(25, w)], "KB/s", ratio=True))
            if order(sr[(w,)], gbn[(25, w)]) > 0:
                ahead.append(w)
    return "\n\n".join(
        [
            "Same link (25 ms, 5% loss), same file, same timeout (60 ms), 95% intervals compared: "
            + "; ".join(pairs)
            + ".",
            "With window 1 the two protocols are the same stop-and-wait and should measure alike. "
            + (
                f"SR is ahead where the runs can tell (window {', '.join(map(str, ahead))}), as expected: a loss"
                if ahead
                else "The runs here do not show SR ahead at any window; what would make it so: a loss"
            )
            + " makes GBN resend the lost packet and everything sent after it, which the receiver "
            "had discarded, while SR resends only the packets (or ACKs) that were lost, and its receiver keeps "
            "what arrives out of order. SR also sends fewer bursts of a whole window, so its ACKs queue behind less "
            "data. In return each SR ACK covers one packet, so a lost ACK costs a retransmission that GBN's "
            "cumulative ACKs avoid.",
        ]
    )


# ---- question 7 and 8 ----------------------------------------------------------------


def ran(frame) -> str | None:
    """The congestion control the rows' connections ran (read back: `tcp_cc`), e.g.
    "cubic"; several joined with "/" if they differ; None without rows."""
    if frame is None or frame.empty or "tcp_cc" not in frame:
        return None
    seen = sorted(set(frame["tcp_cc"].dropna()))
    return "/".join(seen) or None


def _reno_frame(r: Results):
    """Reno's rows: q7reno, or q7 itself when the sheet's TCP is Reno (--tcp-cc reno)."""
    return r.rows("q7reno") if "q7reno" in r.frames else (r.rows("q7") if ran(r.rows("q7")) == "reno" else None)


def q7_blocks(cell_list: list[dict]) -> list:
    def table(r: Results):
        today, reno = r.rows("q7"), _reno_frame(r)
        name = ran(today) or "default"
        series = [(f"{name} (today's TCP)", cells(today, ["window_kB"], "goodput_kBps"))]
        if reno is not None and reno is not today:
            series.append(("reno", cells(reno, ["window_kB"], "goodput_kBps")))
        retx = cells(today, ["window_kB"], "retransmissions")
        rows = []
        for cell in cell_list:
            key = (cell["window_kB"],)
            row = {"Window -w (KB)": cell["window_kB"]}
            for label, summary in series:
                s = summary.get(key)
                if s is None:
                    row[f"{label} KB/s"], row[f"{label} ±95%"] = "not measured", DASH
                elif s["status"] == "failed":
                    row[f"{label} KB/s"], row[f"{label} ±95%"] = f"FAILED: {(s['error'] or '')[:90]}", DASH
                else:
                    row[f"{label} KB/s"], row[f"{label} ±95%"] = fmt(s["mean"]), fmt(s["margin"])
            reno_mean = mean_of(series[-1][1], key)  # the models are compared with Reno
            for header, model in (("PFTK", q7_pftk), ("Mathis", q7_mathis)):
                row[header] = fmt(model(cell))
                row[f"{header} vs {series[-1][0].split()[0]}"] = fmt_error(model(cell), reno_mean)
            row[f"{name} retransmits"] = fmt(mean_of(retx, key), 0)
            row["runs ok"] = " / ".join(runs_text(summary.get(key)) for _, summary in series)
            rows.append(row)
        import pandas as pd

        return pd.DataFrame(rows)

    def plot(r: Results, ax):
        today = ran(r.rows("q7")) or "default"
        series = [
            ("q3", ["delay", "window"], lambda w: (25, w), "Go-Back-N", r.rows("q3")),
            ("q5", ["window"], lambda w: (w,), "Selective Repeat", r.rows("q5")),
            ("q7", ["window_kB"], lambda w: (w,), f"TCP {today} (iperf3)", r.rows("q7")),
        ]
        reno = _reno_frame(r)
        if reno is not None and reno is not r.rows("q7"):
            series.append(("q7reno", ["window_kB"], lambda w: (w,), "TCP reno (iperf3)", reno))
        for i, (name, params, key, label, frame) in enumerate(series):
            summary = cells(frame, params, "goodput_kBps")
            ws = sorted({k[-1] for k in summary})
            errorbar(ax, ws, summary, [key(w) for w in ws], f"C{i}", label)
        ws = [2**k for k in range(0, 9)]
        ax.plot(ws, [q7_mathis({"delay": 25, "loss": LOSS})] * len(ws), "k:", lw=1, label="Mathis (a Reno model)")
        _window_axes(ax, ws, "window (packets of 1 KB; KB for TCP)", "25 ms, 5% loss, 10 Mbit/s")
        ax.legend(fontsize=8)

    return [
        Plot("Q5–Q8: Go-Back-N, Selective Repeat and TCP at 25 ms", "q7.png", plot),
        Table(
            "Q7: iperf3 TCP, 25 ms delay, 5% loss, MSS 1 KB",
            table,
            "iperf3 -c … -M 1024 -w <window> -n <file size> -J between two network namespaces joined by the "
            "engine; receiver-side throughput. Today's TCP is the congestion control the sheet pins "
            f"(`--tcp-cc`, default {tcp.DEFAULT}: Linux's default), Reno the one the models describe, each "
            "named as read back from its connections. PFTK (Padhye et al. 1998) with Wmax = window / MSS, "
            f"b = 1, T0 = max({TCP_MIN_RTO_S * 1000:.0f} ms, 2·RTT) + RTT; Mathis: 1.22·MSS/(RTT·√p), "
            "independent of the window; their errors are against the Reno measurement.",
        ),
    ]


Q8 = (
    "Question 8 – Compare the throughput obtained when using Selective Repeat and Go Back N with the "
    "corresponding results you got from the iperf experiment and explain the reasons behind any differences."
)

# What an algorithm does after a loss, said only of the algorithm that ran
AFTER_LOSS = {
    "reno": "Reno halves its window at each loss and grows it by one segment per round trip",
    "cubic": "CUBIC backs off to 0.7 of its window at a loss and regrows it as a cubic function of the time "
    "since, fast at first",
    "bbr": "BBR does not back off on loss at all: it paces at its estimate of the bottleneck's rate and sizes "
    "its window from the round trip, so random loss of this kind barely slows it",
}


def q8_answer(r: Results) -> str:
    today_frame = r.rows("q7")
    tcp_s = cells(today_frame, ["window_kB"], "goodput_kBps")
    if not tcp_s:
        return "(not measured)"
    name = ran(today_frame) or "TCP"
    reno_frame = _reno_frame(r)
    reno_s = cells(reno_frame, ["window_kB"], "goodput_kBps") if reno_frame is not None else {}
    sr = cells(r.rows("q5"), ["window"], "goodput_kBps")
    gbn = cells(r.rows("q3"), ["delay", "window"], "goodput_kBps")
    cell = {"delay": 25, "loss": LOSS}
    rtt = tcp_rtt(cell)
    windows = sorted(w for (w,) in tcp_s)
    compare_lines = []
    for w in windows:
        parts = []
        if (w,) in sr:
            parts.append(compare(f"TCP {name}", tcp_s[(w,)], "SR", sr[(w,)], "KB/s"))
        if (25, w) in gbn:
            parts.append(compare(f"TCP {name}", tcp_s[(w,)], "GBN", gbn[(25, w)], "KB/s"))
        if parts:
            compare_lines.append(f"{w} KB: " + "; ".join(parts))
    out = []
    if compare_lines:
        out.append("At equal window (1 KB = one packet), 95% intervals compared: " + ". ".join(compare_lines) + ".")
    mathis_kBps = q7_mathis(cell)
    models = (
        f"Mathis' formula 1.22·MSS/(RTT·√p), with RTT {rtt * 1000:.1f} ms and p = 0.05, gives "
        f"{mathis_kBps:.0f} KB/s whatever the window, and PFTK adds timeouts and the window's cap; both "
        "describe Reno (halve the window at each loss, one loss repaired per round trip)."
    )
    if reno_s:
        top = max(windows, key=lambda w: mean_of(reno_s, (w,)) if (w,) in reno_s else -1.0)
        if (top,) in reno_s:
            verdict = compare(f"Reno at -w {top} KB", reno_s[(top,)], "Mathis", mathis_kBps, "KB/s", ratio=True)
            pftk_v = compare(
                f"Reno at -w {top} KB", reno_s[(top,)], "PFTK", q7_pftk({**cell, "window_kB": top}), "KB/s", ratio=True
            )
            models += (
                f" Measured with Reno itself: {verdict}; {pftk_v}. PFTK counts the timeouts Mathis leaves out "
                "(Linux's RTO is at least 200 ms), frequent at 5% loss in each direction."
            )
    out.append(models)
    best_text = best_sentence(f"TCP {name}'s best window here", tcp_s, lambda k: f"-w {k[0]} KB", "KB/s")
    today = [best_text + "."]
    if name != "reno" and reno_s:
        shared = [w for w in windows if (w,) in reno_s]
        if shared:
            big = shared[-1]
            verdict = compare(f"{name} at -w {big} KB", tcp_s[(big,)], "Reno", reno_s[(big,)], "KB/s", ratio=True)
            today.append(f"Today's TCP ({name}) against Reno: {verdict}.")
            o = order(tcp_s[(big,)], reno_s[(big,)])
            why = AFTER_LOSS.get(name)
            if why and o > 0:
                today.append(
                    f"That follows from how it reacts to loss: {why}; Reno halves and grows one segment per round trip."
                )
            elif why and o == 0:
                today.append(
                    f"{why}; at 5% loss in each direction a window rarely grows far between losses, "
                    "and both spend their time in loss recovery and timeouts, so the difference from "
                    "Reno is smaller than these runs can resolve."
                )
            elif why:
                today.append(f"{why}; here that did not pay: at this loss rate its recovery, not its growth, decides.")
    window_bound = {w: pipelined_no_loss(Link(0.025), w) for w in windows}
    today.append(
        "A window of w KB also caps throughput at w/RTT ("
        + ", ".join(f"{fmt(window_bound[w], 0)} at {w} KB" for w in windows[:3])
        + ", …), which is why the "
        "small windows grow almost linearly."
    )
    out.append(" ".join(today))
    out.append(
        "GBN and SR keep their whole window in flight regardless of loss: they do no congestion control, which "
        "on this link (only our transfer on it) buys throughput, but on a shared network it would take capacity "
        "from others and could collapse under congestion. TCP's retransmission timeout is also at least 200 ms "
        "(Linux), far above our 60 ms timeout, so the losses it cannot repair by fast retransmit cost more."
    )
    return "\n\n".join(out)


def _window_axes(ax, windows, xlabel: str, title: str) -> None:
    """Throughput against window, as the COMN graph: log2 windows, log throughput."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(windows, [str(w) for w in windows])
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("average throughput (KB/s)")
    ax.set_title(title)


__all__ = ["build", "FULL", "QUICK", "Plan", "REFERENCE", "missing_programs"]
