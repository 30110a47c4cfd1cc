"""The course notebooks' runtime: what `assignments/source/<name>/results_sheet.ipynb`
calls, so each notebook stays a sheet of questions and not a program.

A `Lab` measures the programs in the student's folder with the sweeps of the
assignment's terminal sheet (assignments/<name>/spec.py names the sheet, its plans
and its questions: same link, cells, seeds and parallel runner as `rdtlab sheet NAME
--impl DIR`), turns each sweep into a numeric table (mean and 95% CI half-width per
cell) and draws the sheet's plots. Nothing here raises into the notebook while
measuring: a question that cannot be measured prints one line saying why and returns
an empty table, so the rest of the notebook still runs.

The `assert_*` functions are the notebooks' test cells (visible and hidden): each
raises AssertionError with one line naming what is wrong. The rules they apply are pure
functions of tables, in harness/notebook_rules.py. The re-measurement rule
(`REMEASURE_RULE`) is public: students read it in their feedback. The hidden
re-measurement hands the reported table in as data (`hand_in`); under `rdtlab grade
--gradebook` the grader judges it outside the kernel (grader/notebook/remeasure.py: its own
sample, the submitted programs in the jail, `Lab.rerun` and `Lab.judge`), so the
kernel's own verdict is only the student's check.

Mode: `quick` or `full` (the sheet's settings), chosen by the notebook's MODE and
overridden by RDTLAB_NOTEBOOK_MODE (which also takes `tiny`, the course tests' plan).
RDTLAB_NOTEBOOK_SIZE (bytes) and RDTLAB_NOTEBOOK_RUNS change a plan's file size and
runs per cell. RDTLAB_NOTEBOOK_PROGRESS=off hides the sweeps' progress bars (the grader's
kernels run so: grader/notebook/notebook_jail.py).
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pandas as pd

from harness import backends
from harness.assignments import get as get_assignment
from harness.backends.tcp import DEFAULT as TCP_DEFAULT, check as check_tcp_cc, runs_kernel_tcp
from harness.procs import UsageError
from harness.experiments.sweep import (
    HEAVY,
    Sweep,
    SweepInterrupted,
    is_complete,
    one_line,
    rep_seed,
    run_sweeps,
    summarize_cells,
)
from harness.experiments.transfers import TransferRun
from harness import notebook_rules as rules

# the grading rules, pure (harness/notebook_rules.py), by the names notebooks and the grader use
from harness.notebook_rules import (
    FACTOR,
    RANGES,
    RERUN_ROUNDS,
    REMEASURE_RULE,
    UNITS,
    accepted_range,
    finite as _finite,
)
from harness.sheets import programs
from harness.sheets.sheet import Plot, Results

MODES = ("quick", "full", "tiny")
RESULTS_DIR = ".rdtlab"  # the folder's measurements, so a re-run resumes


def columns(q: str, assignment: str) -> list[str]:
    """The columns of question q's table (of `assignment`), in order."""
    return rules.columns_of(get_assignment(assignment).questions[q])


def resolve_mode(mode: str) -> str:
    """The notebook's MODE unless RDTLAB_NOTEBOOK_MODE overrides it; unknown -> quick, said."""
    chosen = os.environ.get("RDTLAB_NOTEBOOK_MODE") or mode
    if chosen not in MODES:
        print(f"mode {chosen!r} is not one of {', '.join(MODES)}; using quick")
        return "quick"
    return chosen


def plan_for(mode: str, assignment: str):
    spec = get_assignment(assignment)
    plan = spec.plans.get(mode, spec.plans["quick"])
    sizes = {f: _env_int("RDTLAB_NOTEBOOK_SIZE", getattr(plan, f)) for f in spec.sizes}
    return replace(plan, **sizes, runs=_env_int("RDTLAB_NOTEBOOK_RUNS", plan.runs))


def tcp_cc_missing(name: str | None) -> str | None:
    """Why kernel TCP cannot run with congestion control `name` on this machine (one
    line), or None; a name that is no algorithm's at all is the caller's mistake (UsageError)."""
    if name is None:
        return None
    try:
        check_tcp_cc(name)
    except UsageError as e:
        if not isinstance(name, str) or not name:
            raise
        return f"kernel TCP is not measured here: {e}"
    return None


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        print(f"{name}={text!r} is not a positive whole number; using {default}")
        return default
    return int(text)


