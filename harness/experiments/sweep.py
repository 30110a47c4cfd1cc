"""Sweeps: a parameter grid x repetitions, run in parallel, resumable, as a tidy table.

A sweep calls `run_one(params, seed) -> dict` once per repetition of each cell (one
set of parameters). The dict must have `ok` (bool) and may have `error` and any
measured fields (goodput_kBps, retransmissions, ...). An exception in run_one is a
failed repetition, not a failed sweep. Repetitions are either a fixed number, or
(seed 000's rule) "until the 95% margin of error of `metric` is below a fraction of its
mean", with a minimum and a cap.

Every finished repetition is appended at once to a JSONL file, so an interrupted sweep
re-run with the same file skips what it already measured. Each repetition's seed is
derived from the sweep seed, the sweep name, the cell and the repetition number, so a
re-run (or the same cell measured serially) uses the same seeds.

Parallelism: transfers are separate processes that mostly wait on timers and the link,
so a thread pool suffices; `jobs` bounds how many run at once (see DEFAULT_JOBS). A
transfer that drives the link at full rate is sensitive to CPU scheduling (a GBN sender
bursting a window of 256 packets measures lower when it competes for the CPU), so the
runs in flight keep what they are booked at within `cpu_budget` (cores), and a run whose
booking is at least HEAVY always finds room. A run is booked at its `load` (its share of
the link, 1: saturating), or, where the sweep gives `cpu` (the cores one run is expected
to use), by what it really uses: at least STARTUP_CPU in its first STARTUP_S seconds,
when namespaces, the engine and two interpreters start, and after that the most its
cell's runs measured (their programs', engine's and harness thread's CPU seconds over
their wall time, start-up taken out), or `cpu(cell)` corrected by the sweep's measured
cells until one of the cell's runs has ended (see _Bookings). A saturating COMN run uses
a fraction of a core, so booking it at a whole one kept heavy runs one or two at a
time and set the sheet's time (BENCHMARKS.md, "The sheets"). Cells
are started longest-expected-first (`cost`), big bookings first, so the slow cells of a
sheet do not end up alone at the tail. The scheduler is sans-IO (_Scheduler): `replay`
runs it on a simulated clock over recorded runs.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import signal
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable, Iterable

import pandas as pd

from harness.procs import Terminated, raise_if_terminated, terminate_as_interrupt
from harness.statistics import needs_more_runs, summarize

# Transfers at once, and the summed bookings (cores) of those in flight, by default.
# Measured on the 2-core machine (BENCHMARKS.md, "The sheets").
DEFAULT_JOBS = 12
MEASURED_JOBS = 64  # the default when every sweep books by measured CPU: the budget is the bound
DEFAULT_CPU_BUDGET = 1.5
HEAVY = 0.5  # a run with at least this load is CPU-sensitive ("heavy")
STARTUP_S = 1.0  # a run's start-up (namespaces, engine, two interpreters) ...
STARTUP_CPU = 0.5  # ... is booked at least this many cores (about what a start uses in its
# first second), so a burst of starts is paced
PROBE_CPU = 0.1  # a cell guessed at this many cores or more, and expected to take at most
PROBE_S = 60.0  # this many seconds, runs one run until it is measured
GIVE_UP_AFTER = 2  # failures in a cell with no success before its other runs are skipped

RunOne = Callable[[dict, int], dict]


class SweepInterrupted(Exception):
    """The sweep was interrupted (Ctrl-C); `frames` ({name: rows}) holds what was measured."""

    def __init__(self, frames: dict[str, pd.DataFrame]):
        super().__init__("sweep interrupted; re-run with the same results file to resume")
        self.frames = frames


@dataclass
class Sweep:
    name: str
    run_one: RunOne
    cells: list[dict]  # one dict of parameters per cell
    runs: int = 5  # fixed count, or the minimum with until_margin
    until_margin: float | None = None  # target relative 95% margin of `metric`
    cap: int = 30  # most runs per cell with until_margin
    metric: str = "goodput_kBps"
    seed: int = 1
    cost: Callable[[dict], float] | None = None  # expected seconds of one run
    load: Callable[[dict], float] | None = None  # share of the link one run drives (1: saturating);
    # its booking unless `cpu` is given
    cpu: Callable[[dict], float] | None = None  # cores one run is expected to use after its start-up:
    # book runs by measured CPU, this until its cell has a
    # run measured
    seed_name: str | None = None  # the name seeds derive from (default: name), so a
    # repeat under another name draws the same seeds

    def __post_init__(self) -> None:
        if self.runs < 1:
            raise ValueError(f"sweep {self.name}: runs must be >= 1, got {self.runs}")
        if self.until_margin is not None and not (self.until_margin > 0 and self.cap >= self.runs):
            raise ValueError(f"sweep {self.name}: need margin > 0 and cap >= runs")
        keys = [cell_key(c) for c in self.cells]
        if len(set(keys)) != len(keys):
            raise ValueError(f"sweep {self.name}: the same cell appears twice")

    @property
    def param_names(self) -> list[str]:
        names: list[str] = []
        for cell in self.cells:
            names += [k for k in cell if k not in names]
        return names


def grid(**axes: Iterable) -> list[dict]:
    """Every combination of the axes' values, first axis slowest: grid(a=[1,2], b=[3])."""
    names = list(axes)
    return [dict(zip(names, values)) for values in itertools.product(*axes.values())]


