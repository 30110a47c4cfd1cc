"""A student's notebook kernel in the same bubblewrap jail as their programs.

nbgrader's autograde runs each notebook in a fresh kernel, by default as the grader
itself: the student's cells could read the gradebook, the course's solutions and other
submissions, rewrite results, or reach the network (nbgrader issues #483, #1429).
`JailedExecute` (nbgrader's Execute) starts the kernel through `grader.jail.sandbox`
instead, configured by the driver (grader/notebook/autograde.py) in RDTLAB_KERNEL_JAIL:
  - under the submission's own uid, with its memory, process, CPU, file-size and
    open-file limits, in its own empty network namespace (loopback only: the harness
    measures on the local backend there, the notebook's backend line says so);
  - working in a private copy of the notebook's folder on a size-capped tmpfs
    (the programs it measures, the notebook's data); nothing else writable;
  - seeing the system's folders, the interpreter, the venv and only the parts of the
    kit a notebook imports (KIT_VISIBLE: the harness, the reference's wire format and
    runtime, not its protocols or programs, not the grader; of each assignment's folder
    its sheet and spec, ASSIGNMENT_VISIBLE, not its notebook's answers or its battery);
  - talking to nbgrader over Unix sockets (ZeroMQ's ipc transport) in a folder of its
    copy, since it has no network to share: the connection file is written there,
    readable by the jail alone.
Everything the kernel starts dies with it; the driver kills the uid's leftovers and
unmounts the tmpfs after each notebook.
"""

from __future__ import annotations

import ast
import compileall
import contextlib
import glob
import json
import os
import shutil
import sys
from dataclasses import asdict, dataclass, field

# jsonschema's IRI grammars, compiled at import and never used by nbformat or nbgrader
# (rdtlab/no_rfc3987_syntax.pth says why): skipped here too, for a grader run from an
# environment `make setup` did not make (the .pth skips them in every process of one).
sys.modules.setdefault("rfc3987_syntax", None)

import nbformat  # noqa: E402
from jupyter_client.manager import AsyncKernelManager  # noqa: E402
from nbgrader.preprocessors import Execute  # noqa: E402

from grader.jail.sandbox import SAFE_PATH, GroupLimits, Limits, Sandbox, prepare_scratch  # noqa: E402

JAIL_ENV = "RDTLAB_KERNEL_JAIL"
SOCKETS = os.path.join(".rdtlab", "kernel")  # the harness's own folder in the copy (never collected)
MATPLOTLIB = os.path.join(".rdtlab", "matplotlib")  # the kernel's MPLCONFIGDIR, in its copy
FONTS = "matplotlib"  # in the class's shared folder: the font list every kernel starts from

# What of the kit a notebook imports (the harness, and the few reference modules it
# uses: the wire format for time-sequence graphs, the RTO ceiling, kernel TCP's
# program). Everything else of the kit is hidden: the reference protocols and
# programs (the answers), the grader, its batteries, the course.
KIT_VISIBLE = (
    "harness",
    "pyproject.toml",
    "reference/__init__.py",
    "reference/cli.py",
    "reference/ending.py",
    "reference/runtime.py",
    "reference/wire.py",
    "reference/tcpfile.py",
    "reference/core/__init__.py",
    "reference/core/api.py",
    "reference/core/config.py",
    "reference/core/rto.py",
    "assignments/__init__.py",
)
# Of each assignment's folder (assignments/<name>/, and those of RDTLAB_ASSIGNMENTS_PATH):
# what the Lab imports. Its notebook.py (reference answers, marking notes), battery and
# the course's own files beside them stay hidden, wherever the course directory is.
ASSIGNMENT_VISIBLE = ("__init__.py", "sheet.py", "spec.py")