class Lab:
    """The student's folder, measured over the assignment's link."""

    def __init__(
        self,
        mode: str,
        assignment: str,
        folder: str = ".",
        backend: str = "auto",
        seed: int = 1,
        progress: bool | None = None,
        tcp_cc: str | None = None,
    ):
        self.spec = get_assignment(assignment)
        self.models = self.spec.models  # the model answers' functions
        self.mode = resolve_mode(mode)
        self.plan = plan_for(self.mode, assignment)
        self.folder = os.path.abspath(folder)
        self.backend = os.environ.get("RDTLAB_NOTEBOOK_BACKEND", backend)
        # which backend and why, said by the set-up cell; each backend's runs are kept apart
        self.backend_used, self.backend_line = backends.describe(self.backend)
        # None: shown, unless RDTLAB_NOTEBOOK_PROGRESS=off
        self.progress = progress if progress is not None else os.environ.get("RDTLAB_NOTEBOOK_PROGRESS") != "off"
        # kernel TCP's congestion control, pinned in the namespaces (harness/backends/tcp.py);
        # None: the kit's default (cubic), whatever the machine's. One this machine lacks
        # leaves the kernel-TCP questions unmeasured (the set-up cell's description and
        # those questions say why; the rest still runs).
        tcp_cc = None if tcp_cc == TCP_DEFAULT else tcp_cc  # the same runs, kept under the same name
        self.tcp_cc, self.tcp_cc_missing = tcp_cc, tcp_cc_missing(tcp_cc)
        self.sheet = self.spec.sheet(
            self.folder,
            self.plan,
            self.backend,
            seed=seed,
            **({"tcp_cc": tcp_cc} if tcp_cc and runs_kernel_tcp(self.spec.sheet) else {}),
        )
        # A notebook's runs and the grader's re-measurements book runs by their load, as
        # before the sheets booked them by measured CPU (harness/experiments/sweep.py): the
        # class-scale grading that runs several notebooks at once is measured that way.
        self.sweeps = {
            s.name: replace(s, cpu=None) if isinstance(s, Sweep) else s
            for sec in self.sheet.sections
            for s in sec.sweeps
        }
        self.frames: dict[str, pd.DataFrame] = {}

    def cells(self, q: str) -> list[dict]:
        """q's cells; none yet for a sweep built from others' results (measure it first)."""
        return getattr(self.sweeps[q], "cells", [])

    def _built(self, q: str):
        """q's sweep; a sheet's Deferred one (cells chosen from other sweeps' rows, e.g. the
        best window of a tuning sweep) is built here from this notebook's measurements."""
        sweep = self.sweeps[q]
        if hasattr(sweep, "after"):
            missing = [n for n in sweep.after if n not in self.frames]
            if missing:
                raise RuntimeError(f"measure {', '.join(missing)} first: {q} is chosen from its results")
            sweep = self.sweeps[q] = replace(sweep.build(dict(self.frames)), cpu=None)
        return sweep

    def measured_on_netns(self, q: str) -> str | None:
        """The complete netns runs of a question with no programs of the student's (kernel
        TCP, iperf3) kept in the folder, for a kernel that cannot run them itself: a
        grader's jail has only the local backend, so the grader measures these once outside
        it (grader/notebook/notebook_jail.py), as a student's earlier session on netns did."""
        if self.spec.questions[q].programs or self.backend_used == "netns":
            return None
        path = self.results_path(q, backend="netns")
        return path if os.path.exists(path) and is_complete(self._built(q), path) else None

    def cannot_measure(self, q: str) -> str | None:
        """Why q's runs cannot be had here: neither measured on this backend nor kept from netns."""
        why = self.unavailable(q)
        return why if why and not self.measured_on_netns(q) else None

    def results_path(self, q: str, backend: str | None = None) -> str:
        """Where question q's runs are kept, so re-running the cell resumes. The name holds
        the plan and a hash of the programs: an edited program is measured afresh."""
        digest = hashlib.sha256(repr(self.plan).encode() + (f" tcp_cc={self.tcp_cc}".encode() if self.tcp_cc else b""))
        digest.update(programs.digest_of(self.folder, self.spec.questions[q].programs))
        return os.path.join(
            self.folder,
            RESULTS_DIR,
            f"{q}-{self.mode}-{self.plan.size}-{self.plan.runs}-"
            f"{backend or self.backend_used}-{digest.hexdigest()[:12]}.jsonl",
        )

    def __repr__(self) -> str:
        sizes = " / ".join(f"{getattr(self.plan, f):,}" for f in dict.fromkeys(self.spec.sizes))
        tcp = ""
        if runs_kernel_tcp(self.spec.sheet):
            tcp = "\n" + (
                self.tcp_cc_missing
                or f"Kernel TCP: {self.tcp_cc or TCP_DEFAULT} congestion control, "
                f"pinned in the link's namespaces whatever this machine's default"
            )
        return (
            f"Lab: {self.spec.name}, {self.mode} mode, {sizes} bytes per transfer, "
            f"{self.plan.runs} runs per cell, programs in {self.folder}\n{self.backend_line}{tcp}"
        )

    # ---- measuring -------------------------------------------------------------------

    def unavailable(self, q: str) -> str | None:
        missing = programs.missing(self.folder, self.spec.questions[q].programs)
        if missing:
            return f"{self.folder} has no {', '.join(missing)}"
        if self.tcp_cc_missing and not self.spec.questions[q].programs:
            return self.tcp_cc_missing
        # what the sheet itself says of the section that runs q (iperf3 or kernel TCP
        # needing the netns backend), as `rdtlab sheet` prints it
        return next((sec.unavailable for sec in self.sheet.sections if any(s.name == q for s in sec.sweeps)), None)

    def measure(self, q: str) -> pd.DataFrame:
        """Run (or resume) question q's sweep; its table, or an empty one and one line why."""
        title = self.spec.questions[q].title
        why = self.unavailable(q)
        if not why:
            path = self.results_path(q)
        else:
            path = self.measured_on_netns(q)
            if not path:
                print(f"{title}: not measured: {why}")
                return self.table(q)
            print(f"{title}: the runs measured on the netns backend (this kernel cannot: {why})")
        try:
            sweep = self._built(q) if why else self._keeping_first_traces(self._built(q), self._traces(q, path))
            frames = run_sweeps([sweep], results_path=path, progress=self.progress, desc=title)
        except SweepInterrupted as e:
            frames = e.frames
            print(f"{title}: interrupted; run the cell again to measure the rest")
        except Exception as e:  # the notebook goes on: one line, no traceback
            print(f"{title}: not measured: {type(e).__name__}: {one_line(e)}")
            return self.table(q)
        self.frames[q] = frames[q]
        if not self.spec.questions[q].programs and "tcp_cc" in frames[q]:
            ran = sorted(set(frames[q]["tcp_cc"].dropna()))
            if ran:  # read back from the connections, not assumed
                print(f"{title}: kernel TCP ran {', '.join(ran)} (read back from its connections)")
        table = self.table(q)
        failed = table[table["failed"] > 0]
        if len(failed):
            errors = self.frames[q].loc[~self.frames[q]["ok"].astype(bool), "error"].dropna()
            print(
                f"{title}: {len(failed)} of {len(table)} cells had failed runs, e.g. "
                f"{self._cell_text(q, failed.iloc[0])}: {errors.iloc[0] if len(errors) else 'failed'}"
            )
        return table

    def disturbance(self, q: str) -> dict:
        """What the machine did to this lab's runs of q: the engine's worst p99 lag
        (`lag_p99_us`), and the host's steal over all of them (`steal`, a share of the
        CPU time, each run weighted by its length: one short run's share is coarse, as
        /proc/stat counts in 10 ms ticks); None where no run says."""
        frame = self.frames.get(q)
        if frame is None:
            frame = pd.DataFrame()
        lag = pd.to_numeric(frame["lag_p99_us"], errors="coerce").max() if "lag_p99_us" in frame else math.nan
        steal = math.nan
        if "steal" in frame:
            shares = pd.to_numeric(frame["steal"], errors="coerce")
            weights = (
                pd.to_numeric(frame["elapsed_s"], errors="coerce")
                if "elapsed_s" in frame
                else pd.Series(1.0, index=frame.index)
            )
            counted = shares.notna() & (weights > 0)
            if counted.any():
                steal = float((shares[counted] * weights[counted]).sum() / weights[counted].sum())
        return {
            "lag_p99_us": float(lag) if math.isfinite(lag) else None,
            "steal": steal if math.isfinite(steal) else None,
        }

    def table(self, q: str) -> pd.DataFrame:
        """One row per cell of the question, in sheet order: parameters, then per metric
        the mean and the 95% CI half-width, then ok and failed runs. NaN = not measured."""
        spec = self.spec.questions[q]
        frame = self.frames.get(q, pd.DataFrame())
        params = list(spec.params)
        summaries = {m: _by_cell(frame, params, m) for m in spec.metrics}
        rows = []
        for cell in self.cells(q):
            key = tuple(cell[p] for p in params)
            row = {col: cell[p] for p, col in spec.params.items()}
            counts = (0, 0)
            for metric, col in spec.metrics.items():
                s = summaries[metric].get(key)
                row[col] = s["mean"] if s and s["n"] else math.nan
                row[f"{col}_ci95"] = s["margin"] if s and s["n"] else math.nan
                counts = (s["n"], s["failed"]) if s else counts
            row["runs"], row["failed"] = counts
            rows.append(row)
        return pd.DataFrame(rows, columns=columns(q, self.spec.name))

    # ---- plots -------------------------------------------------------------------------

    def plot(self, q: str | None = None, title: str | None = None):
        """The sheet's plots of question q (those of its section), or those whose title
        starts with `title` (a string or a tuple of them), two side by side per row:
        shown (in a kernel) and returned. Not a pyplot figure: shown at its own size
        (harness.plots.inline)."""
        from harness.plots.inline import LaidOut, show

        blocks = [
            b
            for sec in self.sheet.sections
            for b in sec.blocks
            if isinstance(b, Plot)
            and (
                title is not None
                and b.title.startswith(title)
                or q is not None
                and any(s.name == q for s in sec.sweeps)
            )
        ]
        results = Results(frames=dict(self.frames))
        cols = min(2, max(1, len(blocks)))
        rows = max(1, math.ceil(len(blocks) / cols))
        fig = LaidOut(figsize=(7 * cols, 4.2 * rows), layout="constrained")
        axes = fig.subplots(rows, cols, squeeze=False)
        for block, ax in zip(blocks, axes.flat):
            try:
                block.draw(results, ax)
            except Exception as e:  # a plot of nothing measured is not an error worth a traceback
                ax.set_title(f"{block.title}: nothing to plot ({one_line(e)})", fontsize=8)
        show(fig)
        return fig

    def picture(self, q: str, focus=None, **params):
        """One transfer of question q's cell `params` (e.g. delay=5, window=64), drawn from
        what crossed the link (harness.plots: data and ACKs against time, losses, resends,
        timeouts, the window). A failed transfer is drawn too: that is when it helps.
        It is the cell's first measured run (its seed, its trace kept by `measure`), so the
        picture shows what the table counted; a cell not measured here yet runs that seed."""
        from harness.plots import draw, load
        from harness.transfer import Link as Netem, run_transfer

        title = self.spec.questions[q].title
        cell = next((c for c in self.cells(q) if all(c.get(k) == v for k, v in params.items())), None)
        why = self.unavailable(q) or (None if cell else f"no cell of {q} has {params}")
        if why:
            print(f"{title}: no picture: {why}")
            return None
        sweep = self.sweeps[q]
        run, values = sweep.run_one, {**sweep.run_one.fixed, **cell}
        seed = rep_seed(sweep, cell, 0)
        limit = run.time_limit(values) if callable(run.time_limit) else run.time_limit
        measured = self._first_run(q, seed)
        try:
            if measured is not None:  # the cell's first measured run, as the table has it
                path, ok, error = measured
                transfer = load(path)
            else:
                with tempfile.TemporaryDirectory(prefix="rdtlab-picture-") as tmp, ThreadPoolExecutor(1) as pool:
                    # in a worker thread, as the sweeps do: the kernel's own thread runs an asyncio
                    # loop, which the netns backend's netlink calls must not share
                    res = pool.submit(
                        run_transfer,
                        run.sender,
                        run.receiver,
                        Netem(run.link.format_map(values), None, run.shared_queue),
                        params=values,
                        size=int(values.get("size", run.size)),
                        seed=seed,
                        backend=run.backend,
                        time_limit=limit,
                        trace=os.path.join(tmp, "link.trace"),
                    ).result()
                    transfer, ok, error = load(res), res.ok, res.error
            fig = draw(
                transfer,
                focus=focus,
                window=cell.get("window"),
                figsize=(11, 5.5),
                title=f"{title}: " + " ".join(f"{k}={v}" for k, v in cell.items()),
            )
        except Exception as e:
            print(f"{title}: no picture: {type(e).__name__}: {one_line(e)}")
            return None
        if not ok:
            print(f"this transfer failed: {error}")
        return fig  # the notebook shows it (a cell's last value)

    def _traces(self, q: str, results_path: str | None = None) -> str:
        """The folder of q's kept traces, beside its runs (the same programs and plan;
        `results_path`: q's, where the caller has it)."""
        return os.path.splitext(results_path or self.results_path(q))[0] + ".traces"

    @staticmethod
    def _keeping_first_traces(sweep, folder: str):
        """`sweep` keeping, in `folder`, the engine's trace of each cell's first run (the
        one a picture of the cell shows: Lab.picture), so the picture draws the run
        measured instead of running it again. Other repetitions keep none."""
        if not isinstance(sweep.run_one, TransferRun) or not hasattr(sweep, "cells"):
            return sweep
        os.makedirs(folder, exist_ok=True)
        firsts = {seed: _kept_trace(folder, seed) for seed in (rep_seed(sweep, c, 0) for c in sweep.cells)}
        return replace(sweep, run_one=replace(sweep.run_one, keep_trace=firsts.get))

    def _first_run(self, q: str, seed: int) -> tuple[str, bool, str | None] | None:
        """(its kept trace, ok, error) of q's measured run with `seed`, when this Lab
        measured it and the trace is there; else None."""
        frame = self.frames.get(q)
        if frame is None or "seed" not in frame:
            return None
        rows = frame[frame["seed"] == seed]
        path = _kept_trace(self._traces(q), seed)
        if rows.empty or not os.path.isfile(path) or os.path.getsize(path) == 0:
            return None
        row = rows.iloc[-1]
        return path, bool(row["ok"]), (row.get("error") if isinstance(row.get("error"), str) else None)

    # ---- re-measuring (hidden tests; the grader's, outside the kernel) -----------------

    def sample(self, q: str, k: int = 2, seed: int | None = None) -> list[dict]:
        """k cells of q to re-measure, light ones (not CPU-sensitive, not timing-bound: the
        assignment's `timing_bound`), in sweep order: drawn
        at random from `seed` (the grader's, secret: grader/notebook/remeasure.py), else spread
        evenly over the sweep (the public sample a student's own check uses)."""
        sweep, racy = self.sweeps[q], self.spec.questions[q].timing_bound
        light = [c for c in sweep.cells if (sweep.load is None or sweep.load(c) < HEAVY) and not (racy and racy(c))]
        cells = light or sweep.cells
        if len(cells) <= k:
            return cells
        if seed is not None:
            chosen = sorted(random.Random(seed).sample(range(len(cells)), k))
            return [cells[i] for i in chosen]
        step = (len(cells) - 1) / (k - 1) if k > 1 else 0
        return [cells[round(i * step)] for i in range(k)]

    def rerun(self, q: str, cells: list[dict], programs=None, reruns: int = 1) -> pd.DataFrame:
        """Fresh runs of `cells` with the same programs, link and seeds (no stored results;
        the plan's runs, no repeat-until-margin), each seed `reruns` times. `programs`
        (Program -> Program) changes how each program starts: the grader jails them."""
        return self.rerun_all({q: cells}, programs, reruns)[q]

    def rerun_all(self, samples: dict[str, list[dict]], programs=None, reruns: int = 1) -> dict[str, pd.DataFrame]:
        """`rerun` of several questions' cells at once: every repeat of every question in
        one pool (each its own sweep, drawing its question's seeds), so they overlap as a
        sheet's cells do, within the same CPU budget."""
        sweeps = []
        for q, cells in samples.items():
            run = self.sweeps[q].run_one
            if programs is not None:
                run = _with_programs(run, programs)
            sweeps += [
                replace(self.sweeps[q], name=f"{q}#{i}", seed_name=q, run_one=run, cells=cells, until_margin=None)
                for i in range(reruns)
            ]
        frames = run_sweeps(sweeps, results_path=None, progress=False)
        return {
            q: pd.concat([frames[f"{q}#{i}"].assign(sweep=q) for i in range(reruns)], ignore_index=True)
            for q in samples
        }

    def judge(
        self, q: str, reported: pd.DataFrame, cells: list[dict], frame: pd.DataFrame
    ) -> tuple[list[str], list[str]]:
        """(one line per reported number the fresh runs in `frame` cannot support, one line
        per cell and metric with the fresh figures). Only these runs set the accepted range."""
        return rules.judge(q, self.spec.questions[q], self.spec.tolerance, reported, cells, frame)

    def misses(
        self, q: str, reported: pd.DataFrame, cells: list[dict], frame: pd.DataFrame
    ) -> tuple[list[rules.Miss], list[str]]:
        """`judge`, each reported number it cannot support as a Miss (how it misses)."""
        return rules.misses(q, self.spec.questions[q], self.spec.tolerance, reported, cells, frame)

    def remeasure(self, q: str, reported: pd.DataFrame, k: int = 2) -> list[str]:
        """Re-run the public sample of k cells here and return one line per reported number
        the re-measurement cannot support (the student's own check: the grade is the
        grader's, which draws its cells in secret and runs them outside this kernel)."""
        sample = self.sample(q, k)
        try:
            frame = None
            for reruns in RERUN_ROUNDS:  # as the grader does: more runs while a figure falls outside
                fresh = self.rerun(q, sample, reruns=reruns)
                frame = fresh if frame is None else pd.concat([frame, fresh], ignore_index=True)
                problems = self.judge(q, reported, sample, frame)[0]
                if not problems:
                    break
        except Exception as e:
            return [f"{self.spec.questions[q].title}: re-measurement failed: {type(e).__name__}: {one_line(e)}"]
        return problems

    def _cell_text(self, q: str, key) -> str:
        return rules.cell_text(q, self.spec.questions[q], key)