def cell_key(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


def derive_seed(sweep_seed: int, name: str, params: dict, rep: int) -> int:
    """A reproducible 31-bit seed, distinct per sweep, cell and repetition."""
    digest = hashlib.sha256(f"{sweep_seed}|{name}|{cell_key(params)}|{rep}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def rep_seed(sweep: Sweep, cell: dict, rep: int) -> int:
    """The seed `sweep` runs repetition `rep` of `cell` with (a notebook's picture of the
    cell draws its rep 0: harness.notebook.Lab.picture)."""
    return derive_seed(sweep.seed, sweep.seed_name or sweep.name, cell, rep)


def one_line(text: object) -> str:
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return lines[0] if lines else ""


class _Results:
    """The rows of one sweep: loaded from and appended to a JSONL file (if any)."""

    def __init__(self, sweep: Sweep, path: str | None):
        self.sweep, self.path = sweep, path
        self.rows: list[dict] = []
        self._by_cell: dict[str, list[dict]] = {}  # the scheduler asks per cell after every run
        self.lock = threading.Lock()
        wanted = {cell_key(c) for c in sweep.cells}
        if path and os.path.exists(path):
            with open(path) as f:
                for line in f:
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a line cut short by a crash
                    if row.get("sweep") == sweep.name and row.get("cell") in wanted:
                        self._keep(row)
        if path:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    def _keep(self, row: dict) -> None:
        self.rows.append(row)
        self._by_cell.setdefault(row["cell"], []).append(row)

    def add(self, row: dict) -> None:
        with self.lock:
            self._keep(row)
            if self.path:
                with open(self.path, "a") as f:
                    f.write(json.dumps(row, default=str) + "\n")

    def of_cell(self, key: str) -> list[dict]:
        with self.lock:
            return list(self._by_cell.get(key, ()))


def is_complete(sweep: Sweep, results_path: str) -> bool:
    """Whether the results file holds every repetition `sweep` would run (nothing left to run)."""
    plan = _Plan(sweep, _Results(sweep, results_path))
    return all(not plan.more(cell, set()) for cell in sweep.cells)


class _Plan:
    """Which repetitions each cell still needs (fixed count or until the margin)."""

    def __init__(self, sweep: Sweep, results: _Results):
        self.sweep, self.results = sweep, results

    def more(self, cell: dict, running: set[int], key: str | None = None) -> list[int]:
        """Repetition numbers this cell still needs, besides those `running` (`key`: the
        cell's cell_key, when the caller has it)."""
        rows = self.results.of_cell(key or cell_key(cell))
        done = {r["rep"] for r in rows}
        good = [r.get(self.sweep.metric) for r in rows if r["ok"]]
        failures = len(rows) - len(good)
        if not good and failures >= GIVE_UP_AFTER:
            return []  # every run failed: mark the cell, spend no more time on it
        if self.sweep.until_margin is None:
            target = self.sweep.runs
        else:
            if running:
                return []  # decide on the margin once the runs in flight are in
            values = [float(v) for v in good if v is not None]
            if len(values) < self.sweep.runs:
                target = len(done) + self.sweep.runs - len(values)
            elif needs_more_runs(values, self.sweep.until_margin, self.sweep.cap, self.sweep.runs):
                target = len(done) + 1
            else:
                return []
            target = min(target, self.sweep.cap)
        missing = [rep for rep in range(target) if rep not in done and rep not in running]
        if not good and failures:
            missing = missing[: max(0, GIVE_UP_AFTER - failures - len(running))]
        return missing


def run_sweep(
    sweep: Sweep,
    *,
    jobs: int | None = None,
    results_path: str | None = None,
    progress: bool = True,
    cpu_budget: float = DEFAULT_CPU_BUDGET,
) -> pd.DataFrame:
    """Run every missing repetition of one sweep; return all its rows (see `tidy`)."""
    return run_sweeps([sweep], jobs=jobs, results_path=results_path, progress=progress, cpu_budget=cpu_budget)[
        sweep.name
    ]


def run_sweeps(
    sweeps: list[Sweep],
    *,
    jobs: int | None = None,
    results_path: str | None = None,
    progress: bool = True,
    desc: str | None = None,
    cpu_budget: float = DEFAULT_CPU_BUDGET,
) -> dict[str, pd.DataFrame]:
    """Run several sweeps in one pool (longest cells first across all of them), so a
    sheet's slow cells overlap with everything else. Returns {name: rows}.

    Raises SweepInterrupted on Ctrl-C after stopping the running repetitions; its
    `frames` holds what was measured (the rows of the stopped ones are not kept, so a
    re-run measures them). SIGTERM (where it still has its default action) stops the
    running repetitions the same way and re-raises `Terminated`, so the caller exits at
    once; the results file keeps every finished repetition for a re-run.
    """
    with terminate_as_interrupt():
        return _run_sweeps(sweeps, jobs, results_path, progress, desc, cpu_budget)


def _run_sweeps(
    sweeps: list[Sweep], jobs: int | None, results_path: str | None, progress: bool, desc: str | None, cpu_budget: float
) -> dict[str, pd.DataFrame]:
    from tqdm.auto import tqdm

    names = [s.name for s in sweeps]
    if len(set(names)) != len(names):
        raise ValueError(f"sweep names must differ: {names}")
    jobs = max(1, jobs or default_jobs(sweeps))
    plans = {s.name: _Plan(s, _Results(s, results_path)) for s in sweeps}
    sched = _Scheduler(sweeps, plans, jobs, cpu_budget)
    in_flight: dict[Future, tuple[str, str, int]] = {}
    bar = tqdm(total=sched.planned, desc=desc or ",".join(names), unit="run", disable=not progress, leave=True)
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="sweep")
    children_before = _child_groups()

    def frames() -> dict[str, pd.DataFrame]:
        return {s.name: tidy(s, plans[s.name].results.rows) for s in sweeps}

    def submit_ready() -> None:
        for sweep, cell, rep, token in sched.starts(time.monotonic()):
            in_flight[pool.submit(_run_one_rep, sweep, cell, rep)] = token

    try:
        submit_ready()
        while in_flight:
            done, _ = wait(list(in_flight), timeout=STARTUP_S / 2, return_when=FIRST_COMPLETED)
            raise_if_terminated()  # a SIGTERM whose exception Python dropped (see procs)
            for fut in done:
                sched.finished(in_flight.pop(fut), fut.result())  # exceptions are caught inside; Ctrl-C is not
                bar.total = max(bar.total, bar.n + 1 + len(in_flight))
                bar.update(1)
            submit_ready()
        bar.total = bar.n
    except KeyboardInterrupt as e:
        _stop_workers(pool, in_flight, children_before)
        if isinstance(e, Terminated):
            raise
        raise SweepInterrupted(frames()) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
    return frames()


def default_jobs(sweeps: list[Sweep]) -> int:
    """DEFAULT_JOBS, or MEASURED_JOBS when every sweep books its runs by measured CPU."""
    return MEASURED_JOBS if sweeps and all(s.cpu for s in sweeps) else DEFAULT_JOBS


class _Scheduler:
    """Which repetitions start, and when: sans-IO (the caller gives the time, starts what
    `starts` returns and hands each finished row to `finished`), so a replay of recorded
    runs on a simulated clock (`replay`) exercises the very rules the sheets run by."""

    def __init__(self, sweeps: list[Sweep], plans: dict[str, _Plan], jobs: int, budget: float):
        self.plans, self.jobs, self.budget = plans, jobs, budget
        # (sweep, cell, (sweep name, cell key)) with each key made once: the scheduler
        # looks every cell up after every run
        cells = [(s, c, (s.name, cell_key(c))) for s in sweeps for c in s.cells]
        self.book = _Bookings({key: (s, c) for s, c, key in cells}, plans)
        # Big runs (booked at HEAVY or more) go one or two at a time, so they form a
        # critical path of their own: start them first, then the rest longest-first.
        self.order = sorted(
            cells, key=lambda sck: (self.book.of(sck[2]) < HEAVY, -(sck[0].cost(sck[1]) if sck[0].cost else 0))
        )
        self.running: dict[tuple[str, str], set[int]] = {key: set() for _, _, key in self.order}
        self.flights: dict[tuple[str, str, int], _Flight] = {}
        self.planned = sum(len(plans[s.name].more(c, set(), key[1])) for s, c, key in self.order)

    def starts(self, now: float) -> list[tuple[Sweep, dict, int, tuple[str, str, int]]]:
        """The repetitions to start now, each marked running: (sweep, cell, rep, token).
        Only as many as there are workers, so each start is decided on fresh results (a
        cell whose first runs all failed is not started again). While big runs remain,
        small ones keep room for one (see _admits). Every start booked by CPU counts
        STARTUP_CPU (no less than a small run's booking) at first, so a stream of small
        starts cannot starve a larger small run."""
        out = []
        big_left = [
            self.book.of(key)
            for s, c, key in self.order
            if self.book.of(key) >= HEAVY and self.plans[s.name].more(c, self.running[key], key[1])
        ]
        big_left += [f.booking for f in self.flights.values() if f.big]
        reserve = max(big_left, default=0.0)
        for sweep, cell, key in self.order:
            booking = self.book.of(key)
            for rep in self.plans[sweep.name].more(cell, self.running[key], key[1]):
                if len(self.flights) >= self.jobs:
                    return out
                if (
                    self.running[key]
                    and self.book.guessed(key)
                    and booking >= PROBE_CPU
                    and (sweep.cost is None or sweep.cost(cell) <= PROBE_S)
                ):
                    break  # one run measures what the cell costs before its others start
                flight = _Flight(booking, booking >= HEAVY, now if sweep.cpu else None)
                if self.flights and not _admits(flight.now(now), flight.big, self.in_flight(now), reserve, self.budget):
                    break  # too heavy to add now; a lighter cell may still fit
                self.running[key].add(rep)
                token = (*key, rep)
                self.flights[token] = flight
                out.append((sweep, cell, rep, token))
        return out

    def in_flight(self, now: float) -> list[tuple[float, bool]]:
        """(booking now, big) of every run in flight."""
        return [(f.now(now), f.big) for f in self.flights.values()]

    def finished(self, token: tuple[str, str, int], row: dict) -> None:
        name, key, rep = token
        self.flights.pop(token)
        self.running[(name, key)].discard(rep)
        self.plans[name].results.add(row)
        self.book.learn((name, key))


def replay(
    sweeps: list[Sweep],
    run: Callable[[Sweep, dict, int], dict],
    *,
    jobs: int | None = None,
    cpu_budget: float = DEFAULT_CPU_BUDGET,
) -> dict:
    """The sweeps' scheduling on a simulated clock, no transfer run: `run(sweep, cell,
    rep)` gives each repetition's row as a real one would be (`elapsed_s`, and for runs
    booked by CPU `cpu_s`; `ok` and the metric where margins or failures matter), e.g.
    from a recorded sheet. Returns {"wall_s", "runs", "peak_booked": the most cores booked
    at once, "peak_used": the most the runs in flight used (each row's CPU spread as its
    steady share after STARTUP_S and the rest in its first STARTUP_S), "started":
    {(sweep name, cell key, rep): start time}}."""
    jobs = max(1, jobs or default_jobs(sweeps))
    plans = {s.name: _Plan(s, _Results(s, None)) for s in sweeps}
    sched = _Scheduler(sweeps, plans, jobs, cpu_budget)
    now, ends, started, used = 0.0, [], {}, {}
    peak_booked = peak_used = 0.0
    while True:
        for sweep, cell, rep, token in sched.starts(now):
            row = {"sweep": sweep.name, "cell": token[1], **cell, "rep": rep, "ok": True, **run(sweep, cell, rep)}
            started[token] = now
            steady = run_cpu([row], steady=True) or 0.0
            total = (row.get("cpu_s") or 0.0) + (row.get("harness_cpu_s") or 0.0)
            first = min(row["elapsed_s"], STARTUP_S)
            used[token] = ((total - steady * (row["elapsed_s"] - first)) / first if first > 0 else 0.0, steady)
            ends.append((now + row["elapsed_s"], token, row))
        peak_booked = max(peak_booked, sum(b for b, _ in sched.in_flight(now)))
        peak_used = max(peak_used, sum(used[t][0 if now - started[t] < STARTUP_S else 1] for t in sched.flights))
        if not ends:
            break
        ends.sort(key=lambda e: e[0])
        # the next event: a run ends, or a start-up booking does (it may free room)
        starting = [
            f.started + STARTUP_S
            for f in sched.flights.values()
            if f.started is not None and f.started + STARTUP_S > now
        ]
        now = min([ends[0][0], *starting])
        while ends and ends[0][0] <= now:
            _, token, row = ends.pop(0)
            sched.finished(token, row)
    return {"wall_s": now, "runs": len(started), "peak_booked": peak_booked, "peak_used": peak_used, "started": started}


def run_cpu(rows: list[dict], steady: bool = False) -> float | None:
    """The most cores any of these runs used: (cpu_s + harness_cpu_s) / elapsed_s over
    the runs that recorded their CPU; None if none did. `steady`: after its start-up,
    which the scheduler books apart (STARTUP_CPU for STARTUP_S)."""
    start = STARTUP_CPU * STARTUP_S if steady else 0.0
    shares = [
        max(0.0, (r.get("cpu_s") or 0.0) + (r.get("harness_cpu_s") or 0.0) - start)
        / max(r["elapsed_s"] - (STARTUP_S if steady else 0.0), STARTUP_S)
        for r in rows
        if r.get("cpu_s") is not None and (r.get("elapsed_s") or 0) > 0
    ]
    return max(shares) if shares else None


def _upper_quartile(values) -> float:
    ordered = sorted(values)
    return ordered[int(0.75 * (len(ordered) - 1))]


class _Bookings:
    """What a run of each cell is booked at (cores): its sweep's `load`, or with `cpu`
    what the cell's runs measured after their start-up (run_cpu, steady); a cell none of
    whose runs has ended yet gets `cpu(cell)` corrected by its sweep's measured cells of a
    like guess (within a factor 2; the upper quartile of their measured / cpu(cell)): a
    cell's runs often all start together, so its own runs cannot correct it in time."""

    def __init__(self, cells: dict[tuple[str, str], tuple[Sweep, dict]], plans: dict[str, _Plan]):
        self.cells, self.plans = cells, plans
        self._measured: dict[tuple[str, str], float] = {}
        self._ratios: dict[str, dict[tuple[str, str], tuple[float, float]]] = {}
        # sweep -> {cell: (cpu(cell), measured / cpu(cell))}
        for key in cells:
            self.learn(key)

    def learn(self, key: tuple[str, str]) -> None:
        sweep, cell = self.cells[key]
        if sweep.cpu is None:
            return
        measured = run_cpu(self.plans[sweep.name].results.of_cell(key[1]), steady=True)
        if measured is not None:
            self._measured[key] = measured
            prior = sweep.cpu(cell)
            if prior > 0:
                self._ratios.setdefault(sweep.name, {})[key] = (prior, measured / prior)

    def guessed(self, key: tuple[str, str]) -> bool:
        """Booked by a guess: by CPU, and no run of the cell has been measured yet."""
        return self.cells[key][0].cpu is not None and key not in self._measured

    def of(self, key: tuple[str, str]) -> float:
        sweep, cell = self.cells[key]
        if sweep.cpu is None:
            return sweep.load(cell) if sweep.load else 0.0
        if key in self._measured:
            return self._measured[key]
        prior = sweep.cpu(cell)
        like = [r for p, r in self._ratios.get(sweep.name, {}).values() if prior / 2 <= p <= 2 * prior]
        return prior * (_upper_quartile(like) if like else 1.0)


@dataclass(frozen=True)
class _Flight:
    """A run in flight: its booking, whether it is big, and (booked by CPU) its start,
    so it counts at least STARTUP_CPU until STARTUP_S have passed."""

    booking: float
    big: bool
    started: float | None = None

    def now(self, t: float) -> float:
        if self.started is not None and t - self.started < STARTUP_S:
            return max(self.booking, STARTUP_CPU)
        return self.booking


def _admits(booking: float, big: bool, in_flight: list[tuple[float, bool]], reserve: float, budget: float) -> bool:
    """Whether a run booked at `booking` cores (`big`: at HEAVY or more) may start beside
    the runs in flight ((booking, big) each). A big run needs the total within the
    budget. Small runs count only among themselves, within `budget - reserve`: `reserve`
    is the room of a big run still to start or running (so one always finds room, and
    small runs never crowd a running one past the budget)."""
    if big:
        return sum(b for b, _ in in_flight) + booking <= budget + 1e-9
    return sum(b for b, g in in_flight if not g) + booking <= budget - reserve + 1e-9


def _run_one_rep(sweep: Sweep, cell: dict, rep: int) -> dict:
    seed = rep_seed(sweep, cell, rep)
    started, cpu_started = time.monotonic(), time.thread_time()
    try:
        out = dict(sweep.run_one(dict(cell), seed))
        ok = bool(out.pop("ok", False))
        error = out.pop("error", None)
        if not ok and not error:
            error = "failed (no reason given)"
    except Exception as e:  # a failed repetition, recorded with its reason
        out, ok, error = {}, False, f"{type(e).__name__}: {one_line(e)}" if str(e) else type(e).__name__
    return {
        "sweep": sweep.name,
        "cell": cell_key(cell),
        **cell,
        "rep": rep,
        "seed": seed,
        "ok": ok,
        **{k: v for k, v in out.items() if k not in cell},
        "error": one_line(error) if error else None,
        "elapsed_s": round(time.monotonic() - started, 3),
        "harness_cpu_s": round(time.thread_time() - cpu_started, 3),
    }


def _child_groups() -> set[int]:
    """Process groups of this process's children, other than our own group."""
    me, mine, groups = os.getpid(), os.getpgid(0), set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and int(fields[2]) != mine:
            groups.add(int(fields[2]))
    return groups


def _stop_workers(pool: ThreadPoolExecutor, in_flight: dict, before: set[int]) -> None:
    """Cancel queued repetitions and end the running ones: SIGTERM to the process group
    of every child this sweep started (each program and engine runs in its own group;
    children that existed before the sweep, e.g. in a notebook kernel, are left alone).
    A worker blocked waiting on its programs then sees them exit, and its own cleanup
    (`with Processes()`, the backend session) runs as after any failed run."""
    for fut in in_flight:
        fut.cancel()
    # A worker may be between starting its receiver and its sender: signal again, every
    # 0.1 s, the groups that appear until every running repetition has returned.
    while True:
        for group in _child_groups() - before:
            try:
                os.killpg(group, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        if not wait(list(in_flight), timeout=0.1)[1]:
            return


def tidy(sweep: Sweep, rows: list[dict]) -> pd.DataFrame:
    """One row per repetition: parameters, rep, seed, ok, measured fields, error."""
    frame = pd.DataFrame(rows)
    params = sweep.param_names
    if frame.empty:
        return pd.DataFrame(columns=["sweep", *params, "rep", "seed", "ok", "error"])
    order = {cell_key(c): i for i, c in enumerate(sweep.cells)}
    frame["_order"] = frame["cell"].map(order)
    frame = frame.sort_values(["_order", "rep"]).drop(columns=["_order", "cell"]).reset_index(drop=True)
    first = ["sweep", *params, "rep", "seed", "ok"]
    last = ["error", "elapsed_s", "harness_cpu_s"]
    middle = [c for c in frame.columns if c not in first and c not in last]
    return frame[[c for c in first + middle + last if c in frame.columns]]


def summarize_cells(frame: pd.DataFrame, params: list[str], metric: str) -> pd.DataFrame:
    """Per cell: n ok, n failed, mean, std, min, max, 95% CI and margin of `metric`, and
    `status` ok | partial (some runs failed) | failed (every run failed), with the most
    common error."""
    out = []
    if frame.empty:
        return pd.DataFrame(columns=[*params, "n", "failed", "mean", "status", "error"])
    for values, group in frame.groupby(params, sort=False, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        good = group[group["ok"].astype(bool)]
        bad = group[~group["ok"].astype(bool)]
        column = good[metric] if metric in good else pd.Series(dtype=float)
        s = summarize(pd.to_numeric(column, errors="coerce").tolist())
        # "failed" means no run succeeded; runs that succeeded without this metric (say,
        # no packet was resent, so no back-off was seen) leave the mean empty, not failed
        status = "failed" if good.empty else ("partial" if len(bad) else "ok")
        errors = Counter(e for e in bad.get("error", pd.Series(dtype=object)) if e)
        out.append(
            {
                **dict(zip(params, values)),
                **s.to_dict(),
                "failed": len(bad),
                "status": status,
                "error": errors.most_common(1)[0][0] if errors else None,
            }
        )
    return pd.DataFrame(out)
