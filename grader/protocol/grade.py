"""Grade one submission on every scenario of a battery: the unit of work a pool, a
Dask cluster or Gradescope runs (`python -m grader.protocol.job` is its command line).

The submission is copied to a private scratch folder (owned by its jail's uid when
the sandbox is on), built if it has a Makefile, and each scenario's programs meet
over the emulated link; in a pool with a spare transfer, its lanes side by side
(grader/protocol/lanes.py). Whatever the submission does, this returns a result: a
program that is missing, does not build, crashes, hangs or attacks its jail gets 0
for the scenarios it breaks, with the reason in one line.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future, wait as wait_futures
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable

from harness.procs import UsageError

from grader.jail import cgroups

from grader.protocol import checks as checks_mod, conventions, pictures, symptoms

from grader import compare, disturbance
from grader.protocol.battery import Battery, Scenario
from grader.jail.build import BUILD_TIME_LIMIT, prepare
from grader.collect import Submission, submission_digest
from grader.jail.sandbox import (
    UID_BASE,
    Limits,
    Sandbox,
    available,
    jail_scratch,
    kill_uid,
    prepare_scratch,
    sweep_scratch,
    unmount_runs,
)
from grader.protocol.lanes import copy_built, grade_lanes, lanes_of
from grader.protocol.scenario import Side, pairing, reference_side, replay_command, run_pair, scenario_seed
from grader.protocol.score import reason, scenario_points

TIMEOUTS_BEFORE_SKIP = 2  # a part whose programs hang this often with the same partner: its other
# scenarios with that partner are not run (the student's sender with the
# reference receiver, and the other way round, are still graded)


@dataclass
class Options:
    backend: str = "auto"
    sandbox: bool | None = None  # None: when this machine can make jails
    hidden: list[str] = field(default_factory=list)  # also unreadable from the jail
    limits: Limits = field(default_factory=Limits)
    pcaps: bool = True  # keep the pcap and the picture of each failing run
    build_time_limit: float = BUILD_TIME_LIMIT
    # The machine grading is a disposable runner with no network worth reaching
    # (Gradescope's): jailed programs may run on the local backend without a network
    # namespace of their own where none can be made.
    runner_isolates_network: bool = False


# A grading process's jail uids, taken in turn: a submission's and its lanes', a
# notebook's; one is taken again only after this many others.
UIDS_PER_PROCESS = 1000
_uids = itertools.count()
_uid_lock = threading.Lock()
_swept = False  # this process has swept the jail groups of graders gone
_reference_runs: dict[tuple, Future] = {}
_reference_lock = threading.Lock()


def allocate_uid() -> int:
    """A jail uid no other grading job on this machine has (per process, per job). The
    first of a process sweeps away the empty jail groups and the scratch folders of graders
    killed hard."""
    global _swept
    with _uid_lock:
        if not _swept:
            _swept = True
            if cgroups.available() is None:
                cgroups.sweep_orphans(uid_owner)
            sweep_scratch()
        return UID_BASE + (os.getpid() % 100_000) * UIDS_PER_PROCESS + next(_uids) % UIDS_PER_PROCESS


def uid_owner(uid: int) -> int:
    """The pid, modulo 100000, of the grader that allocated jail `uid`."""
    return (uid - UID_BASE) // UIDS_PER_PROCESS


def grade_submission(
    sub: Submission,
    battery: Battery,
    out_dir: str | None = None,
    options: Options | None = None,
    write_results: bool = True,
) -> dict:
    """Grade `sub`; write `out_dir/<student>/` (results.json, feedback, the failing runs'
    pcaps) if given; `write_results=False`: the pcaps only (a part, merged by the caller)."""
    from grader.protocol.feedback import write_outputs  # the exports import this module's result shape

    options = options or Options()
    jail = options.sandbox if options.sandbox is not None else available() is None
    if jail and available():
        raise UsageError(available())
    unisolated = local_unisolated(options.backend) if jail else None
    own_network = jail and not (options.runner_isolates_network and unisolated)
    if own_network and unisolated:
        raise UsageError(
            f"refusing to grade untrusted programs on the local backend: {unisolated}, "
            "so they could reach this machine's loopback services; use --backend netns, or pass "
            "--runner-isolates-network if this runner is itself isolated"
        )
    started = time.monotonic()
    digest = submission_digest(sub.path)
    student_dir = os.path.join(out_dir, sub.student) if out_dir else None
    if student_dir:
        os.makedirs(student_dir, exist_ok=True)
    uid = allocate_uid()
    pristine = None  # the built submission before any scenario ran, for lanes
    pending: list[Future] = []  # reference runs started beside the student's
    # undone in reverse: the lanes' copy, the budget, the reference runs, the scratch
    with ExitStack() as cleanup:
        if jail:  # (its name says whose it is, for the tests and a sweep)
            scratch = cleanup.enter_context(jail_scratch(uid, "grade", options.limits.scratch_bytes))
        else:
            scratch = tempfile.mkdtemp(prefix=f"rdt-grade-{os.getpid()}-")
            cleanup.callback(shutil.rmtree, scratch, True)
        cleanup.callback(wait_futures, pending)  # no reference run outlives the submission's grading
        BUDGET.take()
        cleanup.callback(BUDGET.give)
        if jail:
            folder = prepare_scratch(sub.path, scratch, uid)
            sandbox = Sandbox(
                uid, folder, sorted({*options.hidden, *_always_hidden()}), options.limits, own_network=own_network
            )
        else:
            folder = shutil.copytree(sub.path, os.path.join(scratch, "sub"), symlinks=True)
            sandbox = None
        names = sorted({p.name(r) for p in battery.programs.values() for r in ("sender", "receiver")})
        built = prepare(folder, names, sandbox, battery.build_time_limit or options.build_time_limit)
        build_error = built.error or next(
            (why for why in built.programs.values() if isinstance(why, str) and "compile" in why), None
        )
        student = Side("student", built.programs, sandbox)
        detected = conventions.detect(battery, student, reference_side(battery), options.backend)
        reference = reference_side(battery, {p: d.conventions.env() for p, d in detected.items()})
        if jail:  # nothing the probe's runs started outlives them
            kill_uid(uid)
            unmount_runs(uid)
        lanes = lanes_of(battery.scenarios)
        budget = BUDGET if BUDGET.pooled and len(lanes) > 1 else None  # lanes side by side in a pool
        if jail and budget:
            pristine = copy_built(folder, tempfile.mkdtemp(prefix=f"rdt-grade-{os.getpid()}-"))
            cleanup.callback(shutil.rmtree, os.path.dirname(pristine), True)

        def grade_one(scenario: Scenario, side: Side, timeouts: dict) -> dict:
            began = time.monotonic()
            try:
                record = _grade_scenario(
                    scenario,
                    battery,
                    side,
                    reference,
                    digest,
                    options,
                    timeouts,
                    student_dir,
                    pending,
                    detected.get(scenario.part),
                )
            finally:
                if side.sandbox is not None:  # nothing a scenario started outlives it
                    kill_uid(side.sandbox.uid)
                    unmount_runs(side.sandbox.uid)
            return {**record, "seconds": round(time.monotonic() - began, 2)}

        graded = grade_lanes(lanes, grade_one, student, lambda: _lane_jail(student, folder, pristine, options), budget)
        records = [graded[scenario.name] for scenario in battery.scenarios]
    result = {
        "student": sub.student,
        "name": sub.name,
        "matric": sub.matric,
        "battery": battery.name,
        "digest": digest,
        "sandbox": "bubblewrap" if jail else "none",
        "backend": options.backend,
        "score": round(sum(r["score"] for r in records), 3),
        "max_score": battery.max_score,
        "ungraded": [r["name"] for r in records if r.get("ungraded")],
        "build_error": build_error,
        "scenarios": records,
        "byte_order": next((d.conventions.byte_order for d in detected.values()), "big"),
        "conventions": {str(p): d.to_dict() for p, d in detected.items()},
        "execution_time": round(time.monotonic() - started, 1),
    }
    if student_dir and write_results:
        write_outputs(result, student_dir)
    return result


@contextmanager
def _lane_jail(student: Side, folder: str, pristine: str | None, options: Options):
    """The student's side in a jail of a lane's own (grader/protocol/lanes.py): a uid, a
    scratch tmpfs, a copy of the built submission `pristine`, the programs' paths moved
    from `folder` there; without a jail, the student's side itself."""
    if student.sandbox is None or pristine is None:
        yield student
        return
    uid = allocate_uid()
    with jail_scratch(uid, "grade", options.limits.scratch_bytes) as scratch:
        lane_folder = copy_built(pristine, scratch, uid)
        programs = {
            n: [w.replace(folder, lane_folder) for w in p] if isinstance(p, list) else p
            for n, p in student.programs.items()
        }
        yield Side(student.label, programs, replace(student.sandbox, uid=uid, scratch=lane_folder))