def _with_programs(run, programs):
    """A sweep's run (a TransferRun, or a run of several made of one: ObjectsRun) with
    each of its programs passed through `programs`."""
    if hasattr(run, "sender") and hasattr(run, "receiver"):
        return replace(run, sender=programs(run.sender), receiver=programs(run.receiver))
    if hasattr(run, "transfer"):
        return replace(run, transfer=_with_programs(run.transfer, programs))
    raise ValueError(f"a {type(run).__name__} runs no programs to re-run")


def _by_cell(frame: pd.DataFrame, params: list[str], metric: str) -> dict[tuple, dict]:
    if frame is None or frame.empty or any(p not in frame for p in params):
        return {}
    table = summarize_cells(frame, params, metric)
    return {tuple(r[p] for p in params): r for r in table.to_dict("records")}


# ---- checks the notebook's test cells call ---------------------------------------------


def rule(lab: Lab, rounds: tuple[int, ...] = RERUN_ROUNDS) -> str:
    """REMEASURE_RULE with how often each seed runs, the assignment's slack per metric and
    the columns its questions show but do not judge."""
    shown = dict.fromkeys(q.metrics[m] for q in lab.spec.questions.values() for m in q.shown)
    return rules.rule(lab.spec.tolerance, rounds, tuple(shown))


