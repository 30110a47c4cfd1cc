"""A battery: the scenarios an assignment is graded on, read from TOML (the assignment's
folder's battery.toml, assignments/<name>/battery.toml).

Every field an instructor writes is checked here, so a typo is one line naming the
scenario and the field, not a failure half-way through grading a class.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from reference.comn.conventions import ConventionError, Conventions

from harness.procs import UsageError

from grader import limits
from grader.limits import MODELS

MEETINGS = ("student", "sender", "receiver")
SCENARIO_KEYS = {"name", "part", "what", "link", "reverse", "shared_queue", "size", "meet", "time_limit",
                 "no_progress", "points", "public", "printed", "goodput_vs_ref", "retx_vs_ref", "repeat", "params",
                 "retx_vs_losses", "reference_env"}
CONVENTION_KEYS = ("byte_order", "numbering", "first_seq", "eof_value", "ack")


@dataclass(frozen=True)
class Programs:
    """One part's programs: command templates whose first word names the program."""
    sender: str
    receiver: str
    output_format: str | None
    params: dict
    model: str = "stop-and-wait"    # the protocol's model for time limits (grader/limits.py)

    def name(self, role: str) -> str:
        return getattr(self, role).split()[0]


@dataclass(frozen=True)
class Scenario:
    name: str
    part: int
    what: str
    link: str
    reverse: str | None
    shared_queue: bool
    size: int
    meet: str
    time_limit: float          # seconds; derived from the part's model unless the battery sets it
    no_progress: float         # seconds without progress before a run is stopped (likewise)
    points: float
    public: bool
    printed: bool
    goodput_vs_ref: float | None
    retx_vs_ref: tuple[float, float] | None
    repeat: int
    params: dict
    retx_vs_losses: tuple[float, float] | None = None   # retransmissions <= factor x losses + slack
    reference_env: dict = field(default_factory=dict)   # the reference programs' extra environment

    @property
    def needs_reference_run(self) -> bool:
        """Whether a check compares with the reference on the same link and seed."""
        return self.goodput_vs_ref is not None or self.retx_vs_ref is not None


@dataclass
class Battery:
    name: str
    title: str
    programs: dict[int, Programs]
    scenarios: list[Scenario] = field(default_factory=list)
    source: str = ""
    reference: str = "reference/comn"    # the reference programs, relative to the kit's root
    conventions: dict = field(default_factory=dict)   # conventions the course fixes ([conventions])

    @property
    def max_score(self) -> float:
        return sum(s.points for s in self.scenarios)

    def select(self, part: int | None = None, public_only: bool = False,
               names: list[str] | None = None) -> "Battery":
        """A battery with only some scenarios (a part, the public ones, named ones)."""
        keep = [s for s in self.scenarios
                if (part is None or s.part == part) and (not public_only or s.public)
                and (names is None or s.name in names)]
        return Battery(self.name, self.title, self.programs, keep, self.source, self.reference, self.conventions)


def batteries() -> dict[str, str]:
    """assignment -> its battery's path, for the assignments that have one."""
    import assignments
    return {name: a.battery for name, a in assignments.by_name().items() if a.battery}


def load_battery(name_or_path: str) -> Battery:
    """A battery by the name of its assignment (assignments/<name>/battery.toml, from the
    course's registry) or by path to a TOML file."""
    path = Path(name_or_path)
    if not path.suffix:
        path = Path(batteries().get(name_or_path, path))
    if not path.is_file():
        known = ", ".join(batteries())
        raise UsageError(f"no battery {name_or_path!r} (expected a TOML file or one of: {known})")
    try:
        data = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"battery {path}: not valid TOML ({e})") from None
    return parse_battery(data, str(path))


def parse_battery(data: dict, source: str = "<battery>") -> Battery:
    head = data.get("battery", {})
    programs = {}
    for part, p in (data.get("programs") or {}).items():
        where = f"battery {source}, [programs.{part}]"
        if not str(part).isdigit() or not isinstance(p, dict) or not {"sender", "receiver"} <= set(p):
            raise UsageError(f"{where}: expected a part number with sender and receiver templates")
        model = p.get("model", "stop-and-wait")
        if model not in MODELS:
            raise UsageError(f"{where}: model must be one of {', '.join(MODELS)}, not {model!r}")
        programs[int(part)] = Programs(p["sender"], p["receiver"], p.get("output_format"), dict(p.get("params", {})),
                                       model)
    defaults = data.get("defaults", {})
    battery = Battery(head.get("name", Path(source).stem), head.get("title", ""), programs, source=source,
                      reference=head.get("reference", "reference/comn"),
                      conventions=_conventions(data.get("conventions", {}), source))
    names = set()
    for raw in data.get("scenario", []):
        s = _scenario({**defaults, **raw}, programs, source)
        if s.name in names:
            raise UsageError(f"battery {source}: scenario {s.name!r} appears twice")
        names.add(s.name)
        battery.scenarios.append(s)
    if not battery.scenarios:
        raise UsageError(f"battery {source}: no [[scenario]] tables")
    return battery


