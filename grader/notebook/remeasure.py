"""The notebooks' re-measured cells, decided outside the student's kernel.

A notebook's hidden test `test_<q>_remeasured` re-measures inside the student's own
kernel, where an answer cell can patch whatever the test calls (the assertion, the
`Lab`, its cache, AssertionError itself). So after the jailed autograde
(grader/notebook/autograde.py), with the kernel dead, the grader:
  - reads the table the test handed in (harness.notebook.hand_in: data in that cell's
    output of the autograded .ipynb on disk); none, or more than one, scores 0;
  - draws the cells to re-measure from a seed the student cannot know: an HMAC of a key
    kept in the course folder (hidden from every kernel) with the assignment, the
    student, the question and the reported table, drawn now, after the kernel ran;
  - re-runs those cells with the submitted programs (nbgrader's submitted/ folder, not
    the kernel's copy) in the programs' jail (grader.jail.sandbox), on the same link, seeds
    and backend (local, as in the jailed kernel; each run in a namespace of its own)
    (each seed once, and again while a reported figure falls outside, up to four
    times: harness.notebook_rules.RERUN_ROUNDS, so one run the machine slowed does not
    fail an honest table); only these fresh runs set the accepted range
    (harness.notebook.REMEASURE_RULE); timing-bound and CPU-heavy cells are never drawn;
  - writes the verdict: the cell's score in nbgrader's gradebook
    (grader.notebook.gradebook.set_cell_scores, over what the kernel's run of the test gave) and the rule with the fresh
    figures as the cell's output in the autograded notebook, which nbgrader's
    generate_feedback shows the student.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import hmac
import json
import math
import os
import re
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field, replace

import nbformat
import pandas as pd

from harness.engine import REPO
from harness.experiments.sweep import one_line
from harness.notebook import HAND_IN, RERUN_ROUNDS, Lab, check_table, handed_in as table_of, rule
from harness.notebook_rules import FAILED, MISSING, Miss, finite, runs_of
from harness.steal import NOTABLE
from harness.transfer import LAG_WARN_US

from grader.jail.sandbox import Limits, Sandbox, jail_scratch, prepare_scratch

KEY_FILE = ".rdtlab-remeasure.key"  # in the course folder: the kernels never see it
GRADE_ID = re.compile(r"^test_(\w+)_remeasured$")
SAMPLE = re.compile(r"\bk\s*=\s*(\d+)")
MARK = "rdtlab-remeasure"  # the grader's own outputs in the autograded notebook
NOT_GRADED = "not graded: the machine may have made this miss"  # a cell that failed on disturbed runs
# Where the jailed kernel measured the figures it checks (the same link and seeds, each
# run in a network namespace of its own), without a netns backend's set-up per run.
REMEASURE_BACKEND = "local"


@dataclass
class Verdict:
    notebook: str  # the notebook's name (no .ipynb), as nbgrader's gradebook has it
    grade_id: str
    question: str
    passed: bool
    reason: str  # one line: why not (empty when passed)
    figures: list[str] = field(default_factory=list)  # the fresh runs, per sampled cell and metric
    rule: str = ""
    disturbed: str = ""  # failed on runs the machine disturbed: the engine's word (grader.disturbance)
    ours_only: bool = False  # disturbed in the grader's own runs alone: re-measuring again is enough

    def text(self) -> str:
        head = (
            f"Re-measured by the grader outside your notebook: {'passed' if self.passed else 'failed: ' + self.reason}"
        )
        return "\n".join([head, *self.figures, self.rule]).strip() + "\n"


def course_key(course_dir: str) -> bytes:
    """The course's re-measurement key, root's alone: made once (written whole, then
    linked into place, so a second grader at once reads the same key, never half of it)."""
    path = os.path.join(course_dir, KEY_FILE)
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=course_dir, prefix=".rdtlab-key-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(32))
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    with open(path, "rb") as f:
        return f.read()


def draw_seed(key: bytes, assignment: str, student: str, q: str, reported: dict) -> int:
    """The sample's seed: unknowable without the key, and new for any other table."""
    message = json.dumps([assignment, student, q, reported], sort_keys=True, default=str).encode()
    return int.from_bytes(hmac.new(key, message, hashlib.sha256).digest()[:8], "big")


def remeasured_cells(nb: nbformat.NotebookNode) -> list[tuple[nbformat.NotebookNode, str, int]]:
    """(cell, question, k) of each re-measured test cell (k from its source, restored by
    nbgrader from the gradebook: the student cannot change it)."""
    found = []
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        m = GRADE_ID.match(grade_id)
        if m and cell.get("cell_type") == "code":
            k = SAMPLE.search(cell.source)
            found.append((cell, m.group(1), int(k.group(1)) if k else 2))
    return found