# A kernel with numpy, pandas and matplotlib maps far more than the programs it runs:
# the notebook's own limits (the programs it starts inherit them).
# The link engine runs inside the kernel's jail too (the harness starts it), beside the
# sweeps' senders and receivers, which the notebook starts in bursts: the group's CPU
# quota is the programs' jail's (two cores), since a quota is a hard stop for the rest of
# its period. A smaller quota throttles the notebook's bursts, engine and all: stalls that
# fire stop-and-wait timeouts, so an honest table disagrees with the grader's unthrottled
# re-measurement. Neighbours keep their share by the scheduler's fairness between groups.
NOTEBOOK_LIMITS = Limits(
    memory_bytes=4 << 30,
    processes=256,
    cpu_seconds=1800,
    file_bytes=256 << 20,
    open_files=1024,
    scratch_bytes=512 << 20,
    group=GroupLimits(memory_bytes=3 << 30, cpus=2.0, tasks=512),
)
# One thread per numeric library: a kernel on a 64-core grading machine would otherwise
# start 64 threads per library and meet the process limit.
THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# No progress bars: nobody watches an autograde, and every update of a bar is a widget
# message the kernel sends and nbgrader folds into the notebook, a large share of a
# kernel's CPU.
QUIET_ENV = {"RDTLAB_NOTEBOOK_PROGRESS": "off"}


@dataclass
class NotebookJail:
    """What the driver tells the kernel manager (through the environment: nbgrader
    builds the manager itself)."""

    uid: int
    scratch: str  # a tmpfs the driver mounted, owned by root
    hidden: list[str] = field(default_factory=list)  # the course, the submissions, the results
    assignment: str = ""
    shared: str = ""  # the class's kernel-TCP runs (root's; see kernel_tcp_runs)
    tcp_cc: str | None = None  # the congestion control the student's Lab asks for (asked_tcp_cc)
    limits: Limits = field(default_factory=lambda: NOTEBOOK_LIMITS)

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> "NotebookJail":
        text = os.environ.get(JAIL_ENV)
        if not text:
            raise RuntimeError(f"{JAIL_ENV} is not set: the jailed kernel is started by grader.notebook.autograde")
        data = json.loads(text)
        limits = Limits(**{**data["limits"], "group": GroupLimits(**data["limits"]["group"])})
        return cls(
            uid=data["uid"],
            scratch=data["scratch"],
            hidden=data["hidden"],
            assignment=data["assignment"],
            shared=data["shared"],
            tcp_cc=data.get("tcp_cc"),
            limits=limits,
        )


def kit_root() -> str:
    from harness.engine import REPO

    return str(REPO)


def kit_paths(root: str | None = None) -> tuple[list[str], list[str]]:
    """(visible, hidden) of the kit for a kernel: KIT_VISIBLE and each assignment's
    ASSIGNMENT_VISIBLE read-only, and everything else of the kit and of the assignments'
    folders hidden (the kit may lie under a folder the jail shows anyway, /opt/rdtlab in
    the images). The venv stays visible if it is in the kit."""
    root = root or kit_root()
    allowed = [os.path.join(root, p) for p in KIT_VISIBLE]
    allowed += [p for p in (os.path.realpath(sys.prefix),) if p.startswith(root + "/")]
    searched = [os.path.join(root, "assignments")] + assignment_search_path()
    allowed += [
        os.path.join(folder, name)
        for where in searched
        for folder in glob.glob(os.path.join(where, "*"))
        if os.path.isfile(os.path.join(folder, "spec.py"))
        for name in ASSIGNMENT_VISIBLE
    ]
    allowed = [p for p in allowed if os.path.exists(p)]
    return allowed, uncover([root] + searched[1:], allowed)


def assignment_search_path() -> list[str]:
    """The course's folders of assignments beside the kit's (RDTLAB_ASSIGNMENTS_PATH)."""
    from assignments import PATH_ENV

    return [os.path.abspath(p) for p in os.environ.get(PATH_ENV, "").split(os.pathsep) if p]


def uncover(hidden: list[str], visible: list[str]) -> list[str]:
    """`hidden` with every folder that holds a visible path replaced by what else it
    holds (a folder of the course that holds an assignment's sheet: its other files and
    folders hidden, the sheet shown)."""
    out: list[str] = []
    for path in hidden:
        inside = [v for v in visible if v.startswith(path + "/")]
        if path in visible:
            continue
        if not inside or not os.path.isdir(path):
            out.append(path)
            continue
        out += uncover([os.path.join(path, name) for name in sorted(os.listdir(path))], inside)
    return out


def interpreter_paths() -> list[str]:
    """The interpreter and the venv, wherever they are (pyenv keeps it under /root)."""
    paths = {
        os.path.realpath(sys.prefix),
        os.path.realpath(sys.base_prefix),
        os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
    }
    return sorted(paths)


