"""The GBN-versus-TCP results sheet (seed 001): 20 objects of varying sizes downloaded
with Go-Back-N over UDP and with kernel TCP, under loss, corruption, duplication and
100 ms of delay (constant, uniform and normal jitter); average, min and max of the
total download time per setting, as the report plots them.

Link: the report applied netem rules with no rate and no base delay (its 0% runs take
seconds), so each cell is netem's rule alone, on both directions (`tc qdisc ... netem
loss 10%` on `lo` acts on data and ACKs alike), emulated by the link engine between
two network namespaces (netns backend: TCP needs it). Objects: 20 sizes drawn
log-uniformly from 1,000 to 128,000 bytes with seed 1 (530,048 bytes in all; the report
does not give its sizes). Each object is one transfer, verified byte for byte; its time
is the engine's (first packet in to last packet out), and a run's total is the sum.

Programs:
- GBN: the reference Go-Back-N (reference/core/gbn.py) in the extended wire format,
  whose CRC32 catches a corrupted packet (the COMN format has no checksum, and under
  rdtlab's TUN rule the damage reaches the application); window 25 and timeout 0.7 s,
  the report's choice, and the best window/timeout of a small sweep at 10% loss.
- TCP: kernel TCP with `python3 -m reference.tcpfile` (connect, send, close; the
  receiver writes the file): no application-level ACKs or sleeps. Its corruption cells
  use the engine's netem rule (`tun_corruption: netem`): the bit flips and the checksum
  stays wrong, so the receiving kernel drops the segment and TCP retransmits, as over
  netem; with the default rule TCP would deliver the damage to the file.
A student's directory (`--impl DIR`) holds the COMN part-3 pair, run for both GBN rows:
    Sender3.py <host> <port> <file> <timeout ms> <window>
    Receiver3.py <port> <file>
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from harness import backends, time_limits
from harness.experiments.objects import ObjectsRun, object_sizes
from harness.experiments.sweep import Sweep, grid
from harness.experiments.transfers import TransferRun
from harness.sheets import programs
from harness.sheets.plots import errorbar, legend
from harness.sheets.sheet import Deferred, Plot, Prompt, Results, Section, Sheet, Table
from harness.sheets.tables import Reported, cells, fmt, mean_of, minmax_table, reported_table
from harness.statistics import compare, order

SMALLEST, OBJECTS_SEED = 1_000, 1
REPORT_WINDOW, REPORT_TIMEOUT_MS = 25, 700
TUNE_LOSS = 10  # % each way: the report tuned its window and timeout under loss
PAYLOAD = 1024
FILES = ("Sender3.py", "Receiver3.py")
NO_PROGRESS_S = 60.0  # GBN under jitter resends whole windows for a long while
NONE = ""  # no netem rule
DELAYS = {
    "delay 100ms": "constant",
    "delay 100ms 20ms": "uniform ±20 ms",
    "delay 100ms 20ms distribution normal": "normal σ 20 ms",
}
EXPERIMENTS = {  # name -> (x axis, its settings: (x, netem rule))
    "loss": ("loss each way (%)", [(0, NONE), (5, "loss 5%"), (10, "loss 10%"), (15, "loss 15%")]),
    "corruption": ("corruption each way (%)", [(0, NONE), (5, "corrupt 5%"), (10, "corrupt 10%")]),
    "duplication": ("duplication each way (%)", [(0, NONE), (5, "duplicate 5%"), (10, "duplicate 10%")]),
    "delay": ("100 ms each way", [(0, NONE)] + [(k, rule) for k, rule in enumerate(DELAYS, start=1)]),
}
# The report's numbers (s): average total download time, from its text.
REPORT = {
    ("gbn", "loss 10%"): 268,
    ("tcp", "loss 10%"): 67,
    ("gbn", "loss 15%"): 598,
    ("tcp", "loss 15%"): 271,
    ("gbn", "corrupt 10%"): 95,
    ("tcp", "corrupt 10%"): 52,
    ("gbn", NONE): 1.75,
    ("tcp", NONE): 41,
    ("gbn", "duplicate 5%"): 1.76,
    ("gbn", "duplicate 10%"): 2.49,
    ("tcp", "duplicate 5%"): 41,
    ("tcp", "duplicate 10%"): 41,
}


@dataclass(frozen=True)
class Plan:
    size: int  # the largest object's bound (bytes): --size sets it
    objects: int  # how many of the 20 objects, in the order drawn
    runs: int  # downloads per cell
    rules: tuple  # netem rules measured (the cells)
    tune_windows: tuple
    tune_timeouts: tuple  # ms: from 300, above the 200 ms round trip of the delay cells
    tune_runs: int
    tune_size: int = 100_000  # the tuning file (bytes)


ALL_RULES = tuple(dict.fromkeys(rule for _, settings in EXPERIMENTS.values() for _, rule in settings))
FULL = Plan(128_000, 20, 3, ALL_RULES, (5, 10, 25, 50), (300, 500, 700), 2)
QUICK = Plan(
    128_000,
    10,
    2,
    (NONE, "loss 10%", "loss 15%", "corrupt 10%", "duplicate 10%", "delay 100ms 20ms distribution normal"),
    (10, 25, 50),
    (300, 700),
    1,
)


def sizes(plan: Plan) -> tuple[int, ...]:
    return object_sizes(20, SMALLEST, max(plan.size, SMALLEST), OBJECTS_SEED)[: plan.objects]


def missing_programs(impl: str | None) -> list[str]:
    return programs.missing(impl, FILES)


def _gbn(impl: str | None):
    if impl is None:
        return (
            programs.reference(
                "send",
                "gbn",
                "--format ext --host {receiver_host} --port {receiver_port} "
                "--file {file} --window {window} --timeout {timeout}",
            ),
            programs.reference("recv", "gbn", "--format ext --port {listen_port} --file {output} --window {window}"),
        )
    return (
        programs.script(impl, "Sender3.py", "{receiver_host} {receiver_port} {file} {timeout} {window}"),
        programs.script(impl, "Receiver3.py", "{listen_port} {output}"),
    )


TCP = programs.kernel_tcp()


def packets(size: int) -> int:
    return max(1, math.ceil(size / PAYLOAD))


def object_limit(cell: dict) -> float:
    """Seconds one object may take: under jitter GBN moves ~2 packets per timeout, so
    1.5 s a packet (at a 700 ms timeout) is a worst case."""
    return time_limits.WORST_CASE(1.5 * packets(cell["size"]) * max(1.0, cell.get("timeout", 700) / 700))


def expected_s(rule: str, total: int, timeout_ms: float) -> float:
    """A rough guess of one download's seconds, to start the slow cells first."""
    n, t = packets(total), timeout_ms / 1000
    if "20ms" in rule:
        return n * (t + 0.25) / 2  # reordering: a timeout per ~2 packets in order
    m = re.search(r"(?:loss|corrupt) ([\d.]+)%", rule)
    p = float(m.group(1)) / 100 if m else 0.0
    return n * p * t * 1.2 + (n / 125 if "delay" in rule else 0) + 20