def handed_in(cell: nbformat.NotebookNode, q: str):
    """(the payload of the table handed in for q, None) or (None, why not)."""
    payloads = [
        o["data"][HAND_IN]
        for o in cell.get("outputs", [])
        if o.get("output_type") in ("display_data", "execute_result") and HAND_IN in o.get("data", {})
    ]
    payloads = [p for p in payloads if isinstance(p, dict) and p.get("question") == q]
    if not payloads:
        return None, (
            f"no {q}_table was handed in: its test cell showed none (was {q}_table set, "
            f"or did a cell change what the test calls?)"
        )
    if len(payloads) > 1:
        return None, f"{q}_table was handed in {len(payloads)} times: which one is yours cannot be told"
    return payloads[0], None


@contextlib.contextmanager
def jailed_copy(folder: str, hidden: list[str], limits: Limits | None = None):
    """A private copy of `folder` in a jail of its own (its uid, a size-capped tmpfs):
    the Sandbox its programs run in. Everything it started is killed afterwards."""
    from grader.protocol.grade import allocate_uid

    limits = limits or Limits()
    uid = allocate_uid()
    with jail_scratch(uid, "remeasure", limits.scratch_bytes) as scratch:  # whose it is (tests, a sweep)
        work = prepare_scratch(folder, scratch, uid, ignore=shutil.ignore_patterns(".rdtlab", "*.ipynb"))
        yield Sandbox(uid, work, hidden, limits)


def jailed(sandbox: Sandbox):
    """Program -> the same program started in `sandbox`."""
    prefix = sandbox.template([]).rstrip()
    return lambda program: replace(program, command=f"{prefix} {program.command}")


def remeasure_student(
    course_dir: str,
    assignment: str,
    student: str,
    hidden: tuple[str, ...] = (),
    crowding=lambda: "",
    kernel_crowded: str = "",
) -> list[Verdict]:
    """The verdicts of one student's re-measured cells (the autograded notebooks are
    rewritten with them; grader.notebook.gradebook.set_cell_scores puts them in the gradebook).
    Every question's sample is re-run in one pool, then the samples a reported figure
    fell outside of once more, together (see _decide_all). A cell that fails on figures
    the machine disturbed is not graded (Verdict.disturbed): `crowding()` says, when the
    verdicts are made, whether the machine crowded this re-measurement, else '';
    `kernel_crowded` whether it crowded the kernel's measurements."""
    course_dir = os.path.abspath(course_dir)
    programs = os.path.join(course_dir, "submitted", student, assignment)
    notebooks = {
        path: nbformat.read(path, as_version=4)
        for path in sorted(glob.glob(os.path.join(course_dir, "autograded", student, assignment, "*.ipynb")))
    }
    found = [(path, cell, q, k) for path, nb in notebooks.items() for cell, q, k in remeasured_cells(nb)]
    if not found:
        return []
    key = course_key(course_dir)
    with jailed_copy(programs, sorted({course_dir, str(REPO), *(os.path.abspath(h) for h in hidden)})) as sandbox:
        lab = Lab("quick", assignment, folder=sandbox.scratch, backend=REMEASURE_BACKEND, progress=False)
        verdicts = []
        for path, cell, q, k in found:
            name = os.path.splitext(os.path.basename(path))[0]
            verdicts.append(
                _prepare(
                    Verdict(name, cell.metadata.nbgrader["grade_id"], q, False, "", rule=rule(lab)),
                    lab,
                    cell,
                    q,
                    k,
                    key,
                    assignment,
                    student,
                )
            )
        verdicts = _decide_all(verdicts, lab, sandbox, crowding, kernel_crowded)
    for (path, cell, _, _), verdict in zip(found, verdicts):
        _show(cell, verdict)
    for path, nb in notebooks.items():
        nbformat.write(nb, path)
    return verdicts


@dataclass
class _Pending:
    """A re-measured cell whose table passed the checks: its verdict waits for the runs."""

    verdict: Verdict
    table: pd.DataFrame
    cells: list[dict]
    kernel: dict = field(default_factory=dict)  # the kernel's word on its own runs (harness.notebook.hand_in)