def regrade_ungraded(sub: Submission, battery: Battery, out_dir: str | None, options: Options, result: dict) -> dict:
    """Grade again the scenarios of `result` that the machine disturbed (grader/disturbance.py),
    and merge them in; run when nothing else is being graded."""
    if not result.get("ungraded"):
        return result
    # its failing runs keep their pcaps in the student's folder, as in the first grading
    again = grade_submission(sub, battery.select(names=result["ungraded"]), out_dir, options, write_results=False)
    fresh = {r["name"]: r for r in again["scenarios"]}
    scenarios = [fresh.get(r["name"], r) for r in result["scenarios"]]
    merged = {
        **result,
        "scenarios": scenarios,
        "score": round(sum(r["score"] for r in scenarios), 3),
        "ungraded": [r["name"] for r in scenarios if r.get("ungraded")],
        "graded_again": list(dict.fromkeys([*result.get("graded_again", []), *result["ungraded"]])),  # once each
        "execution_time": round(result["execution_time"] + again["execution_time"], 1),
    }
    if out_dir:
        from grader.protocol.feedback import write_outputs

        write_outputs(merged, os.path.join(out_dir, sub.student))
    return merged


def grade_again_alone(
    sub: Submission,
    battery: Battery,
    out_dir: str | None,
    options: Options,
    result: dict,
    said: Callable[[list[str]], None] | None = None,
) -> dict:
    """`regrade_ungraded` while the machine leaves scenarios of `result` ungraded, up to
    disturbance.AGAIN_ALONE times (`said(names)` before each): a VM's host steals CPU
    time in bursts, and a later try often meets a quiet spell. Run alone: nothing else
    is being graded."""
    for _ in range(disturbance.AGAIN_ALONE):
        if not result.get("ungraded"):
            break
        if said:
            said(result["ungraded"])
        result = regrade_ungraded(sub, battery, out_dir, options, result)
    return result