# ---- the sheet ---------------------------------------------------------------------


def build(
    impl: str | None = None,
    plan: Plan = FULL,
    backend: str = "auto",
    runs: int | None = None,
    until_margin: float | None = None,
    cap: int = 30,
    seed: int = 1,
    tcp_cc: str | None = None,
) -> Sheet:
    runs = runs or plan.runs
    objects = sizes(plan)
    total = sum(objects)
    missing = missing_programs(impl)
    unavailable = f"{impl} lacks {', '.join(missing)}" if missing else None
    concrete = backends.resolve(backend)
    no_tcp = (
        None
        if concrete == "netns"
        else f"kernel TCP runs between network namespaces: it needs the netns backend, and this run uses {concrete}"
    )
    cell_list = [{"netem": rule} for rule in plan.rules]

    def transfer(programs_, fixed: dict, corruption: str = "repair") -> TransferRun:
        return TransferRun(
            *programs_,
            "{netem}",
            shared_queue=False,
            backend=concrete,
            time_limit=object_limit,
            fixed=fixed,
            no_progress=NO_PROGRESS_S,
            tun_corruption=corruption,
            tcp_cc=tcp_cc,
        )

    def downloads(name: str, run_one, timeout_ms: float, cells_: list[dict]) -> Sweep:
        return Sweep(
            name,
            ObjectsRun(run_one, objects),
            cells_,
            runs=runs,
            until_margin=until_margin,
            cap=cap,
            seed=seed,
            metric="total_s",
            load=lambda c: 0.1,
            cost=lambda c: expected_s(c["netem"], total, c.get("timeout", timeout_ms)),
        )

    report_fixed = {"window": REPORT_WINDOW, "timeout": REPORT_TIMEOUT_MS}
    gbn = downloads("gbn", transfer(_gbn(impl), report_fixed), REPORT_TIMEOUT_MS, cell_list)
    tcp = downloads("tcp", transfer(TCP, {}, "netem"), 200, cell_list)
    tune = Sweep(
        "tune",
        transfer(_gbn(impl), {"netem": f"loss {TUNE_LOSS}%", "size": plan.tune_size}),
        grid(window=plan.tune_windows, timeout=plan.tune_timeouts),
        runs=plan.tune_runs,
        seed=seed,
        metric="wire_time_s",
        load=lambda c: 0.1,
        cost=lambda c: expected_s(f"loss {TUNE_LOSS}%", plan.tune_size, c["timeout"]),
    )

    def tuned(frames: dict) -> Sweep:
        best = best_setting(frames.get("tune"))
        if best is None:  # every tuning run failed: the tuned cells say so
            return Sweep(
                "gbn_tuned",
                lambda c, s: {"ok": False, "error": "the tuning sweep measured nothing"},
                [{**c, "window": 0, "timeout": 0} for c in cell_list],
                runs=1,
                seed=seed,
            )
        return downloads(
            "gbn_tuned",
            transfer(_gbn(impl), {}),
            best[1],
            [{**c, "window": best[0], "timeout": best[1]} for c in cell_list],
        )

    who = impl or "the reference GBN (extended format, CRC32)"
    intro = [
        "Link: each setting is one netem rule on both directions (data and ACKs), with no rate and no base "
        "delay, as the report's `tc qdisc ... netem` rules; emulated by rdtlab's link engine between two "
        f"network namespaces (backend {concrete}). Loss {', '.join(r for r in plan.rules if 'loss' in r) or '–'}; "
        "corruption flips one bit of a packet; duplication sends a second copy; delay 100 ms each way, "
        "constant, uniform within ±20 ms (netem's default jitter) or normal with σ 20 ms. The report calls its "
        "uniform case a constant delay, so both are shown. Jitter with no rate reorders packets, as netem does.",
        f"Objects: {len(objects)} sizes drawn log-uniformly from {SMALLEST:,} to {max(plan.size, SMALLEST):,} bytes "
        f"with seed {OBJECTS_SEED} ({total:,} bytes in all): {', '.join(f'{s:,}' for s in objects)}. The report does "
        "not give its sizes. Each object is one transfer, checked byte for byte; its time is the engine's, from "
        "its first packet into the link to its last packet out (TCP: SYN to the last FIN/ACK), and a download's "
        f"total is the sum over the objects. {runs} downloads per cell; the figures show the average with bars "
        "from the fastest to the slowest download, as the report's do.",
        f"GBN: {who}, window {REPORT_WINDOW} and timeout {REPORT_TIMEOUT_MS / 1000:g} s as the report chose, and "
        "the best window and timeout of the sweep in section 1. Its corruption needs a checksum: the extended "
        "format's CRC32 finds the damaged packet and the receiver drops it (the COMN format has none). Under "
        "netem the kernel's UDP checksum would drop it first; rdtlab's TUN rule hands the damage to the "
        "application (harness/linkemu/README.md), so the CRC32 is what catches it here, with the same effect on "
        "the sender: a lost packet.",
        "TCP: the kernel's, through `python3 -m reference.tcpfile` (connect, send, close; no application "
        "ACKs and no sleeps). Its corruption runs use the engine's netem rule (`tun_corruption: netem`): the "
        "checksum stays wrong, the receiving kernel drops the segment and TCP retransmits it, as over netem.",
    ]
    experiments = [name for name, (_, settings) in EXPERIMENTS.items() if any(r in plan.rules for _, r in settings[1:])]
    sections = [
        Section(f"1. GBN's window and timeout at {TUNE_LOSS}% loss", [tune], tune_blocks(plan), unavailable),
        Section(
            "2. GBN downloads",
            [gbn, Deferred("gbn_tuned", ("tune",), tuned)],
            overview_blocks(plan, ("gbn", "gbn_tuned")),
            unavailable,
        ),
        Section("3. TCP downloads", [tcp], overview_blocks(plan, ("tcp",)), no_tcp),
        *[
            Section(f"{k}. {name.capitalize()}", [], experiment_blocks(name, plan))
            for k, name in enumerate(experiments, start=4)
        ],
        Section(f"{4 + len(experiments)}. The report's numbers beside ours", [], report_blocks(plan, total)),
    ]
    return Sheet("gbn-vs-tcp", "Go-Back-N over UDP against TCP under impairments (rdtlab, seed 001)", intro, sections)