def _prepare(
    verdict: Verdict, lab: Lab, cell, q: str, k: int, key: bytes, assignment: str, student: str
) -> Verdict | _Pending:
    """The verdict where the table handed in decides it alone, else its sample to re-run."""
    payload, why = handed_in(cell, q)
    missing = lab.unavailable(q)
    if missing:
        return replace(verdict, reason=f"not re-measured: {missing.replace(lab.folder, 'your folder')}")
    if why:
        return replace(verdict, reason=why)
    try:
        table = table_of(payload)
    except ValueError as e:
        return replace(verdict, reason=f"the {q}_table handed in is {e}")
    problems = check_table(q, table, lab)
    if problems:
        return replace(verdict, reason=problems[0])
    kernel = {
        name: number
        for name in ("lag_p99_us", "steal")
        for number in [_finite(payload.get(name))]
        if number is not None
    }
    return _Pending(verdict, table, lab.sample(q, k, seed=draw_seed(key, assignment, student, q, payload)), kernel)


def _finite(value) -> float | None:
    """A number the kernel handed in, as a float, or None (not a number, or not finite)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and finite(value)
    return float(value) if number else None


def _decide_all(
    prepared: list, lab: Lab, sandbox: Sandbox, crowding=lambda: "", kernel_crowded: str = ""
) -> list[Verdict]:
    """Re-run every pending sample (one pool), judge each on the grader's runs alone; a
    sample a reported figure fell outside of runs again, round by round (RERUN_ROUNDS: a
    run the machine slowed is not alone), and is judged on all its runs. The grader's
    own trouble is a 0 with why, never the kernel's verdict. A failure every miss of
    which a disturbance could have made (`explained`) is said as not graded."""
    pending = {i: p for i, p in enumerate(prepared) if isinstance(p, _Pending)}
    out = list(prepared)
    frames: dict[int, pd.DataFrame] = {}
    for attempt, reruns in enumerate(RERUN_ROUNDS):
        todo = [
            i
            for i in pending
            if attempt == 0 or lab.judge(pending[i].verdict.question, pending[i].table, pending[i].cells, frames[i])[0]
        ]
        if not todo:
            break
        try:
            fresh = _rerun(lab, sandbox, {i: pending[i] for i in todo}, reruns)
        except Exception as e:
            for i in todo:
                out[i] = replace(pending[i].verdict, reason=f"re-measurement failed: {type(e).__name__}: {one_line(e)}")
                pending.pop(i)
            continue
        for i in todo:
            frames[i] = pd.concat([frames[i], fresh[i]], ignore_index=True) if i in frames else fresh[i]
    crowded = None
    for i, p in pending.items():
        found, figures = lab.misses(p.verdict.question, p.table, p.cells, frames[i])
        extra = f" [{len(found) - 1} more]" if len(found) > 1 else ""
        reason = (found[0].text + extra) if found else ""
        why = []
        if found:
            crowded = crowding() if crowded is None else crowded
            kernel = "; ".join(w for w in (disturbed_kernel(**p.kernel), kernel_crowded) if w)
            question = lab.spec.questions[p.verdict.question]
            why = [explained(m, runs_of(frames[i], question, m.cell), kernel, crowded) for m in found]
        disturbed = "; ".join(dict.fromkeys(w for said, _ in why for w in said)) if why and all(why) else ""
        if disturbed:
            reason = f"{NOT_GRADED} ({disturbed}); on those runs: {reason}"
        out[i] = replace(
            p.verdict,
            passed=not found,
            reason=reason,
            figures=figures,
            disturbed=disturbed,
            ours_only=bool(disturbed) and all(ours for _, ours in why),
        )
    return out


def explained(miss: Miss, runs: pd.DataFrame, kernel: str, crowded: str) -> tuple[list[str], bool] | None:
    """(the disturbances that could have made `miss`, whether they were in the grader's
    own runs alone), or None: then the miss is the table's, and one such fails its cell.
    A disturbance can move a figure either way: a program held off the CPU, or a packet
    sent late, changes which packets meet the link's random draws (a resend more or
    less, or at another moment behind the other direction's packets in a shared queue,
    shifts every later draw of its direction), and another draw of the same seed can be
    luckier as well as worse (BENCHMARKS.md, "Notebooks").
    So:
    - The grader's runs of the cell (`runs`), late, or crowded (`crowded`: tasks waited
      for a CPU while it re-measured), explain programs failing there and a number
      outside the range. Late runs explain it only when some seed had no quiet run: the
      range over all runs holds the quiet ones, and a seed run again quietly gives what
      its quiet run gave.
    - The kernel's word on its own runs, or its crowding (`kernel`), explains a number
      outside the range.
    A number not reported is never the machine's."""
    if miss.how == MISSING:
        return None
    if miss.how == FAILED:
        ours, theirs = [disturbed_runs(runs), crowded], ""
    else:
        ours = [disturbed_runs(runs) if _seeds_without_a_quiet_run(runs) else "", crowded]
        theirs = kernel
    said = [w for w in (*ours, theirs) if w]
    return (said, not theirs) if said else None