def local_unisolated(backend: str) -> str | None:
    """Why runs on `backend` cannot get a network namespace of their own here, when it
    resolves to the local backend (None: they can, or it is not the local backend)."""
    from harness import backends

    try:
        if backends.resolve(backend) != "local":
            return None
    except UsageError:
        return None  # the run itself says why the backend cannot be had
    return backends.isolation_unavailable_reason()


def _always_hidden() -> list[str]:
    from harness.engine import REPO

    return [str(REPO)]


def _grade_scenario(
    scenario: Scenario,
    battery: Battery,
    student: Side,
    reference: Side,
    digest: str,
    options: Options,
    timeouts: dict,
    student_dir: str | None,
    pending: list[Future],
    detected=None,
) -> dict:
    programs = battery.programs[scenario.part]
    tx, rx = pairing(scenario, student, reference)
    seeds = [scenario_seed(digest, scenario.name, k) for k in range(scenario.repeat)]

    def replay(seed: int, run: int = 0) -> str:
        return replay_command(
            scenario,
            programs,
            seed,
            options.backend,
            battery.reference,
            reference.part_env.get(scenario.part),
            run,
            student.programs,
        )

    record = {
        "name": scenario.name,
        "part": scenario.part,
        "what": scenario.what,
        "meet": scenario.meet,
        "max_score": scenario.points,
        "public": scenario.public,
        "seeds": seeds,
        "definition": compare.definition(scenario, battery),
        **({"beyond_spec": True, "scored": scenario.scored} if scenario.beyond_spec else {}),
        "replay": replay(seeds[0]),
        "runs": [],
        "checks": [],
        "pcap": None,
    }
    missing = next(
        (
            m
            for side, role in ((tx, "sender"), (rx, "receiver"))
            if side is student
            for m in [side.missing(programs.name(role))]
            if m
        ),
        None,
    )
    hangs = (scenario.part, scenario.meet)
    if missing is None and timeouts.get(hangs, 0) >= TIMEOUTS_BEFORE_SKIP:
        whose = {"student": "programs", "sender": "sender", "receiver": "receiver"}[scenario.meet]
        missing = (
            f"not run: part {scenario.part}'s {whose} timed out or stalled in {TIMEOUTS_BEFORE_SKIP} scenarios already"
        )
    if missing:
        return {
            **record,
            "score": 0.0,
            "passed": False,
            "reason": missing,
            "checks": [{"name": "delivered", "passed": False, "detail": missing}],
            "symptom": symptoms.from_reason(missing).to_dict(),
        }
    runs, refs = [], []
    pressure = disturbance.CpuPressure()  # a failure in a crowded pool is not a grade either
    # A departure from the battery's fixed conventions, seen on the wire, fails the
    # scenario whatever the machine did: no disturbance leaves it ungraded.
    departure = (
        [checks_mod.Check("conventions", False, "; ".join(detected.departures))]
        if detected is not None and detected.departures and scenario.meet != "student"
        else []
    )
    traces: list = []  # each graded run's trace, for the picture of a failure
    for k, seed in enumerate(seeds):
        pcap = os.path.join(student_dir, f"{scenario.name}-{seed}.pcap") if student_dir and options.pcaps else None
        trace = (
            os.path.join(student_dir, f"{scenario.name}-{seed}.trace.jsonl")
            if student_dir and options.pcaps
            else os.path.join(pictures.trace_folder(), f"{uuid.uuid4().hex}.trace.jsonl")
            if scenario.reads_trace and scenario.size_of(k) <= pictures.MAX_BYTES  # a check reads it whole
            else None
        )
        # the same seed again while the machine disturbs it; a scenario the course does not
        # score (beyond the spec) only reports, so its one run stands, said to be disturbed
        for _ in range(disturbance.TRIES if scenario.scored else 1):
            baseline = (
                _reference_beside(scenario, battery, reference, seed, options.backend, k)
                if scenario.needs_reference_run
                else None
            )
            run = run_pair(
                scenario,
                programs,
                tx,
                rx,
                seed,
                options.backend,
                pcap=pcap,
                run=k,
                trace=trace,
                trace_tail=pictures.tail_of(scenario.size_of(k)),
            )
            if baseline is not None:
                pending.append(baseline)  # a failed run does not wait for it (grade_submission does)
            ref = None
            if run.ok and scenario.needs_reference_run:
                ref = (
                    baseline.result()
                    if baseline is not None
                    else _reference_run(scenario, battery, reference, seed, options.backend, k)
                )
            disturbed = disturbance.unsettled(
                disturbance.why(run),
                disturbance.why(ref),
                lambda: disturbance.verdict(departure + checks_mod.evaluate(scenario, programs, [run], [ref]), [run]),
            )
            if not disturbed:
                break
            record["retried"] = record.get("retried", 0) + 1
        if disturbed and not scenario.scored:
            record["disturbed"] = disturbed
        elif disturbed:
            for path in (pcap, trace, *traces):
                if path and os.path.exists(path):
                    os.unlink(path)
            return _not_graded(
                {**record, "runs": [_run_record(r, f) for r, f in zip(runs + [run], refs + [ref])]},
                disturbed,
                disturbance.ungraded_reason(disturbed),
            )
        runs.append(run)
        refs.append(ref)
        traces.append(trace)
        if pcap and os.path.exists(pcap):
            if run.ok or record["pcap"]:
                os.unlink(pcap)  # keep one pcap: the first failing run's
            else:
                record["pcap"], record["replay"] = os.path.basename(pcap), replay(seed, k)
        if not run.ok:
            if run.sender and run.sender.timed_out or run.receiver and run.receiver.timed_out:
                timeouts[hangs] = timeouts.get(hangs, 0) + 1
            break  # one failed run decides the scenario
    checks = departure + checks_mod.evaluate(scenario, programs, runs, refs)
    record["runs"] = [_run_record(r, ref) for r, ref in zip(runs, refs)]
    crowded = disturbance.crowded_failure(checks, runs, pressure, BUDGET.size if BUDGET.pooled else 1)
    if crowded and not scenario.scored:
        record.setdefault("disturbed", crowded)
    elif crowded:
        for path in traces:
            if path and os.path.exists(path):
                os.unlink(path)
        return _not_graded(
            record,
            crowded,
            f"not graded yet: it failed in a way a crowded machine can cause, {crowded}; it is graded again alone",
        )
    record["checks"] = [c.__dict__ for c in checks]
    found = symptoms.diagnose(checks, runs)
    record["symptom"] = found.to_dict() if found else None
    record["pictures"] = _pictures(scenario, battery, reference, options, student_dir, runs, refs, traces, found)
    record["score"] = scenario_points(scenario.points, checks)
    record["passed"] = all(c.passed for c in checks)
    record["reason"] = reason(checks) + (
        f" (the machine may have caused this: {record['disturbed']}; not scored, so not run again)"
        if record.get("disturbed") and not record["passed"]
        else ""
    )
    return record