def best_setting(frame: pd.DataFrame | None) -> tuple[int, int] | None:
    """(window, timeout ms) with the least mean time in the tuning sweep."""
    s = cells(frame, ["window", "timeout"], "wire_time_s")
    good = {k: v["mean"] for k, v in s.items() if v["n"]}
    return tuple(int(x) for x in min(good, key=good.get)) if good else None


def _series(r: Results) -> list[tuple[str, str, pd.DataFrame]]:
    """(key, label, rows) of the three protocols, in the order the tables show them."""
    tuned = r.rows("gbn_tuned")
    w_t = (
        f" {int(tuned['window'].iloc[0])}/{int(tuned['timeout'].iloc[0]) / 1000:g}s"
        if not tuned.empty and tuned["window"].iloc[0]
        else ""
    )
    return [
        ("gbn", f"GBN {REPORT_WINDOW}/{REPORT_TIMEOUT_MS / 1000:g}s", r.rows("gbn")),
        ("gbn_tuned", "GBN tuned" + w_t, tuned),
        ("tcp", "TCP", r.rows("tcp")),
    ]


# ---- 2, 3. every setting at a glance ------------------------------------------------------


def overview_blocks(plan: Plan, keys: tuple[str, ...]) -> list:
    def table(r: Results) -> pd.DataFrame:
        series = [(label, frame) for key, label, frame in _series(r) if key in keys]
        out = minmax_table(series, [(_label(rule), (rule,)) for rule in plan.rules], ["netem"], "total_s")
        for label, frame in series:
            rx = cells(frame, ["netem"], "retransmissions")
            out[f"{label} retransmissions"] = [fmt(mean_of(rx, (rule,)), 0) for rule in plan.rules]
        return out

    return [
        Table(
            f"Total download time (s) of the {plan.objects} objects, every setting",
            table,
            "Retransmissions: packets whose payload had crossed the link before (the engine counts them "
            "as they enter it), summed over the objects, averaged over the downloads.",
        )
    ]


