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

from harness.cli import DIRECTIONS
from harness.procs import UsageError

from grader.jail import limits
from grader.jail.limits import MODELS

MEETINGS = ("student", "sender", "receiver")
SCENARIO_KEYS = {
    "name",
    "part",
    "what",
    "link",
    "reverse",
    "shared_queue",
    "size",
    "meet",
    "time_limit",
    "no_progress",
    "points",
    "public",
    "printed",
    "goodput_vs_ref",
    "retx_vs_ref",
    "repeat",
    "params",
    "retx_vs_losses",
    "reference_env",
    "paths",
    "schedule",
    "ipv6",
    "backend",
    "beyond_spec",
    "path_share",
    "sizes",
    "sent_vs_ref",
    "fast_retransmit_k",
    "timer_after_sample_ms",
}
CONVENTION_KEYS = ("byte_order", "numbering", "first_seq", "eof_value", "ack")
# What a battery's grader probes per submission ([battery] detect): COMN's open
# conventions, only the byte order of a format whose data messages start with a
# `seq_bytes`-wide sequence number, or nothing (the format fixes everything).
DETECT = ("comn", "byte_order", "none")
SCHEDULE_COMMANDS = ("down", "up")


@dataclass(frozen=True)
class Programs:
    """One part's programs: command templates whose first word names the program."""

    sender: str
    receiver: str
    output_format: str | None
    params: dict
    model: str = "stop-and-wait"  # the protocol's model for time limits (grader/jail/limits.py)
    model_timeout: float | None = None  # ms: the timeout the limits assume where the command line
    # sets none (an adaptive RTO's back-off ceiling)

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
    time_limit: float  # seconds; derived from the part's model unless the battery sets it
    no_progress: float  # seconds without progress before a run is stopped (likewise)
    points: float
    public: bool
    printed: bool
    goodput_vs_ref: float | None
    retx_vs_ref: tuple[float, ...] | None
    repeat: int
    params: dict
    retx_vs_losses: tuple[float, ...] | None = None  # retransmissions <= factor x losses + slack
    reference_env: dict = field(default_factory=dict)  # the reference programs' extra environment
    paths: tuple = ()  # several paths: ((forward, reverse or None), ...); else `link` alone
    schedule: tuple = ()  # the engine's events: ({"at_ms", "cmd": down | up, "path": p0 ...}, ...)
    ipv6: bool = False
    backend: str | None = None  # the backend it needs (netns: IP fragments over TUN), when the grader's is auto
    beyond_spec: bool = False  # tests more than the assignment's spec exercises
    scored: bool = True  # False: beyond the spec and the course does not score it (points 0)
    path_share: float | None = None  # each path carries at least this share of the data messages
    sizes: tuple = ()  # files of these sizes, one per run (seed 001's objects); else `size`
    sent_vs_ref: tuple[float, ...] | None = None  # data messages into the link, those sent into
    # a down path too, <= factor x the reference's + slack
    fast_retransmit_k: int | None = None  # no resend after fewer than k duplicate ACKs (the trace)
    timer_after_sample_ms: float | None = None  # the first timeout after a clean RTT sample comes
    # within this of the sender's last activity (the trace)

    @property
    def reads_trace(self) -> bool:
        """Whether a check reads the engine's trace of the student's runs."""
        return self.fast_retransmit_k is not None or self.timer_after_sample_ms is not None

    def size_of(self, run: int) -> int:
        """The file size of the scenario's run number `run`."""
        return self.sizes[run % len(self.sizes)] if self.sizes else self.size

    @property
    def needs_reference_run(self) -> bool:
        """Whether a check compares with the reference on the same link and seed."""
        return self.goodput_vs_ref is not None or self.retx_vs_ref is not None or self.sent_vs_ref is not None