def _pictures(
    scenario: Scenario,
    battery: Battery,
    reference: Side,
    options: Options,
    folder: str | None,
    runs: list,
    refs: list,
    traces: list,
    found,
) -> dict | None:
    """A failed scenario's pictures (grader/protocol/pictures.py): its first failing run, the
    reference's on the same link and seed (the run a check compared with, else one made
    now; for a transfer drawn by its end only, only one a check made: a 64 MiB reference
    run costs more than the picture is worth); the traces of the runs are not kept."""
    try:
        if found is None or folder is None or not any(traces):
            return None
        k = next((i for i, r in enumerate(runs) if not r.ok), 0)
        seed = runs[k].seed
        # a delivered run's storm is of resends: marked at the first, not where new data stopped
        mark = "wasteful" if runs[k].ok and found.kind == "storm" else found.kind
        end = " (its last packets)" if pictures.tail_of(scenario.size_of(k)) else ""
        mine = pictures.draw(
            traces[k],
            os.path.join(folder, f"{scenario.name}.png"),
            f"your run of {scenario.name}{end} (seed {seed}): {found.title}",
            mark,
        )
        ref = (
            refs[k]
            if refs[k] is not None and refs[k].trace
            else None
            if end
            else _reference_run(scenario, battery, reference, seed, options.backend, k)
        )
        theirs = (
            pictures.draw(
                ref.trace,
                os.path.join(folder, f"{scenario.name}-reference.png"),
                f"the reference on the same link and seed{end}",
            )
            if ref is not None and ref.trace
            else None
        )
        return {"yours": mine, "reference": theirs} if mine else None
    finally:
        for path in traces:
            if path and os.path.exists(path):
                os.unlink(path)


