"""nbgrader's autograde of students' notebooks, each kernel in the student's jail
(grader/notebook/notebook_jail.py): what `rdtlab grade --gradebook COURSE` runs for the
notebooks, and `python -m grader.notebook.autograde ASSIGNMENT --student S` for one.

Per student, the driver allocates a jail uid and a size-capped tmpfs, and runs
nbgrader's own `autograde` for that student in a child process (in the course folder,
so the course's nbgrader_config.py applies: its restore-cells step, its timeouts),
with nbgrader's Execute replaced by JailedExecute. nbgrader itself (the gradebook,
the autograded/ folder) stays outside the jail; only the kernel, and so the
student's code, is inside. After the child, whatever the notebook started is killed
and the tmpfs unmounted, whether nbgrader finished, failed or was stopped.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
import time
from dataclasses import dataclass, field, replace

from harness.procs import UsageError

from grader.protocol.grade import allocate_uid
from harness.experiments.sweep import one_line
from harness.notebook import REMEASURED_OUTSIDE, tcp_cc_missing

from grader.notebook import nbgrader_child
from grader.disturbance import Admission, CpuPressure, crowding
from grader.notebook.notebook_jail import JAIL_ENV, NotebookJail, asked_tcp_cc, compile_kit, write_font_list
from grader.notebook.gradebook import set_cell_scores
from grader.notebook.remeasure import remeasure_student, unmeasured
from grader.jail.sandbox import available, jail_scratch

# One student's autograde, all cells, by the grading mode (RDTLAB_NOTEBOOK_MODE): well
# above what a comn notebook of that mode takes (BENCHMARKS.md, "Notebooks"). A cell
# that never ends costs no more than this (the course's Execute.timeout is per cell).
TIME_LIMITS = {"tiny": 300.0, "quick": 900.0, "full": 3600.0}


@dataclass
class Autograded:
    student: str
    ok: bool
    seconds: float
    reason: str = ""  # one line when not ok
    remeasured: list = field(default_factory=list)  # grader.notebook.remeasure.Verdict per re-measured cell
    remeasure_seconds: float = 0.0
    kernel_tcp: str = ""  # the student's congestion control, or why kernel TCP was not graded
    cpu_waiting: float | None = None  # share of its grading's wall time some task waited for a CPU
    again: str = ""  # why this is a second grading, alone

    def disturbed(self) -> bool:
        """A re-measured cell failed on figures the machine disturbed (see remeasure)."""
        return any(v.disturbed for v in self.remeasured)

    def kernel_disturbed(self) -> bool:
        """Some of those figures were the kernel's (crowded, or as it says), not only the
        grader's own runs: its notebook must run again, not just the re-measurement."""
        return any(v.disturbed and not v.ours_only for v in self.remeasured)

    def remeasure_line(self) -> str:
        """The re-measured cells in one line: each question, passed or why not."""
        return (
            "; ".join(f"{v.question} {'passed' if v.passed else 'failed: ' + v.reason}" for v in self.remeasured)
            + f" ({self.remeasure_seconds:.0f} s)"
        )


def students_with_notebooks(course_dir: str, assignment: str, students: list[str] | None = None) -> list[str]:
    """The students of `course_dir/submitted/` who handed in a notebook of `assignment`."""
    found = {
        os.path.basename(os.path.dirname(os.path.dirname(p)))
        for p in glob.glob(os.path.join(course_dir, "submitted", "*", assignment, "*.ipynb"))
    }
    return sorted(s for s in found if students is None or s in students)


def time_limit_of_mode() -> float:
    return TIME_LIMITS.get(os.environ.get("RDTLAB_NOTEBOOK_MODE", "quick"), max(TIME_LIMITS.values()))