def check_table(q: str, table, lab: Lab) -> list[str]:
    """One line per thing wrong with a reported table of the lab's question q
    (harness/notebook_rules.py): its shape and each of its cells."""
    return rules.check_table(q, table, lab.spec.questions[q], lab.cells(q), _kernel_tcp_not_here(lab, q))


def fail(problems: list[str], note: str = "") -> None:
    """What the test cells' checks raise: the first problem (and a count of the rest), one line."""
    if problems:
        extra = f" [{len(problems) - 1} more: {'; '.join(problems[1:3])}]" if len(problems) > 1 else ""
        raise AssertionError(problems[0] + extra + (f" — {note}" if note else ""))


def assert_table(q: str, table, lab: Lab) -> None:
    """Visible test: the table has the columns, units and cells of question q."""
    fail(check_table(q, table, lab))
    why = _kernel_tcp_not_here(lab, q)
    if why:
        print(f"{q}_table: its runs are not checked here: {why}")


def _kernel_tcp_not_here(lab: Lab, q: str) -> str | None:
    """Why a question with no programs of the student's (kernel TCP, iperf3) has no runs
    here (a grader's jail without the class's netns runs): only its table's shape counts."""
    if lab.spec.questions[q].programs:
        return None
    return lab.cannot_measure(q)