def _not_graded(record: dict, disturbed: str, why: str) -> dict:
    """A scenario's record left unscored: the machine disturbed it (grader.disturbance)."""
    return {
        **record,
        "score": 0.0,
        "passed": False,
        "ungraded": disturbed,
        "reason": why,
        "checks": [{"name": "undisturbed", "passed": False, "detail": why}],
    }


class Budget:
    """How many transfers this process runs at once (`--jobs`). A submission's job takes
    one while it is graded, in grade_all's pool waiting for it while spares are out
    (other callers, a thread each, are not held back); the reference
    run a check compares with starts beside the student's run, and a submission's next
    lane beside its others (grader/protocol/lanes.py), only on a spare one no job is
    waiting for, so a full pool adds no load and its tail, or a lone submission,
    finishes sooner."""

    def __init__(self, size: int):
        self.size, self.used, self.waiting = size, 0, 0
        self._free = threading.Condition()
        self.pooled = False  # grade_all's pool is grading several at once (grader.disturbance.crowding)

    def take(self, spare_only: bool = False) -> bool:
        with self._free:
            if spare_only:
                if self.used >= self.size or self.waiting:
                    return False
            elif self.pooled:
                self.waiting += 1
                try:
                    self._free.wait_for(lambda: self.used < self.size)
                finally:
                    self.waiting -= 1
            self.used += 1
            return True

    def give(self) -> None:
        with self._free:
            self.used -= 1
            self._free.notify_all()


