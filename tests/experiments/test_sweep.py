"""The sweep engine with plain callables: parallel = serial, resume, repeat-until-margin,
failure marking. (Real transfers are in test_sheet_e2e.py.)"""

import json
import random
import threading
import time

import pytest

from harness.experiments.sweep import (
    GIVE_UP_AFTER,
    Sweep,
    SweepInterrupted,
    derive_seed,
    grid,
    run_sweep,
    summarize_cells,
)


def noisy_goodput(params: dict, seed: int) -> dict:
    """Deterministic in (params, seed): a mean set by the window, noise from the seed."""
    rng = random.Random(seed)
    return {"ok": True, "goodput_kBps": 10.0 * params["window"] + rng.gauss(0, 1), "retransmissions": rng.randint(0, 9)}


def test_grid_and_seeds():
    assert grid(a=[1, 2], b=["x"]) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]
    s1 = derive_seed(1, "q3", {"window": 4, "delay": 5}, 0)
    assert s1 == derive_seed(1, "q3", {"delay": 5, "window": 4}, 0)  # key order irrelevant
    others = {
        derive_seed(1, "q3", {"window": 4, "delay": 5}, 1),
        derive_seed(2, "q3", {"window": 4, "delay": 5}, 0),
        derive_seed(1, "q5", {"window": 4, "delay": 5}, 0),
        derive_seed(1, "q3", {"window": 8, "delay": 5}, 0),
    }
    assert s1 not in others and len(others) == 4


def test_repeats_under_other_names_draw_the_same_seeds_in_one_pool():
    """How the grader re-runs a sample (harness.notebook Lab.rerun): each repeat a sweep of
    its own, named apart, its seeds those of the question; one pool runs them all."""
    from harness.experiments.sweep import run_sweeps

    cells = grid(window=[1, 2])
    once = run_sweep(Sweep("q3", noisy_goodput, cells, runs=2), jobs=1, progress=False)
    twice = run_sweeps(
        [Sweep(f"q3#{i}", noisy_goodput, cells, runs=2, seed_name="q3") for i in range(2)], jobs=4, progress=False
    )
    for frame in twice.values():
        assert list(frame["seed"]) == list(once["seed"])
        assert list(frame["goodput_kBps"]) == list(once["goodput_kBps"])
    assert list(run_sweep(Sweep("q5", noisy_goodput, cells, runs=2), progress=False)["seed"]) != list(once["seed"])


def test_parallel_and_serial_give_the_same_table(tmp_path):
    cells = grid(window=[1, 2, 4, 8])
    serial = run_sweep(Sweep("s", noisy_goodput, cells, runs=3), jobs=1, progress=False)
    parallel = run_sweep(Sweep("s", noisy_goodput, cells, runs=3), jobs=4, progress=False)
    cols = ["window", "rep", "seed", "ok", "goodput_kBps", "retransmissions"]
    assert serial[cols].equals(parallel[cols])
    assert list(serial.columns[:5]) == ["sweep", "window", "rep", "seed", "ok"]
    table = summarize_cells(serial, ["window"], "goodput_kBps")
    assert list(table["n"]) == [3, 3, 3, 3] and set(table["status"]) == {"ok"}
    assert (abs(table["mean"] - 10 * table["window"]) < table["margin"] + 3).all()


def test_resume_after_an_interruption_measures_only_what_is_missing(tmp_path):
    path = str(tmp_path / "runs.jsonl")
    cells = grid(window=[1, 2, 3])
    calls = []
    lock = threading.Lock()

    def interrupted_on_fourth(params, seed):
        with lock:
            calls.append(seed)
            if len(calls) == 4:
                raise KeyboardInterrupt
        return noisy_goodput(params, seed)

    with pytest.raises(SweepInterrupted) as info:
        run_sweep(Sweep("r", interrupted_on_fourth, cells, runs=2), jobs=1, results_path=path, progress=False)
    kept = info.value.frames["r"]
    assert len(kept) == 3 and kept["ok"].all()
    assert len(open(path).read().splitlines()) == 3

    resumed_calls = []

    def counting(params, seed):
        resumed_calls.append(seed)
        return noisy_goodput(params, seed)

    full = run_sweep(Sweep("r", counting, cells, runs=2), jobs=2, results_path=path, progress=False)
    assert len(resumed_calls) == 3 and len(full) == 6
    fresh = run_sweep(Sweep("r", noisy_goodput, cells, runs=2), jobs=1, progress=False)
    assert full["goodput_kBps"].tolist() == fresh["goodput_kBps"].tolist()
    # A third run measures nothing; other sweeps' rows in the same file are ignored.
    with open(path, "a") as f:
        f.write(json.dumps({"sweep": "other", "cell": "{}", "rep": 0, "ok": True}) + "\n{truncated")
    again = run_sweep(
        Sweep("r", lambda p, s: pytest.fail("re-measured"), cells, runs=2), results_path=path, progress=False
    )
    assert len(again) == 6


