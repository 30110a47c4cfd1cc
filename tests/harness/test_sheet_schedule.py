"""The sheet scheduler (harness/experiments/sweep.py) on recorded and synthetic run
times, on a simulated clock (`replay`): no transfer runs, so this is fast and exact.

What it must do: finish a sheet near its longest run where the CPU budget allows, never
book more than the budget, start the longest runs at once, and book a run by what its
cell's runs measured rather than by how hard it drives the link."""

import json
import os

import pytest

from harness.experiments.sweep import DEFAULT_CPU_BUDGET, STARTUP_CPU, STARTUP_S, Sweep, cell_key, grid, replay, run_cpu

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)


def never(params, seed):  # replay never runs a transfer
    raise AssertionError("replay ran a transfer")


def synthetic(kind_of, booked_by_cpu: bool) -> list[Sweep]:
    """A COMN-like sheet, 5 runs a cell: one slow timer-bound cell (300 s, 0.02 cores), 8
    saturating ones (15 s, 0.3 cores, load 1) and 20 light ones (20 s, 0.05 cores)."""
    cells = grid(kind=["slow"], n=[0]) + grid(kind=["heavy"], n=range(8)) + grid(kind=["light"], n=range(20))
    extra = {"cpu": lambda c: 1.25 * kind_of[c["kind"]][1]} if booked_by_cpu else {}  # a prior 25% high
    return [
        Sweep(
            "s",
            never,
            cells,
            runs=5,
            cost=lambda c: kind_of[c["kind"]][0],
            load=lambda c: 1.0 if c["kind"] == "heavy" else 0.05,
            **extra,
        )
    ]


KINDS = {"slow": (300.0, 0.02), "heavy": (15.0, 0.3), "light": (20.0, 0.05)}  # seconds, cores
CELLS = {"slow": 1, "heavy": 8, "light": 20}


def synthetic_run(sweep, cell, rep):
    seconds, cores = KINDS[cell["kind"]]
    return {"elapsed_s": seconds, "cpu_s": seconds * cores, "harness_cpu_s": 0.0}


def test_booked_by_measured_cpu_the_sheet_ends_near_its_longest_run():
    work = sum(5 * CELLS[k] * (s * c + STARTUP_CPU) for k, (s, c) in KINDS.items())  # core-s, start-ups included
    assert work / DEFAULT_CPU_BUDGET < 300  # the budget allows it
    by_cpu = replay(synthetic(KINDS, True), synthetic_run)
    assert by_cpu["runs"] == 5 * 29
    assert by_cpu["wall_s"] <= 1.5 * 300
    assert by_cpu["peak_booked"] <= DEFAULT_CPU_BUDGET + 1e-9
    assert by_cpu["peak_used"] <= DEFAULT_CPU_BUDGET + 1e-9
    slow = [t for (name, key, rep), t in by_cpu["started"].items() if '"slow"' in key]
    assert max(slow) <= 2 * STARTUP_S  # the longest runs start first (paced by their start-ups)
    # Booked by their load, saturating runs go one at a time (1.0 of the 1.5 budget):
    # 40 runs of 15 s back to back, past the longest run.
    by_load = replay(synthetic(KINDS, False), synthetic_run)
    assert by_load["wall_s"] >= 40 * 15 and by_load["peak_booked"] <= DEFAULT_CPU_BUDGET + 1e-9


def test_a_cell_is_booked_by_what_its_runs_measured():
    """A prior that errs high (0.5 cores) books the cell's first runs; once one has ended,
    the rest go at what it measured (0.1), several at a time."""
    sweep = Sweep("m", never, grid(n=range(4)), runs=5, cpu=lambda c: 0.5, load=lambda c: 1.0)
    out = replay([sweep], lambda s, c, r: {"elapsed_s": 10.0, "cpu_s": 1.0, "harness_cpu_s": 0.0})
    starts = sorted(out["started"].values())
    assert starts[:3] == [0.0, 0.0, 0.0] and starts[3] >= 10.0  # 3 x 0.5 = the budget until one ends
    at_once = max(sum(1 for u in starts if u <= t < u + 10.0) for t in starts)
    assert at_once >= 10  # then 0.1 each: many at once (paced by their start-ups), not 3
    assert max(starts) < 30.0  # ... rather than 3 every 10 s (70 s)
    assert out["peak_used"] <= DEFAULT_CPU_BUDGET
    assert run_cpu(
        [{"elapsed_s": 10.0, "cpu_s": 1.0, "harness_cpu_s": 0.5}, {"elapsed_s": 4.0, "cpu_s": 0.4}]
    ) == pytest.approx(0.15)
    assert run_cpu([{"elapsed_s": 3.0}]) is None  # rows from before CPU was recorded