# The reported table as data in the hidden test's output: after the kernel is gone, the
# grader reads it from the autograded notebook (grader/notebook/remeasure.py) and decides the
# test's score outside the kernel.
HAND_IN = "application/vnd.rdtlab.table+json"
# Set in a kernel whose re-measured cells the grader decides (grader/notebook/autograde.py): the
# kernel's own re-measurement would be time spent on a verdict nobody reads.
REMEASURED_OUTSIDE = "RDTLAB_REMEASURED_OUTSIDE"


def hand_in(q: str, table, disturbance: dict | None = None) -> None:
    """Show `table` (q's reported table) as data in this cell's output, for the grader,
    with the worst the machine did to this kernel's runs of q (Lab.disturbance): the
    kernel's word that its figures were disturbed, which can only have a failed cell
    graded again (grader/notebook/remeasure.py), never passed."""
    from IPython import get_ipython

    if not isinstance(table, pd.DataFrame) or get_ipython() is None:  # no kernel, no output to read it from
        return
    import json
    from IPython.display import display

    data = json.loads(table.to_json(orient="split", index=False))
    display(
        {
            HAND_IN: {"question": q, **data, **(disturbance or {})},
            "text/plain": f"{q}_table handed in: {len(table)} rows, re-measured by the grader",
        },
        raw=True,
    )