@dataclass
class Battery:
    name: str
    title: str
    programs: dict[int, Programs]
    scenarios: list[Scenario] = field(default_factory=list)
    source: str = ""
    reference: str = "reference/comn"  # the reference programs, relative to the kit's root
    conventions: dict = field(default_factory=dict)  # conventions the course fixes ([conventions])
    detect: str = "comn"  # what is probed per submission (DETECT)
    seq_bytes: int = 2  # detect = "byte_order": the sequence number's width
    build_time_limit: float | None = None  # seconds a submission's build may take (else the grader's)

    @property
    def max_score(self) -> float:
        return sum(s.points for s in self.scenarios)

    def select(self, part: int | None = None, public_only: bool = False, names: list[str] | None = None) -> "Battery":
        """A battery with only some scenarios (a part, the public ones, named ones)."""
        keep = [
            s
            for s in self.scenarios
            if (part is None or s.part == part) and (not public_only or s.public) and (names is None or s.name in names)
        ]
        return Battery(
            self.name,
            self.title,
            self.programs,
            keep,
            self.source,
            self.reference,
            self.conventions,
            self.detect,
            self.seq_bytes,
            self.build_time_limit,
        )


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
        unknown = set(p) - {"sender", "receiver", "output_format", "params", "model", "model_timeout"}
        if unknown:
            raise UsageError(f"{where}: unknown key(s) {sorted(unknown)}")
        programs[int(part)] = Programs(
            p["sender"], p["receiver"], p.get("output_format"), dict(p.get("params", {})), model, p.get("model_timeout")
        )
    defaults = data.get("defaults", {})
    detect = head.get("detect", "comn")
    if detect not in DETECT:
        raise UsageError(f"battery {source}, [battery]: detect must be one of {', '.join(DETECT)}, not {detect!r}")
    seq_bytes = head.get("seq_bytes", 2)
    if seq_bytes not in (2, 4):
        raise UsageError(f"battery {source}, [battery]: seq_bytes must be 2 or 4, not {seq_bytes!r}")
    score_beyond = head.get("score_beyond_spec", False)
    if not isinstance(score_beyond, bool):
        raise UsageError(f"battery {source}, [battery]: score_beyond_spec must be true or false, not {score_beyond!r}")
    build_limit = head.get("build_time_limit")
    if build_limit is not None and (
        isinstance(build_limit, bool) or not isinstance(build_limit, (int, float)) or build_limit <= 0
    ):
        raise UsageError(
            f"battery {source}, [battery]: build_time_limit must be a positive number of seconds, not {build_limit!r}"
        )
    battery = Battery(
        head.get("name", Path(source).stem),
        head.get("title", ""),
        programs,
        source=source,
        reference=head.get("reference", "reference/comn"),
        conventions=_conventions(data.get("conventions", {}), source),
        detect=detect,
        seq_bytes=seq_bytes,
        build_time_limit=build_limit,
    )
    names = set()
    for raw in data.get("scenario", []):
        s = _scenario({**defaults, **raw}, programs, source, score_beyond)
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


def _paths(value, where: str) -> tuple:
    """`paths = ["delay 5ms", {link = "delay 60ms", reverse = "..."}]` -> ((forward, reverse), ...)."""
    if not isinstance(value, list) or not value:
        raise UsageError(
            f"{where}: paths must be a list of link specs (or tables with link and reverse), not {value!r}"
        )
    out = []
    for p in value:
        if isinstance(p, str):
            out.append((p, None))
        elif isinstance(p, dict) and isinstance(p.get("link", ""), str) and set(p) <= {"link", "reverse"}:
            out.append((p.get("link", ""), p.get("reverse")))
        else:
            raise UsageError(f"{where}: a path must be a link spec or a table with link and reverse, not {p!r}")
    return tuple(out)


def _schedule(value, n_paths: int, where: str) -> tuple:
    """`schedule = [{at_ms = 1000, cmd = "down", path = "p0"}, ...]`, checked; an event may
    name one `direction` ("forward" or "reverse") of its path."""
    if not isinstance(value, list):
        raise UsageError(f"{where}: schedule must be a list of {{at_ms, cmd, path}} tables, not {value!r}")
    names = [f"p{k}" for k in range(n_paths)]
    for e in value:
        if not (
            isinstance(e, dict)
            and {"at_ms", "cmd", "path"} <= set(e) <= {"at_ms", "cmd", "path", "direction"}
            and isinstance(e["at_ms"], int)
            and e["at_ms"] >= 0
            and e["cmd"] in SCHEDULE_COMMANDS
            and e["path"] in names
            and e.get("direction", DIRECTIONS[0]) in DIRECTIONS
        ):
            raise UsageError(
                f"{where}: a schedule event must be {{at_ms = <ms>, cmd = down|up, path = "
                f"{'|'.join(names)}}} and may name a direction = forward|reverse, not {e!r}"
            )
    return tuple(dict(e) for e in sorted(value, key=lambda e: e["at_ms"]))


def outage_seconds(schedule: tuple) -> float:
    """How long paths (or one direction of one) are down in all, by the schedule (a path
    never brought up: 0, the others carry on)."""
    down: dict = {}
    total = 0.0
    for e in schedule:
        key = (e["path"], e.get("direction"))
        if e["cmd"] == "down":
            down.setdefault(key, e["at_ms"])
        elif key in down:
            total += (e["at_ms"] - down.pop(key)) / 1000
    return total