# ---- 1. tuning -------------------------------------------------------------------------


def tune_blocks(plan: Plan) -> list:
    def table(r: Results) -> pd.DataFrame:
        s = cells(r.rows("tune"), ["window", "timeout"], "wire_time_s")
        best = best_setting(r.rows("tune"))
        rows = []
        for w in plan.tune_windows:
            row = {"window": w}
            for t in plan.tune_timeouts:
                c = s.get((w, t))
                text = (
                    "not measured"
                    if c is None
                    else f"FAILED: {(c['error'] or '')[:60]}"
                    if not c["n"]
                    else fmt(c["mean"], 2) + (" (best)" if best == (w, t) else "")
                )
                row[f"timeout {t / 1000:g} s"] = text
            rows.append(row)
        return pd.DataFrame(rows)

    return [
        Table(
            f"Transfer time (s) of {plan.tune_size:,} bytes at {TUNE_LOSS}% loss each way, by window and timeout",
            table,
            f"{plan.tune_runs} run(s) per cell. Timeouts start at 0.3 s, above the 200 ms round trip "
            "of the delay settings, so the chosen pair serves every setting. With no base delay a lost packet "
            "costs one timeout whatever the window (the window refills at once), so the timeout decides.",
        )
    ]


# ---- 3-6. one experiment each --------------------------------------------------------------