def _seeds_without_a_quiet_run(runs: pd.DataFrame) -> set:
    """The seeds of `runs` none of whose runs both succeeded and kept the engine on time."""
    ok = runs["ok"].astype(bool) if "ok" in runs else pd.Series(True, runs.index)
    seeds = runs["seed"] if "seed" in runs else pd.Series(0, runs.index)
    return set(seeds) - set(seeds[ok & ~_late(runs)])


def _late(frame: pd.DataFrame) -> pd.Series:
    """Per run of `frame`, whether the engine left its packets late (the battery's rule,
    harness.transfer.LAG_WARN_US); a run with no lag figure is not."""
    if "lag_p99_us" not in frame:
        return pd.Series(False, frame.index)
    return pd.to_numeric(frame["lag_p99_us"], errors="coerce") > LAG_WARN_US


def disturbed_runs(frame: pd.DataFrame) -> str:
    """The engine's word when some of the grader's runs in `frame` left packets late
    (`_late`), else ''."""
    if frame is None:
        return ""
    late = frame[_late(frame)]
    if late.empty:
        return ""
    return (
        f"in {len(late)} of the grader's {len(frame)} runs the engine sent packets up to "
        f"{pd.to_numeric(late['lag_p99_us']).max() / 1000:.1f} ms late"
    )


def disturbed_kernel(lag_p99_us: float | None = None, steal: float | None = None) -> str:
    """The kernel's word that the machine disturbed its own runs, else '': the engine
    left packets late (the battery's rule), or the VM's host stole a notable share of
    the CPU time (harness.steal), which stops the programs too, where the engine may not
    see it. Only the kernel says so, and it is the student's: believed only to grade a
    failed cell again (a lie buys a second grading, never a point), since an honest
    figure the machine disturbed in the kernel cannot be told from a wrong one by the
    grader's quiet runs (BENCHMARKS.md, "Notebooks")."""
    said = []
    if lag_p99_us is not None and math.isfinite(lag_p99_us) and lag_p99_us > LAG_WARN_US:
        said.append(f"the engine sent packets up to {lag_p99_us / 1000:.1f} ms late")
    if steal is not None and math.isfinite(steal) and steal >= NOTABLE:
        said.append(f"the VM's host stole {steal:.1%} of the CPU time")
    return f"in your kernel's own runs {' and '.join(said)}, as it recorded them" if said else ""


def _rerun(lab: Lab, sandbox: Sandbox, pending: dict[int, _Pending], reruns: int) -> dict[int, pd.DataFrame]:
    """The grader's runs of each pending sample, each seed `reruns` times, all in one
    pool (a question re-measured in two cells would share its sweep: those go in pools
    of their own)."""
    fresh: dict[int, pd.DataFrame] = {}
    batches: list[dict[int, _Pending]] = []
    for i, p in pending.items():
        batch = next((b for b in batches if all(o.verdict.question != p.verdict.question for o in b.values())), None)
        if batch is None:
            batches.append(batch := {})
        batch[i] = p
    for batch in batches:
        frames = lab.rerun_all(
            {p.verdict.question: p.cells for p in batch.values()}, programs=jailed(sandbox), reruns=reruns
        )
        fresh.update({i: frames[p.verdict.question] for i, p in batch.items()})
    return fresh


def _show(cell, verdict: Verdict) -> None:
    """The cell's outputs become the table handed in and the grader's verdict (what the
    kernel printed or raised there decides nothing, so it is not shown); a failure ends
    in an error, as nbgrader shows a failed test."""
    kept = [o for o in cell.get("outputs", []) if HAND_IN in o.get("data", {})]
    said = nbformat.v4.new_output("display_data", data={"text/plain": verdict.text()}, metadata={MARK: True})
    cell.outputs = kept + [said]
    if not verdict.passed:
        cell.outputs.append(
            nbformat.v4.new_output(
                "error", ename="AssertionError", evalue=verdict.reason, traceback=[f"AssertionError: {verdict.reason}"]
            )
        )


def unmeasured(course_dir: str, assignment: str, student: str, why: str) -> list[Verdict]:
    """Verdicts of 0 for each re-measured cell when the re-measurement itself broke: the
    kernel's own verdict never stands."""
    out = []
    for path in sorted(glob.glob(os.path.join(course_dir, "autograded", student, assignment, "*.ipynb"))):
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception:
            continue
        out += [
            Verdict(name, cell.metadata.nbgrader["grade_id"], q, False, f"not re-measured: {why}")
            for cell, q, _ in remeasured_cells(nb)
        ]
    return out