def autograde_students(
    course_dir: str,
    assignment: str,
    students: list[str],
    jobs: int = 1,
    time_limit: float | None = None,
    extra_args: tuple[str, ...] = (),
    hidden: tuple[str, ...] = (),
    done=None,
) -> list[Autograded]:
    """Autograde each student's notebooks with a jailed kernel, `jobs` at once, then
    decide their re-measured cells outside the kernel (grader/notebook/remeasure.py) and write
    those scores over the kernel's in the gradebook. The course folder, and
    `hidden`, are out of the kernels' and the programs' sight (wherever they are).

    A grading starts only while the machine has room (grader.disturbance.Admission),
    so `jobs` is the most at once, not a number the machine must take.

    No grade from a disturbed machine (grader.disturbance): a student whose re-measured
    cell failed while graded beside others (the pool's CPU wait, read from outside every
    jail, is said apart for the kernel's run and the re-measurement), or on runs
    the machine disturbed (the grader's, the engine late; or the kernel's, as it
    recorded them), each where it could have made the miss (remeasure.explained), is
    graded again once the pool has finished, half as many at a time, down to one at a
    time (alone at least once; only the re-measurement, when only the grader's own runs
    were disturbed); what is still disturbed then is left not graded."""
    why = available()
    if why:
        raise UsageError(f"students' notebooks are autograded only in the sandbox: {why}")
    course_dir = os.path.abspath(course_dir)
    _create_gradebook(course_dir)  # before the children: two first opens would race to create it
    shared = tempfile.mkdtemp(prefix=f"rdt-kernel-tcp-{os.getpid()}-")  # the class's kernel-TCP runs, root's alone
    time_limit = time_limit or time_limit_of_mode()

    def decided(result: Autograded, pressure: CpuPressure, at_once: int, kernel_crowded: str = "") -> Autograded:
        """`result` with its re-measured cells decided outside the kernel; whether the
        machine was crowded is read apart for the kernel's run (`kernel_crowded`) and for
        the re-measurement: each explains different misses (remeasure.explained)."""
        began, ours = time.monotonic(), CpuPressure()
        crowded = lambda: _while("the grader re-measured", crowding(ours, at_once))  # noqa: E731
        remeasured = remeasure(course_dir, assignment, result.student, hidden, crowded, kernel_crowded)
        return replace(
            result, remeasured=remeasured, remeasure_seconds=time.monotonic() - began, cpu_waiting=pressure.share()
        )

    def one(student: str, at_once: int, admission: Admission) -> Autograded:
        with admission:
            pressure = CpuPressure()
            tcp_cc = asked_tcp_cc(os.path.join(course_dir, "submitted", student, assignment))
            jail = NotebookJail(0, "", [course_dir, *(os.path.abspath(h) for h in hidden)], assignment, shared, tcp_cc)
            result = autograde_one(course_dir, assignment, student, time_limit, extra_args, jail)
            if tcp_cc:
                missing = tcp_cc_missing(tcp_cc)
                result.kernel_tcp = (
                    f"kernel TCP ({tcp_cc}) left ungraded, its cells keep their points: {missing.split(': ', 1)[1]}"
                    if missing
                    else f"kernel TCP measured with {tcp_cc}"
                )
            return decided(result, pressure, at_once, _while("your notebook ran", crowding(pressure, at_once)))

    def again(first: Autograded, at_once: int, admission: Admission) -> Autograded:
        """The kernel run anew when its figures may have been disturbed; else the
        kernel's table (in the autograded notebook) stands and only the re-measurement
        is done again."""
        if first.kernel_disturbed():
            return one(first.student, at_once, admission)
        with admission:
            return decided(first, CpuPressure(), at_once)

    def graded(result: Autograded) -> Autograded:
        if done:
            done(result)
        return result

    jobs = max(1, jobs)
    try:
        compile_kit()  # what each kernel would otherwise make for itself
        write_font_list(shared)
        admission = Admission()
        with ThreadPoolExecutor(jobs) as pool:
            results = list(pool.map(lambda s: graded(one(s, jobs, admission)), students))
        for at_once in regrade_rounds(jobs):
            firsts = {r.student: r for r in results if r.disturbed()}
            if not firsts:
                break
            admission = Admission()
            with ThreadPoolExecutor(at_once) as pool:
                regraded = {
                    s: r for s, r in zip(firsts, pool.map(lambda s: again(firsts[s], at_once, admission), firsts))
                }
            for student, r in regraded.items():
                why = next(v.disturbed for v in firsts[student].remeasured if v.disturbed)
                what = "graded again" if firsts[student].kernel_disturbed() else "re-measured again"
                r.again = f"{what}, {'alone' if at_once == 1 else f'{at_once} at a time'}: {why}"
                graded(r)
            results = [regraded.get(r.student, r) for r in results]
    finally:
        nbgrader_child.stop()  # the server nbgrader's processes were forked from
        shutil.rmtree(shared, ignore_errors=True)
    for result in results:  # one writer: the children (nbgrader) are done with the gradebook
        set_cell_scores(
            course_dir, assignment, result.student, {(v.notebook, v.grade_id): v.passed for v in result.remeasured}
        )
    return results