def _label(rule: str) -> str:
    return DELAYS.get(rule, rule or "no impairment")


def experiment_blocks(name: str, plan: Plan) -> list:
    xlabel, settings = EXPERIMENTS[name]
    settings = [(x, rule) for x, rule in settings if rule in plan.rules]

    def table(r: Results) -> pd.DataFrame:
        return minmax_table(
            [(label, frame) for _, label, frame in _series(r)],
            [(_label(rule), (rule,)) for _, rule in settings],
            ["netem"],
            "total_s",
        )

    def plot(r: Results, ax) -> None:
        xs = [x for x, _ in settings]
        apart = 0.12 * (xs[-1] - xs[0] or 1) / max(1, len(xs) - 1)
        for k, (key, label, frame) in enumerate(_series(r)):
            errorbar(
                ax,
                xs,
                cells(frame, ["netem"], "total_s"),
                [(rule,) for _, rule in settings],
                f"C{k}",
                label,
                spread="range",
                shift=(k - 1) * apart,
            )
        if name == "delay":
            ax.set_xticks(xs, [_label(rule).replace("delay 100ms", "100 ms") for _, rule in settings])
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("total download time (s)")
        ax.set_title(f"{name.capitalize()}: {plan.objects} objects, average with min–max")
        legend(ax)

    return [
        Table(
            f"Total download time (s) of the {plan.objects} objects",
            table,
            "avg, min and max over the downloads of the cell; runs ok counts the downloads with every object intact.",
        ),
        Plot(f"{name.capitalize()}: total download time", f"{name}.png", plot),
        Prompt(f"What does {name} do to each protocol?", lambda r: experiment_answer(name, r, settings)),
    ]


