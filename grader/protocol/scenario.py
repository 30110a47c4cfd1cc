"""Run one scenario: the programs it names meet over its link, with a seed derived
from the submission and the scenario; the reference pair on the same link and seed
when a check compares with it.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
from dataclasses import dataclass, field

from harness import Link, Program, run_transfer
from harness.cli import event_words
from harness.engine import REPO
from harness.transfer import Path
from harness.transfer import TransferResult

from grader.protocol.battery import Battery, Programs, Scenario
from grader.jail.sandbox import Sandbox


def scenario_seed(digest: str, scenario: str, repetition: int) -> int:
    """The seed of a run: the same submission and scenario always get the same one."""
    h = hashlib.sha256(f"{digest}:{scenario}:{repetition}".encode()).digest()
    return int.from_bytes(h[:8], "big") >> 1


@dataclass
class Side:
    """Whose programs: argv prefixes by program name (or why one is missing), and the
    jail the student's run in (None for the reference, or where no jail is possible)."""

    label: str
    programs: dict[str, list[str] | str]
    sandbox: Sandbox | None = None
    env: dict | None = None  # the reference's environment (RDT_SR_REFINEMENTS, ...)
    part_env: dict[int, dict] = field(default_factory=dict)  # per part: the conventions
    # detected for it (RDT_BYTE_ORDER, RDT_NUMBERING, ...)

    def env_for(self, part: int, extra: dict | None = None) -> dict | None:
        """The environment of this side's programs for a part (None: the caller's)."""
        if self.env is None and not self.part_env.get(part) and not extra:
            return None
        return {**(self.env or {}), **self.part_env.get(part, {}), **(extra or {})}

    def missing(self, name: str) -> str | None:
        found = self.programs.get(name)
        return found if isinstance(found, str) else None

    @property
    def isolated(self) -> bool:
        """Whether this side's programs get a network namespace of their run's own on the
        local backend (the netns and kernel backends give every run one)."""
        return self.sandbox is not None and self.sandbox.own_network

    def template(self, spec: str) -> str:
        """A battery template ('Sender2 {receiver_host} ...') with this side's program."""
        name, _, rest = spec.partition(" ")
        argv = [shlex.quote(w.replace("{", "{{").replace("}", "}}")) for w in self.programs[name]]
        if self.sandbox is not None:
            return self.sandbox.template(argv) + " " + rest
        return " ".join(argv) + " " + rest


REFERENCE_ENV = {"RDT_SR_REFINEMENTS": "off"}


def reference_side(battery: Battery, part_env: dict[int, dict] | None = None) -> Side:
    folder = os.path.join(REPO, battery.reference)
    names = {p.name(role) for p in battery.programs.values() for role in ("sender", "receiver")}
    # The kit's own interpreter: `python3` on PATH may be a version manager's shim (a shell
    # script at every start, and a battery starts the reference dozens of times per submission).
    # The textbook SR (RDT_SR_REFINEMENTS=off): what the assignment asks of a student's
    # Sender4, so goodput and retransmissions are held against the same protocol.
    return Side(
        "reference",
        {n: [sys.executable, os.path.join(folder, f"{n}.py")] for n in names},
        env=dict(REFERENCE_ENV),
        part_env=dict(part_env or {}),
    )


def pairing(scenario: Scenario, student: Side, reference: Side) -> tuple[Side, Side]:
    """(sender side, receiver side) for the scenario's `meet`."""
    return {"student": (student, student), "sender": (student, reference), "receiver": (reference, student)}[
        scenario.meet
    ]


def programs_for(scenario: Scenario, programs: Programs, tx: Side, rx: Side) -> tuple[Program, Program]:
    extra = scenario.reference_env
    return (
        Program(
            tx.template(programs.sender),
            output_format=programs.output_format,
            env=tx.env_for(scenario.part, extra if tx.label == "reference" else None),
        ),
        Program(
            rx.template(programs.receiver), env=rx.env_for(scenario.part, extra if rx.label == "reference" else None)
        ),
    )


def isolation(*sides: Side) -> bool | None:
    """run_transfer's `isolate` for a run of these sides: True (a namespace of its own, or
    no run) where a jailed side's programs run; else wherever the harness can."""
    return True if any(side.isolated for side in sides) else None