def _conventions(table, source: str) -> dict:
    """[conventions]: the ones the course's spec fixes (the rest are detected per submission)."""
    where = f"battery {source}, [conventions]"
    if not isinstance(table, dict):
        raise UsageError(f"{where}: expected a table")
    unknown = set(table) - set(CONVENTION_KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown convention(s) {sorted(unknown)}; known: {list(CONVENTION_KEYS)}")
    try:
        Conventions(**table)
    except (ConventionError, TypeError) as e:
        raise UsageError(f"{where}: {e}") from None
    return dict(table)


def _scenario(d: dict, programs: dict[int, Programs], source: str) -> Scenario:
    name = d.get("name")
    where = f"battery {source}, scenario {name!r}"
    if not isinstance(name, str) or not name:
        raise UsageError(f"battery {source}: a scenario without a name")
    unknown = set(d) - SCENARIO_KEYS
    if unknown:
        raise UsageError(f"{where}: unknown field(s) {sorted(unknown)}; known: {sorted(SCENARIO_KEYS)}")
    part = d.get("part")
    if part not in programs:
        raise UsageError(f"{where}: part {part!r} has no [programs.{part}] table")
    if d.get("meet", "student") not in MEETINGS:
        raise UsageError(f"{where}: meet must be one of {MEETINGS}, not {d.get('meet')!r}")
    if d.get("shared_queue", True) and d.get("reverse") not in (None, d.get("link", "")):
        raise UsageError(f"{where}: a shared queue (netem on lo) has one spec for both directions; "
                         f"set shared_queue = false for a different reverse link")
    retx = d.get("retx_vs_ref")
    if retx is not None and (not isinstance(retx, list) or len(retx) != 2):
        raise UsageError(f"{where}: retx_vs_ref must be [factor, slack], not {retx!r}")
    losses = d.get("retx_vs_losses")
    if losses is not None and (not isinstance(losses, list) or len(losses) != 2):
        raise UsageError(f"{where}: retx_vs_losses must be [factor, slack], not {losses!r}")
    ref_env = d.get("reference_env", {})
    if not isinstance(ref_env, dict) or not all(isinstance(v, str) for v in ref_env.values()):
        raise UsageError(f"{where}: reference_env must be a table of strings, not {ref_env!r}")
    try:
        link, shared = str(d.get("link", "")), bool(d.get("shared_queue", True))
        reverse = d.get("reverse")
        size = _positive(d.get("size", 65536), where, "size", zero=True)
        params = {**programs[part].params, **d.get("params", {})}
        if "time_limit" in d:
            limit = _positive(d["time_limit"], where, "time_limit")
        else:
            limit = limits.time_limit(limits.expected_seconds(programs[part].model, link, reverse or link, size,
                                                              params, shared))
        if "no_progress" in d:
            quiet = _positive(d["no_progress"], where, "no_progress")
        else:
            quiet = limits.no_progress_window(link, reverse or link, params)
        return Scenario(
            name=name, part=part, what=str(d.get("what", "")), link=link,
            reverse=reverse, shared_queue=shared, size=size, meet=d.get("meet", "student"),
            time_limit=limit, no_progress=quiet,
            points=_positive(d.get("points", 1), where, "points", zero=True), public=bool(d.get("public", False)),
            printed=bool(d.get("printed", False)), goodput_vs_ref=d.get("goodput_vs_ref"),
            retx_vs_ref=tuple(float(x) for x in retx) if retx else None,
            repeat=int(_positive(d.get("repeat", 1), where, "repeat")), params=params,
            retx_vs_losses=tuple(float(x) for x in losses) if losses else None, reference_env=dict(ref_env))
    except (TypeError, ValueError) as e:
        raise UsageError(f"{where}: {e}") from None


def _positive(value, where: str, what: str, zero: bool = False):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0 or (value == 0 and not zero):
        raise UsageError(f"{where}: {what} must be a {'non-negative' if zero else 'positive'} number, not {value!r}")
    return value