def kernel_sandbox(jail: NotebookJail, work: str) -> Sandbox:
    visible, hidden = kit_paths()
    env = {name: value for name, value in os.environ.items() if name.startswith("RDTLAB_") and name != JAIL_ENV}
    env.update(THREAD_ENV, **QUIET_ENV)
    # PATH: the system's first, so the notebook's runs start the student's `python3` (and
    # java, cc) as the grader's re-measurement and battery do (SAFE_PATH), not the venv's
    # interpreter: the same figures, and a cheaper start (a static, optimised build, where
    # the venv's may be a version manager's shared one). The venv's bin stays after it,
    # for what only the venv has.
    # PYTHONPATH: the kit the jail shows is the one imported, not wherever the venv's
    # editable install points (another checkout, which the jail does not show)
    env.update(
        {
            "PATH": SAFE_PATH + ":" + os.path.join(sys.prefix, "bin"),
            "PYTHONPATH": kit_root(),
            "MPLCONFIGDIR": os.path.join(work, MATPLOTLIB),
            "IPYTHONDIR": "/tmp/ipython",
            "JUPYTER_RUNTIME_DIR": "/tmp/jupyter",
        }
    )
    hidden = uncover(sorted(set(hidden + jail.hidden)), visible)  # a course holding the assignments' folders
    return Sandbox(
        jail.uid,
        work,
        hidden=sorted(set(hidden)),
        limits=jail.limits,
        network=False,
        visible=sorted(set(visible + interpreter_paths())),
        env=env,
        run_dir=False,
    )


def private_copy(folder: str, jail: NotebookJail) -> str:
    """The notebook's folder copied into the jail's tmpfs, owned by its uid (once per
    kernel: a restart keeps what the notebook wrote), with the class's font list for
    matplotlib (write_font_list)."""
    work = os.path.join(jail.scratch, "sub")
    if not os.path.isdir(work):
        prepare_scratch(folder, jail.scratch, jail.uid, ignore=shutil.ignore_patterns(".rdtlab"))
        sockets, mpl = os.path.join(work, SOCKETS), os.path.join(work, MATPLOTLIB)
        os.makedirs(sockets, mode=0o700)
        os.makedirs(mpl, mode=0o700)
        fonts = os.path.join(jail.shared, FONTS) if jail.shared else ""
        for name in sorted(os.listdir(fonts)) if os.path.isdir(fonts) else []:
            shutil.copyfile(os.path.join(fonts, name), os.path.join(mpl, name))
            os.chown(os.path.join(mpl, name), jail.uid, jail.uid)
        for path in (os.path.dirname(sockets), sockets, mpl):
            os.chown(path, jail.uid, jail.uid)
    return work


def write_font_list(shared: str) -> None:
    """matplotlib's font list in the class's `shared` folder, made once by the grader:
    a kernel that makes its own runs fc-list and reads every font file at its first
    figure (BENCHMARKS.md, "Notebooks"). A list the
    kernel cannot use (another matplotlib, a font it cannot see) is made again there,
    by matplotlib itself."""
    from matplotlib import font_manager

    folder = os.path.join(shared, FONTS)
    os.makedirs(folder, exist_ok=True)
    font_manager.json_dump(
        font_manager.fontManager, os.path.join(folder, f"fontlist-v{font_manager.FontManager.__version__}.json")
    )


def compile_kit(root: str | None = None) -> None:
    """Bytecode for the parts of the kit a kernel imports (kit_paths' visible ones),
    written by the grader: the jail shows them read-only, so a kernel compiles every
    module without it at each start (a good share of a comn kernel's imports:
    BENCHMARKS.md, "Notebooks"). Where it is up to date this
    is a stat a file; where the kit is not writable, the kernels compile as before."""
    visible, _ = kit_paths(root)
    prefix = os.path.realpath(sys.prefix)
    for path in visible:
        if os.path.realpath(path) == prefix:
            continue
        if os.path.isdir(path):
            compileall.compile_dir(path, quiet=2)
        elif path.endswith(".py"):
            compileall.compile_file(path, quiet=2)