BUDGET = Budget(os.cpu_count() or 1)  # grade_all sets it to --jobs


def _reference_beside(
    scenario: Scenario, battery: Battery, reference: Side, seed: int, backend: str, k: int = 0
) -> Future | None:
    """The reference pair on the same link and seed, started now in its own namespaces
    beside the student's run if the budget has a spare transfer (both then see the same
    load on the machine); None if not (`_reference_run` runs it afterwards)."""
    key = (battery.source, scenario.name, seed, backend)
    with _reference_lock:
        if key in _reference_runs:
            return _reference_runs[key]
        if not BUDGET.take(spare_only=True):
            return None
        future = _reference_runs[key] = Future()

    def run() -> None:
        try:
            _settle(future, key, scenario, battery, reference, seed, backend, k)
        finally:
            BUDGET.give()

    threading.Thread(target=run, name=f"reference-{scenario.name}").start()
    return future


def _reference_run(scenario: Scenario, battery: Battery, reference: Side, seed: int, backend: str, k: int = 0):
    """The reference pair on the same link and seed, run now unless started or done
    before (kept: a re-grade, or a copy of the submission, reuses it)."""
    key = (battery.source, scenario.name, seed, backend)
    with _reference_lock:
        future = _reference_runs.get(key)
        ours = future is None
        if ours:
            future = _reference_runs[key] = Future()
    if ours:
        _settle(future, key, scenario, battery, reference, seed, backend, k)
    return future.result()


def _settle(
    future: Future,
    key: tuple,
    scenario: Scenario,
    battery: Battery,
    reference: Side,
    seed: int,
    backend: str,
    k: int = 0,
) -> None:
    """Run the reference pair, again while the machine disturbs it; one still disturbed
    is handed to this caller (whose scenario then tries again) but not kept for others."""
    trace = os.path.join(pictures.trace_folder(), f"{hashlib.sha256(repr(key).encode()).hexdigest()[:20]}.jsonl")
    try:
        for _ in range(disturbance.TRIES):
            run = run_pair(
                scenario,
                battery.programs[scenario.part],
                reference,
                reference,
                seed,
                backend,
                run=k,
                trace=trace,
                trace_tail=pictures.tail_of(scenario.size_of(k)),
            )
            if not disturbance.why(run):
                break
        else:
            with _reference_lock:
                _reference_runs.pop(key, None)
        future.set_result(run)
    except BaseException as e:  # bad usage: raised again where the result is read
        with _reference_lock:
            _reference_runs.pop(key, None)
        future.set_exception(e)


def _run_record(run, ref) -> dict:
    return {
        "seed": run.seed,
        "ok": run.ok,
        "error": run.error,
        "error_kind": str(run.error_kind) if run.error_kind else None,
        "goodput_kBps": run.goodput_kBps,
        "retransmissions": run.retransmissions,
        "printed": run.printed,
        "reference_goodput_kBps": ref.goodput_kBps if ref is not None else None,
        "reference_retransmissions": ref.retransmissions if ref is not None else None,
    }