def handed_in(payload) -> pd.DataFrame:
    """The table `hand_in` showed, from its output's data (a ValueError if it is not one)."""
    if (
        not isinstance(payload, dict)
        or not isinstance(payload.get("columns"), list)
        or not isinstance(payload.get("data"), list)
    ):
        raise ValueError("not a table (columns and data)")
    frame = pd.DataFrame(payload["data"], columns=payload["columns"])
    for col in frame.columns:  # JSON's null for NaN: a column of numbers and nulls is numeric
        if frame[col].dtype == object and all(v is None or isinstance(v, (int, float)) for v in frame[col]):
            frame[col] = pd.to_numeric(frame[col], errors="coerce")
    return frame


def assert_supported(lab: Lab, q: str, table, k: int = 2) -> None:
    """Hidden test: hand the table in, then re-measure k cells here and fail a number they
    cannot support. Under `rdtlab grade --gradebook` the grader replaces this verdict
    with its own, from runs outside the kernel (grader/notebook/remeasure.py)."""
    hand_in(q, table, lab.disturbance(q))
    fail(check_table(q, table, lab))
    if os.environ.get(REMEASURED_OUTSIDE):
        print(f"{q}_table: re-measured by the grader outside this notebook")
        return
    fail(lab.remeasure(q, table, k), rule(lab))