def test_starts_are_paced_by_their_start_up_booking():
    """Each start is booked at least STARTUP_CPU for its first second: 30 tiny runs do not
    all start in the same instant (namespaces, engine, interpreters: ~0.45 CPU-s each)."""
    sweep = Sweep("t", never, grid(n=range(30)), runs=1, cpu=lambda c: 0.01)
    out = replay([sweep], lambda s, c, r: {"elapsed_s": 30.0, "cpu_s": 0.3})
    at_zero = sum(1 for t in out["started"].values() if t == 0.0)
    assert at_zero == int(DEFAULT_CPU_BUDGET / STARTUP_CPU)
    assert max(out["started"].values()) < 15 and out["peak_booked"] <= DEFAULT_CPU_BUDGET + 1e-9


def recorded(sheet: str) -> dict:
    """{(sweep, cell key, rep): row} of a sheet's recorded runs (record_sheet_runs.py)."""
    with open(os.path.join(os.path.dirname(__file__), f"sheet_runs_{sheet}.json")) as f:
        return {(r["sweep"], r["cell"], r["rep"]): r for r in json.load(f)["runs"]}


def recorded_sweeps(built: list[Sweep], rows: dict, booked_by_cpu: bool) -> list[Sweep]:
    """The sheet's sweeps as built, over the cells and repetitions that were recorded."""
    out = []
    for s in built:
        cells = [c for c in s.cells if (s.name, cell_key(c), 0) in rows]
        runs = 1 + max(rep for (name, _, rep) in rows if name == s.name)
        out.append(
            Sweep(s.name, never, cells, runs=runs, cost=s.cost, load=s.load, cpu=s.cpu if booked_by_cpu else None)
        )
    return out


def replayed(rows: dict):
    def run(sweep, cell, rep):
        r = rows[(sweep.name, cell_key(cell), rep)]
        return {k: r[k] for k in ("elapsed_s", "cpu_s", "harness_cpu_s")}

    return run


def test_the_recorded_comn_sheet_replays_within_its_floor():
    """The full COMN sheet's 280 runs as measured (record_sheet_runs.py). Replayed booked by
    load, the replay takes what the real sheet took (870 s): the replay is faithful.
    Booked by measured CPU it ends within 1.5x its longest run, the longest runs start
    at once, the bookings never pass the budget and what the runs used (by their rows)
    stays within the machine's two cores where a guess fell short."""
    from assignments.comn import sheet as comn

    rows = recorded("comn")
    longest = max(r["elapsed_s"] for r in rows.values())
    built = [m.sweep for m in comn.sweeps(plan=comn.FULL).values()]
    by_load = replay(recorded_sweeps(built, rows, False), replayed(rows))
    assert by_load["runs"] == len(rows) == 280
    assert 0.95 * 870 <= by_load["wall_s"] <= 1.05 * 870, by_load["wall_s"]
    by_cpu = replay(recorded_sweeps(built, rows, True), replayed(rows))
    assert by_cpu["runs"] == len(rows)
    assert by_cpu["wall_s"] <= 1.5 * longest, by_cpu["wall_s"]
    assert by_cpu["peak_booked"] <= DEFAULT_CPU_BUDGET + 1e-9
    assert by_cpu["peak_used"] <= 2.0
    first = sorted(t for key, t in by_cpu["started"].items() if rows[key]["elapsed_s"] > 200)
    assert len(first) == 5 and first[-1] <= 2 * STARTUP_S


def test_the_recorded_tcp_like_sheet_replays_within_its_floor():
    """The full tcp-like sheet's 142 runs, recorded booked by load (214 s, the longest run
    57 s: the report's fixed 1 s timer at 20% loss, fast retransmit off). Booked by CPU,
    with the report's timer in the runs' expected length, its six longest runs start in
    the first seconds and the sheet ends within 1.5x its longest run (measured: 76 s)."""
    from assignments.tcp_like import sheet as tcp_like

    rows = recorded("tcp-like")
    longest = max(r["elapsed_s"] for r in rows.values())
    built = [s for sec in tcp_like.build(plan=tcp_like.FULL).sections for s in sec.sweeps]
    assert all(s.cpu for s in built)
    by_cpu = replay(recorded_sweeps(built, rows, True), replayed(rows))
    assert by_cpu["runs"] == len(rows) == 142
    assert by_cpu["wall_s"] <= 1.5 * longest, by_cpu["wall_s"]
    assert by_cpu["peak_booked"] <= DEFAULT_CPU_BUDGET + 1e-9
    assert by_cpu["peak_used"] <= 2.0
    slow = sorted(t for key, t in by_cpu["started"].items() if rows[key]["elapsed_s"] > 40)
    assert len(slow) == 6 and slow[-1] <= 15, slow  # (20-31 s in, before their timer was counted)
    by_load = replay(recorded_sweeps(built, rows, False), replayed(rows))
    assert by_load["wall_s"] >= 3 * longest  # as measured: 214 s