def asked_tcp_cc(folder: str) -> str | None:
    """The congestion control the notebooks in `folder` give their Lab (`tcp_cc=` a
    string, or a name bound to one earlier, as the sheets' `TCP_CC = "reno"` parameter),
    read from the source without running it; None for the kit's default. The grader
    measures kernel TCP with it, as the student did."""
    for path in sorted(glob.glob(os.path.join(folder, "*.ipynb"))):
        try:
            cells = nbformat.read(path, as_version=4).cells
        except Exception:
            continue
        names: dict[str, str] = {}
        for cell in cells:
            if cell.get("cell_type") != "code":
                continue
            # IPython's magics and shell escapes are not Python
            source = "\n".join(
                "" if line.lstrip().startswith(("%", "!")) else line for line in cell.source.splitlines()
            )
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and _text(node.value) is not None:
                    names.update({t.id: _text(node.value) for t in node.targets if isinstance(t, ast.Name)})
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Lab":
                    for kw in node.keywords:
                        if kw.arg == "tcp_cc":
                            return _text(kw.value) or names.get(getattr(kw.value, "id", None))
    return None


def _text(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def kernel_tcp_runs(assignment: str, shared: str, tcp_cc: str | None = None) -> list[str]:
    """The result files of the assignment's questions that run no program of the
    student's (kernel TCP, iperf3), measured on the netns backend in `shared` with the
    student's congestion control: once for the class and algorithm, by the first kernel
    to need them (the others wait on the lock). A jailed kernel has only the local
    backend, which cannot run them; its Lab uses these (harness/notebook.py
    Lab.measured_on_netns), on the same link and seeds. None when this machine has no
    netns backend or not that algorithm: those questions then say why, and their tests
    check only the table's shape, so the cells keep their points."""
    import fcntl
    from harness import backends
    from harness.notebook import Lab, tcp_cc_missing

    if not assignment or not shared or backends.netns_unavailable_reason() or tcp_cc_missing(tcp_cc):
        return []
    with open(os.path.join(shared, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lab = Lab("quick", assignment, folder=shared, backend="netns", progress=False, tcp_cc=tcp_cc)
        paths = []
        for q, spec in lab.spec.questions.items():
            if spec.programs:
                continue
            if not os.path.exists(lab.results_path(q)):
                with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
                    lab.measure(q)
            paths.append(lab.results_path(q))
        return [p for p in paths if os.path.exists(p)]


class JailedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel runs in the jail and listens on Unix sockets."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.jail = NotebookJail.from_env()
        self.transport = "ipc"
        self.sockets = os.path.join(self.jail.scratch, "sub", SOCKETS)
        self.ip = os.path.join(self.sockets, "ipc")
        self.connection_file = os.path.join(self.sockets, "connection.json")

    async def _async_pre_start_kernel(self, **kw):
        folder = kw.get("cwd") or os.getcwd()
        work = private_copy(folder, self.jail)
        for path in kernel_tcp_runs(self.jail.assignment, self.jail.shared, self.jail.tcp_cc):
            dest = os.path.join(work, ".rdtlab", os.path.basename(path))
            shutil.copyfile(path, dest)
            os.chown(dest, self.jail.uid, self.jail.uid)
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
        os.chown(self.connection_file, self.jail.uid, self.jail.uid)
        kw["cwd"] = work
        return kernel_sandbox(self.jail, work).prefix() + kernel_cmd, kw


class JailedExecute(Execute):
    """nbgrader's Execute, its kernels started by JailedKernelManager."""

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = JailedKernelManager
        super().__init__(*args, **kwargs)


# ---- the grader's child per student: nbgrader's autograde with the jailed Execute -------


def run_nbgrader_autograde(argv: list[str]) -> None:
    """`nbgrader autograde ARGV` with the course's config, Execute jailed."""
    from nbgrader.apps.autogradeapp import AutogradeApp
    from nbgrader.converters.autograde import Autograde
    from grader.notebook import schema_once

    schema_once.install()
    app = AutogradeApp.instance()
    app.initialize(argv)
    configured = app.config.Autograde.get("autograde_preprocessors") or Autograde.autograde_preprocessors.default()
    steps = [
        JailedExecute if step is Execute or step == "nbgrader.preprocessors.Execute" else step for step in configured
    ]
    if JailedExecute not in steps:
        sys.exit("grader.notebook.notebook_jail: the course's Autograde.autograde_preprocessors has no Execute to jail")
    app.config.Autograde.autograde_preprocessors = steps
    app.start()