def experiment_answer(name: str, r: Results, settings: list) -> str:
    series = {key: cells(frame, ["netem"], "total_s") for key, _, frame in _series(r)}
    if not any(series.values()):
        return "(not measured)"
    measured = "; ".join(
        f"{_label(rule)}: GBN {fmt(mean_of(series['gbn'], (rule,)), 2)} s, tuned {fmt(mean_of(series['gbn_tuned'], (rule,)), 2)} s, "
        f"TCP {fmt(mean_of(series['tcp'], (rule,)), 2)} s"
        for _, rule in settings
    )
    why = {
        "loss": "A lost data packet costs GBN a whole timeout: the receiver throws away everything after the gap, "
        "and the sender resends the window when its timer runs out. With no base delay the time is "
        "almost all timeouts, about (packets × loss × timeout), so it grows in proportion to the loss and "
        "to the timeout, not the window. TCP repairs most losses by fast retransmit (three duplicate ACKs, "
        "or SACK) within a round trip and pays its minimum RTO of 200 ms only when a retransmission or the "
        "tail of an object is lost, so it stays far below GBN with the report's 0.7 s timeout.",
        "corruption": "For both protocols a corrupted packet is a lost one, data or ACK: GBN's CRC32 and TCP's "
        "checksum (checked by the receiving kernel, left wrong by the engine's netem rule) reject it. "
        "So the corruption rows follow the loss rows at the same rate. The report found corruption "
        "cheaper than loss for its GBN; under netem its kernel dropped corrupted datagrams too, so "
        "the difference there is not the protocol's.",
        "duplication": "Duplicates cost almost nothing: GBN's receiver re-ACKs a packet it has, TCP drops the "
        "copy (and answers with a duplicate ACK, which with D-SACK does not trigger a retransmit). "
        "With no delay and no rate, both finish in a fraction of a second per object, so the totals "
        "are dominated by each object's start and ending, not by the copies.",
        "delay": "A constant 100 ms each way makes every object a few round trips of 200 ms: GBN's window of 25 "
        "sends 25 KB per round trip, TCP starts with 10 segments and doubles. Jitter with no rate "
        "reorders packets (netem does the same): GBN's receiver accepts only the next packet in order, "
        "so of a window sent at once only a few arrive in order, the rest are thrown away and resent "
        "after a timeout, and the total explodes, as the report found for normal jitter; TCP buffers "
        "the out-of-order segments and asks only for the missing ones (SACK, RACK), so reordering "
        "costs it little.",
    }[name]
    const = "delay 100ms"
    if name == "delay" and all(math.isfinite(mean_of(series[k], (const,))) for k in ("gbn", "tcp")):
        g, t = series["gbn"][(const,)], series["tcp"][(const,)]
        first = order(t, g)  # a longer download: the other finishes first
        why += (
            " With the constant delay "
            + {
                1: "GBN finishes first, as the report found: ",
                -1: "TCP finishes first, unlike the report: ",
                0: "the runs cannot tell which finishes first ("
                + compare("GBN", g, "TCP", t, "s", 2)
                + "); the report found "
                "GBN first: ",
            }[first]
            + "each TCP object also spends a round trip on its handshake and grows its window from 10 "
            "segments, where GBN sends 25 packets at once."
        )
    return "\n\n".join(["Measured (averages): " + measured + ".", why])


# ---- 7. the report's numbers -----------------------------------------------------------


def _ours(key: str, rule: str):
    return lambda frames: cells(frames.get(key), ["netem"], "total_s").get((rule,))


def _ratio(rule: str):
    def ours(frames):
        a, b = _ours("gbn", rule)(frames), _ours("tcp", rule)(frames)
        if not (a and b and a["n"] and b["n"]):
            return None
        return {"mean": a["mean"] / b["mean"], "margin": float("nan"), "n": min(a["n"], b["n"])}

    return ours


def reported(plan: Plan) -> list[Reported]:
    names = {"gbn": f"GBN (W {REPORT_WINDOW}, {REPORT_TIMEOUT_MS / 1000:g} s)", "tcp": "TCP"}
    out = [
        Reported(f"{names[key]}, {_label(rule)}", value, _ours(key, rule), "text")
        for (key, rule), value in REPORT.items()
        if rule in plan.rules
    ]
    out += [
        Reported(
            f"GBN / TCP time ratio, {_label(rule)}", REPORT[("gbn", rule)] / REPORT[("tcp", rule)], _ratio(rule), "text"
        )
        for rule in (NONE, "loss 10%", "loss 15%", "corrupt 10%")
        if rule in plan.rules
    ]
    return out