def _scenario(d: dict, programs: dict[int, Programs], source: str, score_beyond: bool = False) -> Scenario:
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
        raise UsageError(
            f"{where}: a shared queue (netem on lo) has one spec for both directions; "
            f"set shared_queue = false for a different reverse link"
        )
    retx = d.get("retx_vs_ref")
    if retx is not None and (not isinstance(retx, list) or len(retx) != 2):
        raise UsageError(f"{where}: retx_vs_ref must be [factor, slack], not {retx!r}")
    sent = d.get("sent_vs_ref")
    if sent is not None and (not isinstance(sent, list) or len(sent) != 2):
        raise UsageError(f"{where}: sent_vs_ref must be [factor, slack], not {sent!r}")
    losses = d.get("retx_vs_losses")
    if losses is not None and (not isinstance(losses, list) or len(losses) != 2):
        raise UsageError(f"{where}: retx_vs_losses must be [factor, slack], not {losses!r}")
    beyond = bool(d.get("beyond_spec", False))
    scored = score_beyond or not beyond
    ref_env = d.get("reference_env", {})
    if not isinstance(ref_env, dict) or not all(isinstance(v, str) for v in ref_env.values()):
        raise UsageError(f"{where}: reference_env must be a table of strings, not {ref_env!r}")
    paths = _paths(d["paths"], where) if "paths" in d else ()
    if paths and ("link" in d or "reverse" in d):
        raise UsageError(f"{where}: give either link (and reverse) or paths, not both")
    schedule = _schedule(d.get("schedule", []), max(1, len(paths)), where)
    if d.get("backend") not in (None, "netns", "local"):
        raise UsageError(f"{where}: backend must be netns or local, not {d.get('backend')!r}")
    sizes = d.get("sizes", [])
    if not isinstance(sizes, list) or not all(isinstance(n, int) and n >= 0 for n in sizes):
        raise UsageError(f"{where}: sizes must be a list of file sizes in bytes, not {sizes!r}")
    share = d.get("path_share")
    if share is not None and not (isinstance(share, (int, float)) and 0 < share < 1 and len(paths) > 1):
        raise UsageError(f"{where}: path_share must be a fraction between 0 and 1, on a scenario of several paths")
    try:
        link, shared = (paths[0][0], False) if paths else (str(d.get("link", "")), bool(d.get("shared_queue", True)))
        reverse = paths[0][1] if paths else d.get("reverse")
        size = _positive(d.get("size", max(sizes, default=65536)), where, "size", zero=True)
        params = {**programs[part].params, **d.get("params", {})}
        modelled = (
            {**params, "timeout": params.get("timeout") or programs[part].model_timeout}
            if programs[part].model_timeout
            else params
        )
        if "time_limit" in d:
            limit = _positive(d["time_limit"], where, "time_limit")
        else:
            limit = max(
                limits.time_limit(
                    limits.expected_seconds(programs[part].model, f, r or f, size, modelled, shared)
                    + outage_seconds(schedule)
                )
                for f, r in (paths or ((link, reverse),))
            )
        if "no_progress" in d:
            quiet = _positive(d["no_progress"], where, "no_progress")
        else:
            quiet = max(limits.no_progress_window(f, r or f, modelled) for f, r in (paths or ((link, reverse),)))
        return Scenario(
            name=name,
            part=part,
            what=str(d.get("what", "")),
            link=link,
            reverse=reverse,
            shared_queue=shared,
            size=size,
            meet=d.get("meet", "student"),
            time_limit=limit,
            no_progress=quiet,
            points=_positive(d.get("points", 1), where, "points", zero=True) if scored else 0.0,
            public=bool(d.get("public", False)),
            printed=bool(d.get("printed", False)),
            goodput_vs_ref=d.get("goodput_vs_ref"),
            retx_vs_ref=tuple(float(x) for x in retx) if retx else None,
            repeat=int(_positive(d.get("repeat", len(sizes) or 1), where, "repeat")),
            params=params,
            retx_vs_losses=tuple(float(x) for x in losses) if losses else None,
            reference_env=dict(ref_env),
            paths=paths,
            schedule=schedule,
            ipv6=bool(d.get("ipv6", False)),
            backend=d.get("backend"),
            beyond_spec=beyond,
            scored=scored,
            path_share=share,
            sizes=tuple(sizes),
            sent_vs_ref=tuple(float(x) for x in sent) if sent else None,
            fast_retransmit_k=_dup_acks(d.get("fast_retransmit_k"), where),
            timer_after_sample_ms=(
                None
                if d.get("timer_after_sample_ms") is None
                else float(_positive(d["timer_after_sample_ms"], where, "timer_after_sample_ms"))
            ),
        )
    except (TypeError, ValueError) as e:
        raise UsageError(f"{where}: {e}") from None


def _dup_acks(value, where: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise UsageError(f"{where}: fast_retransmit_k must be a number of duplicate ACKs (1 or more), not {value!r}")
    return value


def _positive(value, where: str, what: str, zero: bool = False):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0 or (value == 0 and not zero):
        raise UsageError(f"{where}: {what} must be a {'non-negative' if zero else 'positive'} number, not {value!r}")
    return value