def scenario_backend(scenario: Scenario, backend: str) -> str:
    """The backend a scenario runs on: the one it names (IP fragments need netns's TUN
    devices; whole 64 KB datagrams the local relay) where the grader may make namespaces
    (its backend auto or netns), else the grader's."""
    return scenario.backend if scenario.backend and backend in ("auto", "netns") else backend


def topology(scenario: Scenario) -> dict:
    """run_transfer's link= or paths= for the scenario."""
    if scenario.paths:
        return {"paths": [Path(Link(f, r)) for f, r in scenario.paths]}
    return {"link": Link(scenario.link, scenario.reverse, scenario.shared_queue)}


def run_pair(
    scenario: Scenario,
    programs: Programs,
    tx: Side,
    rx: Side,
    seed: int,
    backend: str,
    pcap: str | None = None,
    run: int = 0,
    trace: str | None = None,
    trace_tail: int | None = None,
) -> TransferResult:
    """Run number `run` of the scenario (its seed `seed`) between the two sides; `pcap`,
    `trace`: where the engine writes its capture and its trace of every packet's fate
    (`trace_tail`: only its last lines)."""
    sender, receiver = programs_for(scenario, programs, tx, rx)
    return run_transfer(
        sender,
        receiver,
        **topology(scenario),
        params=scenario.params,
        size=scenario.size_of(run),
        seed=seed,
        backend=scenario_backend(scenario, backend),
        time_limit=scenario.time_limit,
        no_progress=scenario.no_progress,
        pcap=pcap,
        trace=trace,
        trace_tail=trace_tail,
        isolate=isolation(tx, rx),
        ipv6=scenario.ipv6,
        schedule=list(scenario.schedule),
    )


def replay_command(
    scenario: Scenario,
    programs: Programs,
    seed: int,
    backend: str,
    reference: str = "reference/comn",
    part_env: dict | None = None,
    run: int = 0,
    student: dict | None = None,
) -> str:
    """The `rdtlab run` line that replays a run from the student's folder. `student`: the
    student's programs as resolved (name -> argv): a Python one starts as `python3
    ./Name.py`, any other with `rdtlab prog --dir ./ Name`, which builds it first (the
    harness makes a word with a `/` naming a path absolute: the folder the line is run
    from, not the run's own)."""

    def local(spec: str, side: str) -> str:
        name, _, rest = spec.partition(" ")
        if side == "student":
            argv = (student or {}).get(name)
            python = not isinstance(argv, list) or argv[-1].endswith(".py")
            return f"python3 ./{name}.py {rest}" if python else f"rdtlab prog --dir ./ {name} {rest}"
        return f"python3 {os.path.join(REPO, reference, name)}.py {rest}"

    tx, rx = {
        "student": ("student", "student"),
        "sender": ("student", "reference"),
        "receiver": ("reference", "student"),
    }[scenario.meet]
    words = ["rdtlab", "run", "--sender", local(programs.sender, tx), "--receiver", local(programs.receiver, rx)]
    if scenario.paths:
        for forward, reverse in scenario.paths:
            words += ["--path", forward if reverse is None else f"{forward} / {reverse}"]
    else:
        words += ["--link", scenario.link]
        if scenario.reverse is not None:
            words += ["--reverse", scenario.reverse]
        if scenario.shared_queue:
            words.append("--shared-queue")
    for event in scenario.schedule:
        words += event_words(event)
    if scenario.ipv6:
        words.append("--ipv6")
    words += [
        "--size",
        str(scenario.size_of(run)),
        "--seed",
        str(seed),
        "--timeout",
        f"{scenario.time_limit:g}",
        "--stall-after",
        f"{scenario.no_progress:g}",
        "--backend",
        scenario_backend(scenario, backend),
    ]
    for key, value in scenario.params.items():
        words += ["--param", f"{key}={value}"]
    if programs.output_format:
        words += ["--output-format", programs.output_format]
    line = " ".join(shlex.quote(w) for w in words)
    if scenario.meet == "student":
        return line
    env = {
        **(REFERENCE_ENV if scenario.meet == "receiver" else {}),  # the reference sends
        **(part_env or {}),
        **scenario.reference_env,
    }
    return " ".join([f"{k}={v}" for k, v in env.items()] + [line])
