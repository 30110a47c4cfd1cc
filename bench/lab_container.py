"""The COMN notebook in quick mode in the lab image and on the host: same figures?

``python -m bench lab_container [--pairs N] [--mode quick|tiny]``

A student's folder is the image's own release of `comn` plus a student's stand-alone
programs (tests/fixtures/students: Sender/Receiver 1-4, standard library only); a
last cell writes the measured tables (q1, q3, q5, q7) to tables.json. The notebook runs
top to bottom with `jupyter nbconvert --execute` on the host, then in `rdtlab/lab` with
the compose file's capabilities (NET_ADMIN, SYS_ADMIN, /dev/net/tun), as the notebook
user with the two ambient capabilities its entry point gives the kernel; N pairs,
alternating. Per pair: the figures whose 95% CIs overlap, the median and largest
relative difference, and how many container means the host's runs accept by the
grading's re-measurement rule (harness.notebook.accepted_range). Needs root and the
image (`make images`); the load average is printed with each run (BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGE = "rdtlab/lab:latest"
# Stand-alone COMN programs, as a student hands them in (the image has no reference/comn,
# which the reference programs import).
STUDENT = os.path.join(REPO, "tests", "fixtures", "students")
CAPS = [
    "--cap-add",
    "NET_ADMIN",
    "--cap-add",
    "SYS_ADMIN",
    "--device",
    "/dev/net/tun",
    "--security-opt",
    "apparmor:unconfined",
]
AS_JOVYAN = [
    "setpriv",
    "--reuid=1000",
    "--regid=100",
    "--init-groups",
    "--inh-caps=+net_admin,+sys_admin",
    "--ambient-caps=+net_admin,+sys_admin",
    "--",
]
EXECUTE = [
    "jupyter",
    "nbconvert",
    "--to",
    "notebook",
    "--execute",
    "--inplace",
    "--ExecutePreprocessor.allow_errors=True",
    "--ExecutePreprocessor.timeout=1800",
    "results_sheet.ipynb",
]
DUMP = (
    "import json\njson.dump({'lab': repr(lab), **{q: globals()[q + '_measured'].to_dict('records') "
    "for q in ('q1', 'q3', 'q5', 'q7')}}, open('tables.json', 'w'), default=float)"
)


def sh(*argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=True, **kw)


def load() -> str:
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def student_folder(dest: str) -> None:
    """The image's release of comn, the student's programs, and the dump cell."""
    import nbformat
    from nbformat.v4 import new_code_cell

    cid = sh("docker", "create", IMAGE).stdout.strip()
    try:
        sh("docker", "cp", f"{cid}:/opt/rdtlab/release/comn", dest)
    finally:
        sh("docker", "rm", cid)
    for n in range(1, 5):
        for kind in ("Sender", "Receiver"):
            shutil.copy(os.path.join(STUDENT, f"{kind}{n}.py"), dest)
    path = os.path.join(dest, "results_sheet.ipynb")
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(new_code_cell(DUMP))
    nbformat.write(nb, path)


def on_host(folder: str, mode: str) -> None:
    env = {
        **os.environ,
        "RDTLAB_NOTEBOOK_MODE": mode,
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
    }
    sh(*EXECUTE, cwd=folder, env=env)


def in_container(work: str, mode: str) -> None:
    name = f"rdtlab-bench-lab-{os.getpid()}"
    sh("chown", "-R", "1000:100", work)
    sh("docker", "run", "-d", "--name", name, *CAPS, "-v", f"{work}:/home/jovyan/work", IMAGE)
    try:
        deadline = time.monotonic() + 180
        while "JupyterLab is ready" not in sh("docker", "logs", name).stdout:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start: {sh('docker', 'logs', name).stdout[-500:]}")
            time.sleep(0.5)
        sh(
            "docker",
            "exec",
            "-w",
            "/home/jovyan/work/comn",
            name,
            *AS_JOVYAN,
            "env",
            "HOME=/home/jovyan",
            f"RDTLAB_NOTEBOOK_MODE={mode}",
            *EXECUTE,
        )
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)


def timed(label: str, fn, *args) -> None:
    start, at = time.monotonic(), load()
    fn(*args)
    print(
        f"  {label}: {time.monotonic() - start:.0f} s, load {at}-{load()} ({time.strftime('%H:%M:%S')} UTC)", flush=True
    )


def compare(host_dir: str, ctr_dir: str) -> str:
    from harness import notebook as nb
    from harness.assignments import get

    a, b = (json.load(open(os.path.join(d, "tables.json"))) for d in (host_dir, ctr_dir))
    total = within = 0
    diffs = []
    for q in ("q1", "q3", "q5", "q7"):
        for ra, rb in zip(a[q], b[q]):
            for m in ("retransmissions", "throughput_kBps"):
                if m not in ra:
                    continue
                ma, mb, ca, cb = ra[m], rb[m], ra[f"{m}_ci95"], rb[f"{m}_ci95"]
                total += 1
                if all(map(math.isfinite, (ma, mb, ca, cb))):
                    within += abs(ma - mb) <= ca + cb
                    diffs.append(abs(ma - mb) / max(abs(ma), 1e-9))
    tolerance = get("comn").tolerance
    runs = [_runs(host_dir), _runs(ctr_dir)]
    accepted = checked = 0
    for key, rows in runs[1].items():
        for m in ("goodput_kBps", "retransmissions"):
            if (m == "retransmissions" and key[0] != "q1") or not runs[0].get(key):
                continue
            low, high = nb.accepted_range([r[m] for r in runs[0][key]], tolerance.get(m, 0.0))
            checked += 1
            accepted += low <= statistics.mean(r[m] for r in rows) <= high
    return (
        f"{within}/{total} figures within the CIs; |diff| median {statistics.median(diffs):.1%}, largest "
        f"{max(diffs):.0%}; the host's runs accept {accepted}/{checked} container means"
    )


def _runs(folder: str) -> dict:
    out: dict = {}
    for path in glob.glob(os.path.join(folder, ".rdtlab", "*.jsonl")):
        for line in open(path):
            r = json.loads(line)
            if r["ok"]:
                out.setdefault((r["sweep"], r["cell"]), []).append(r)
    return out


def parser() -> argparse.ArgumentParser:
    """The arguments, built without running anything: tests/test_benchmarks_table.py parses
    BENCHMARKS.md's commands with them."""
    p = argparse.ArgumentParser(prog="python -m bench lab_container")
    p.add_argument("--pairs", type=int, default=2)
    p.add_argument("--mode", default="quick", choices=("quick", "tiny"))
    p.add_argument("--keep", metavar="DIR", help="keep the executed folders in DIR (else a temporary one)")
    return p


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if os.geteuid() != 0 or subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True).returncode:
        print(f"lab_container: needs root and the image {IMAGE} (make images); not run")
        return 0
    with tempfile.TemporaryDirectory(prefix="rdtlab-bench-lab-") as tmp:
        if args.keep:
            os.makedirs(args.keep)
            tmp = args.keep
        for n in range(1, args.pairs + 1):
            host, work = os.path.join(tmp, f"host{n}"), os.path.join(tmp, f"ctr{n}")
            student_folder(host)
            os.makedirs(work)
            student_folder(os.path.join(work, "comn"))
            print(f"pair {n}:", flush=True)
            timed("host", on_host, host, args.mode)
            timed("container", in_container, work, args.mode)
            print(f"  {compare(host, os.path.join(work, 'comn'))}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