def assert_close(name: str, answer, expected: float, rel: float) -> None:
    """A model answer within `rel` (relative) of harness.models' value."""
    if not _finite(answer):
        fail([f"{name} must be a number, got {answer!r}"])
    if abs(float(answer) - expected) > rel * abs(expected):
        fail([f"{name} = {float(answer):.4g}, expected {expected:.4g} within {rel:.0%}"])


def assert_one_of(name: str, answer, allowed: set, why: str) -> None:
    """An answer derived from the student's own table: one of the values `allowed` (`why` says the rule)."""
    if answer not in allowed:
        fail([f"{name} = {answer!r}, but your table gives {sorted(allowed)} ({why})"])


def assert_close_each(name: str, answer, expected: dict, rel: float) -> None:
    """A dict answer {key: number}: every key of `expected`, each within `rel` of its value."""
    if not isinstance(answer, dict):
        fail([f"{name} must be a dict {{key: number}}, got {type(answer).__name__}"])
    wrong = []
    for key, value in expected.items():
        got = answer.get(key)
        if not _finite(got):
            wrong.append(f"{name}[{key!r}] is missing or not a number ({got!r})")
        elif abs(float(got) - value) > rel * abs(value):
            wrong.append(f"{name}[{key!r}] = {float(got):.4g}, expected {value:.4g} within {rel:.0%}")
    fail(wrong)


def _kept_trace(folder: str, seed: int) -> str:
    """The file of the run with `seed` among a question's kept traces (Lab._traces)."""
    return os.path.join(folder, f"{seed}.trace")


def given(name: str, scope: dict):
    """The student's answer `name` from the notebook's globals, or one line saying it is missing."""
    if name not in scope:
        raise AssertionError(f"{name} is not set: run its answer cell (does it still raise NotImplementedError?)")
    return scope[name]