def test_repeat_until_margin_with_a_cap():
    def spread_by_cell(params, seed):
        rng = random.Random(seed)
        return {"ok": True, "goodput_kBps": 100 + rng.gauss(0, params["sigma"])}

    cells = grid(sigma=[0.5, 200.0])
    frame = run_sweep(Sweep("m", spread_by_cell, cells, runs=3, until_margin=0.05, cap=9), jobs=2, progress=False)
    table = summarize_cells(frame, ["sigma"], "goodput_kBps").set_index("sigma")
    assert table.loc[0.5, "n"] == 3 and table.loc[0.5, "rel_margin"] < 0.05
    assert table.loc[200.0, "n"] == 9  # never under 5%: stopped by the cap


def test_a_cell_where_every_run_fails_is_marked_not_fatal():
    def window_three_breaks(params, seed):
        if params["window"] == 3:
            raise ValueError("Sender3.py: usage: Sender3.py <host> <port> <file> <timeout> <window>\nmore")
        if params["window"] == 2 and seed % 2:
            return {"ok": False, "error": "receiver output differs"}
        return noisy_goodput(params, seed)

    frame = run_sweep(Sweep("f", window_three_breaks, grid(window=[1, 2, 3]), runs=5), jobs=1, progress=False)
    table = summarize_cells(frame, ["window"], "goodput_kBps").set_index("window")
    assert table.loc[1, "status"] == "ok" and table.loc[1, "n"] == 5
    assert table.loc[3, "status"] == "failed" and table.loc[3, "failed"] == GIVE_UP_AFTER
    assert table.loc[3, "error"] == "ValueError: Sender3.py: usage: Sender3.py <host> <port> <file> <timeout> <window>"
    seeds = [derive_seed(1, "f", {"window": 2}, r) for r in range(5)]
    assert table.loc[2, "failed"] == sum(s % 2 for s in seeds)
    assert table.loc[2, "status"] == ("partial" if any(s % 2 for s in seeds) else "ok")


def test_bad_sweep_definitions():
    with pytest.raises(ValueError):
        Sweep("x", noisy_goodput, grid(window=[1, 1]))
    with pytest.raises(ValueError):
        Sweep("x", noisy_goodput, grid(window=[1]), runs=0)


def test_the_cpu_budget_keeps_heavy_runs_apart():
    lock, now, peak = threading.Lock(), {"heavy": 0, "all": 0}, {"heavy": 0, "all": 0}
    started = []

    def timed(params, seed):
        kind = "heavy" if params["heavy"] else "light"
        with lock:
            started.append(kind)
            now["all"] += 1
            now["heavy"] += kind == "heavy"
            for k in peak:
                peak[k] = max(peak[k], now[k])
        time.sleep(0.03)
        with lock:
            now["all"] -= 1
            now["heavy"] -= kind == "heavy"
        return {"ok": True, "goodput_kBps": 1.0}

    cells = grid(heavy=[True, False], n=[1, 2, 3, 4])
    sweep = Sweep("b", timed, cells, runs=3, load=lambda c: 1.0 if c["heavy"] else 0.1)
    frame = run_sweep(sweep, jobs=6, cpu_budget=1.5, progress=False)
    assert len(frame) == 24 and frame["ok"].all()
    assert peak["heavy"] == 1  # two saturating runs never overlap
    assert peak["all"] >= 4  # light ones still go in parallel
    assert started[0] == "heavy"  # the heavy lane starts at once, not at the tail
    assert "heavy" in started[:12] and started[-12:].count("heavy") < 12


def test_admission_rule():
    from harness.experiments.sweep import _admits

    light = lambda *loads: [(x, False) for x in loads]  # noqa: E731
    assert _admits(1.0, True, light(0.2, 0.2), 1.0, 1.5)  # heavy: total 1.4 <= 1.5
    assert not _admits(1.0, True, [(1.0, True)], 1.0, 1.5)  # never two saturating runs
    assert _admits(0.1, False, [(1.0, True), (0.3, False)], 1.0, 1.5)  # light share 0.4 <= 0.5
    assert not _admits(0.3, False, [(1.0, True), (0.3, False)], 1.0, 1.5)  # light share 0.6 > 0.5: keep room
    assert _admits(0.3, False, light(0.3, 0.3, 0.3), 0.0, 1.5)  # no heavy work left: whole budget
    assert not _admits(0.3, False, light(0.3, 0.3, 0.3), 0.9, 1.5)  # keep room for a big run