def report_blocks(plan: Plan, total: int) -> list:
    return [
        Table(
            "The report's numbers beside ours",
            lambda r: reported_table(r.frames, reported(plan), "s", 2),
            "Report: the averages its text gives (its figures show more, without numbers). Times are "
            f"totals of 20 objects of unknown sizes; ours are {plan.objects} objects, {total:,} bytes. The "
            "ratio rows compare how GBN fares against TCP, which does not depend on the sizes.",
        ),
        Prompt("Why do our numbers differ from the report's?", lambda r: report_answer(r, plan)),
    ]


def report_answer(r: Results, plan: Plan) -> str:
    table = reported_table(r.frames, reported(plan), "s", 2)
    if table["runs"].sum() == 0:
        return "(not measured)"
    differ = table[table["differs > 15%"] == "yes"]
    parts = [
        f"{len(differ)} of {len(table)} numbers differ from the report's by more than 15%: "
        + ("; ".join(f"{row['setting']} ({row['ours / report']}×)" for _, row in differ.iterrows()) or "none")
        + "."
    ]
    parts.append(
        "TCP: the report's program sent each object with an application-level acknowledgement and a sleep "
        "between sends ('adding a variable sleep time helped in not over-crowding the socket'), so its 41 s "
        "with no impairment are the sleeps, not TCP; ours is the kernel's TCP alone and downloads the objects "
        "in well under a second each. Every TCP row is therefore far below the report's, and the report's "
        "TCP times say nothing about TCP's own recovery."
    )
    parts.append(
        "GBN: with the report's window and timeout our GBN spends its time, as the report's did, in 0.7 s "
        "timeouts, about one per lost packet; the total scales with the number of packets, and the report "
        "does not give its object sizes (its 268 s at 10% loss would be about 3,800 packets at one timeout "
        f"per loss, against our {sum(packets(s) for s in sizes(plan)):,}). Our GBN slides its window with "
        "every ACK and restarts its timer on it, as the textbook sender; the report's moves its window only "
        "once every packet of it is acknowledged. "
        "With no impairment the report's 1.75 s for 20 objects is its programs' own pace on a loopback link; "
        "ours is shorter because the engine's time excludes the programs' start-up."
    )
    ours, theirs = {}, {}
    for rule in (NONE, "loss 10%", "loss 15%", "corrupt 10%"):
        ratio = _ratio(rule)(r.frames) if rule in plan.rules else None
        if ratio:
            ours[rule], theirs[rule] = ratio["mean"], REPORT[("gbn", rule)] / REPORT[("tcp", rule)]
    if ours:
        text = (
            "GBN against TCP (time ratio, report / ours): "
            + "; ".join(f"{_label(k)} {theirs[k]:.2f} / {v:.2f}" for k, v in ours.items())
            + ". "
        )
        if NONE in ours:
            text += (
                "With no impairment the report's GBN was 23 times faster than its TCP because of the TCP "
                "program's sleeps; with both paced by their kernels and programs alone the ratio is "
                f"{ours[NONE]:.2f}. "
            )
        text += (
            "Under loss and corruption the ratio sets a timeout-bound GBN (0.7 s per loss) against TCP's "
            "fast retransmit (a round trip; its 200 ms minimum RTO only when a retransmission or an "
            "object's tail is lost): GBN stays behind TCP, as in the report, by a larger factor since our "
            "TCP waits on no sleeps."
        )
        if {"loss 10%", "loss 15%"} <= set(ours):
            same = (ours["loss 15%"] < ours["loss 10%"]) == (theirs["loss 15%"] < theirs["loss 10%"])
            text += (
                f" From 10% to 15% loss the ratio {'falls' if ours['loss 15%'] < ours['loss 10%'] else 'rises'} "
                f"here, {'as' if same else 'unlike'} in the report: TCP's own timeouts (lost "
                "retransmissions) grow faster with the loss than GBN's one timeout per loss."
            )
        parts.append(text)
    return "\n\n".join(parts)


__all__ = ["build", "FULL", "QUICK", "Plan", "missing_programs", "sizes", "best_setting"]