def regrade_rounds(jobs: int) -> list[int]:
    """How many at a time each round grades the disturbed students again: half as many as
    the round before, down to one; a round alone there always is (a host's steal, or a
    late engine, passes with time, even when the pool was one)."""
    sizes = []
    while jobs > 1:
        jobs //= 2
        sizes.append(jobs)
    return sizes or [1]


def _while(when: str, crowded: str) -> str:
    return f"while {when}, {crowded}" if crowded else ""


def remeasure(
    course_dir: str,
    assignment: str,
    student: str,
    hidden: tuple[str, ...],
    crowded=lambda: "",
    kernel_crowded: str = "",
) -> list:
    """The student's re-measured cells decided outside the (dead) kernel; if that breaks,
    each of them is 0 with the reason: the kernel's own verdict never stands."""
    try:
        return remeasure_student(course_dir, assignment, student, hidden, crowded, kernel_crowded)
    except Exception as e:
        return unmeasured(course_dir, assignment, student, f"{type(e).__name__}: {one_line(e)}")


def autograde_one(
    course_dir: str, assignment: str, student: str, time_limit: float, extra_args: tuple[str, ...], jail: NotebookJail
) -> Autograded:
    """One student's autograde; `jail` says what to hide and share (its uid and scratch are made here)."""
    started = time.monotonic()
    uid = allocate_uid()
    with jail_scratch(uid, "kernel", jail.limits.scratch_bytes) as scratch:
        env = {
            **os.environ,
            JAIL_ENV: replace(jail, uid=uid, scratch=scratch).to_env(),
            REMEASURED_OUTSIDE: "1",
            "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
        }
        # a process of its own per student, forked from one that imported nbgrader once
        status, said = nbgrader_child.autograde(
            [assignment, "--student", student, "--force", *extra_args], course_dir, env, time_limit
        )
    if status is None:
        return Autograded(
            student,
            False,
            time.monotonic() - started,
            f"autograde of {student}'s notebook stopped at its time limit ({time_limit:.0f} s)",
        )
    reason = "" if status == 0 else _last_error(said) or f"nbgrader exited with {status}"
    return Autograded(student, status == 0, time.monotonic() - started, reason)


_EXCEPTION = re.compile(r"^\s*([\w.]*(Error|Exception|Exit))(: .*)?$")
_BOILERPLATE = ("see the the above", "see the above", "There was an error processing")


def _last_error(stderr: str) -> str:
    """One line of why nbgrader failed: its traceback's exception, else its last error that
    is not the closing boilerplate."""
    lines = stderr.splitlines()
    raised = [line.strip() for line in lines if _EXCEPTION.match(line)]
    if raised:
        return raised[-1][:300]
    errors = [
        line.split("ERROR]", 1)[-1].strip()
        for line in lines
        if "ERROR]" in line and not any(b in line for b in _BOILERPLATE)
    ]
    return errors[-1][:300] if errors else ""


def _create_gradebook(course_dir: str) -> None:
    from nbgrader.api import Gradebook
    from grader.notebook.gradebook import gradebook_url

    with Gradebook(gradebook_url(course_dir)):
        pass


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not os.environ.get("RDTLAB_KERNEL_JAIL"):
        # run by hand: one student, with the jail made here
        p = argparse.ArgumentParser(
            prog="python -m grader.notebook.autograde",
            description="autograde one student's notebooks with the kernel in the jail",
        )
        p.add_argument("assignment")
        p.add_argument("--student", required=True)
        p.add_argument("--course", default=".", help="the nbgrader course folder (default: here)")
        args, rest = p.parse_known_args(argv)
        try:
            result = autograde_students(args.course, args.assignment, [args.student], extra_args=tuple(rest))[0]
        except UsageError as e:
            sys.exit(f"grader.notebook.autograde: {e}")
        print(f"{result.student}: {'autograded' if result.ok else result.reason} ({result.seconds:.0f} s)")
        if result.remeasured:
            print(f"  re-measured outside the kernel: {result.remeasure_line()}")
        sys.exit(0 if result.ok else 1)
    from grader.notebook.notebook_jail import run_nbgrader_autograde

    run_nbgrader_autograde(argv)


if __name__ == "__main__":
    main()
