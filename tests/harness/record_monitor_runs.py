"""Record what harness/monitor.py is fed in real failing runs, for test_monitor.py.

    PYTHONPATH=$PWD python3 tests/harness/record_monitor_runs.py   # rewrites monitor_runs.json

Each run is a misbehaving program of tests/fixtures (badprog.py, students/) or a
reference pair over a link that withholds its answers, on the local backend. Kept per
run: the monitor's limits, every check it was fed (time, engine and receiver state, the
engine's counters it reads, output size) with what it answered, the facts of the end
handed to `first_failure` and its answer, the final counters and whether the output
lacked only its tail (for the link story), and the error the run reported. Re-record
only when the harness's wording or the engine's counters change on purpose.
"""

import json
import os
import signal
import sys
import tempfile
import threading
from dataclasses import asdict
from pathlib import Path

from harness import Link, Program, monitor, run_transfer, transfer
from tests.support.runs import FIXTURES, REPO, bad, sw_receiver

OUT = Path(__file__).with_name("monitor_runs.json")
KEYS = (
    "packets_in",
    "repeats",
    "delivered",
    "bytes_delivered",
    "last_in_ns",
    "last_out_ns",
    "lost",
    "queue_drops",
    "down_drops",
    "corrupted",
    "io_errors",
)
STUDENTS = FIXTURES / "students"
COMN = REPO / "reference" / "comn"
SEND = "{receiver_host} {receiver_port} {file}"
RECV = "{listen_port} {output}"


def student(name: str, args: str) -> Program:
    return Program(f"python3 {STUDENTS}/{name} {args}")


SW_SENDER = Program(f"python3 {COMN}/Sender2.py {SEND} 100", output_format="comn-sw")
SW_RECEIVER = Program(f"python3 {COMN}/Receiver2.py {RECV}", env={"RDT_LINGER": "0.5"})
LOSSY = Link("delay 2ms loss 10% rate 10mbit", shared_queue=True)

# name -> what the run is, and run_transfer's arguments
RUNS = {
    "hang": (
        "a sender that ignores SIGTERM and sleeps (badprog hang)",
        dict(sender=bad("hang"), receiver=sw_receiver(), link=Link("delay 1ms"), size=5000, time_limit=1.5),
    ),
    "storm": (
        "a sender that floods one datagram as fast as it can (badprog flood)",
        dict(
            sender=bad("flood", "{receiver_host}", "{receiver_port}"),
            receiver=sw_receiver(),
            link=Link("delay 1ms"),
            size=5000,
            time_limit=6,
            no_progress=2,
        ),
    ),
    "storm-time-limit": (
        "the flood with the derived no-progress window, longer than the time limit",
        dict(
            sender=bad("flood", "{receiver_host}", "{receiver_port}"),
            receiver=sw_receiver(),
            link=Link("delay 1ms"),
            size=5000,
            time_limit=3,
        ),
    ),
    "sender-crash": (
        "a sender that exits 3 at once (badprog crash)",
        dict(sender=bad("crash"), receiver=sw_receiver(), link=Link("delay 1ms"), size=5000),
    ),
    "receiver-quits-early": (
        "an SR receiver that quits on an out-of-order EOF (students/Receiver4EofQuits.py)",
        dict(
            sender=student("Sender4.py", SEND + " 100 20"),
            receiver=student("Receiver4EofQuits.py", RECV + " 20"),
            link=Link("delay 20ms loss 10% rate 10mbit", shared_queue=True),
            size=20_000,
            no_progress=3,
            seed=3,
        ),
    ),
    "receiver-writes-nothing": (
        "a receiver that takes datagrams and writes nothing (badprog nothing)",
        dict(
            sender=bad("talk", "1"),
            receiver=bad("nothing", "{listen_port}", "{output}"),
            link=Link("delay 1ms"),
            size=5000,
        ),
    ),
    "burst-loses-eof": (
        "an unpaced part-1 burst whose tail, EOF included, is dropped at the queue",
        dict(
            sender=student("Sender1.py", SEND),
            receiver=student("Receiver1.py", RECV),
            link=Link("delay 2ms rate 1mbit limit 20"),
            size=60_000,
            receiver_grace=1.5,
            no_progress=3,
            seed=3,
        ),
    ),
    "sender-never-ends": (
        "a sender that never ends after the file is through (students/Sender2Forever.py)",
        dict(
            sender=student("Sender2Forever.py", SEND + " 30"),
            receiver=student("Receiver2.py", RECV),
            link=LOSSY,
            size=20_000,
            no_progress=3,
            seed=3,
        ),
    ),
    "sender-timing-bug": (
        "RetryTimeout given to settimeout as seconds (students/Sender2SecondsBug.py)",
        dict(
            sender=student("Sender2SecondsBug.py", SEND + " 30"),
            receiver=student("Receiver2.py", RECV),
            link=LOSSY,
            size=20_000,
            no_progress=3,
            seed=3,
        ),
    ),
    "deaf-sender": (
        "a sender that repeats packet 0 whatever it is answered (badprog repeat)",
        dict(
            sender=bad("repeat", "{receiver_host}", "{receiver_port}"),
            receiver=SW_RECEIVER,
            link=Link("delay 5ms"),
            size=4096,
            no_progress=2,
        ),
    ),
    "dead-receiver": (
        "a receiver that stops answering: the byte orders differ (reference Receiver2, little-endian)",
        dict(
            sender=SW_SENDER,
            link=Link("delay 5ms"),
            size=4096,
            no_progress=2,
            receiver=Program(SW_RECEIVER.command, env={"RDT_LINGER": "0.5", "RDT_BYTE_ORDER": "little"}),
        ),
    ),
    "answers-withheld": (
        "every ACK lost for the first 4 s, then delivered: a healthy run, not stopped",
        dict(
            sender=SW_SENDER,
            receiver=SW_RECEIVER,
            link=Link("delay 5ms", "delay 5ms loss 100%"),
            size=4096,
            no_progress=2,
            schedule=[{"at_ms": 4000, "cmd": "change", "path": "p0", "direction": "reverse", "spec": "delay 5ms"}],
        ),
    ),
    "engine-dies": (
        "the link engine killed by SIGKILL 1 s into a run with a hanging sender",
        dict(sender=bad("hang"), receiver=sw_receiver(), link=Link("delay 1ms"), size=5000, time_limit=30),
    ),
}


def trim(stats: dict | None) -> dict | None:
    """The counters the monitor and the link story read, per direction."""
    if stats is None:
        return None
    return {d: {k: v for k, v in (stats.get(d) or {}).items() if k in KEYS} for d in ("forward", "reverse")}


def plain(value):
    return json.loads(json.dumps(value, default=str))


def record(name: str, what: str, kw: dict) -> dict:
    rec = {"what": what, "checks": []}

    class Recording(monitor.Monitor):
        def __init__(self, time_limit_s, no_progress_s, start_ns, interval_s=monitor.WATCH_S):
            super().__init__(time_limit_s, no_progress_s, start_ns, interval_s)
            rec.update(time_limit_s=time_limit_s, no_progress_s=no_progress_s, start_ns=start_ns, interval_s=interval_s)

        def check(self, now_ns, **facts):
            stopped = super().check(now_ns, **facts)
            rec["checks"].append(
                {
                    "now_ns": now_ns,
                    **facts,
                    "stats": trim(facts.get("stats")),
                    "stopped": stopped and plain(asdict(stopped)),
                }
            )
            return stopped

    def first_failure(end):
        failure = monitor.first_failure(end)
        rec.update(end=plain(asdict(end)), failure=failure and plain(asdict(failure)))
        return failure

    def with_link_story(failure, stats, tail_missing):
        asked = []

        def tail():
            asked.append(tail_missing())
            return asked[-1]

        told = monitor.with_link_story(failure, stats, tail)
        rec.update(final_stats=trim(stats), tail_missing=asked[0] if asked else None)
        return told

    saved = transfer.Monitor, transfer.first_failure, transfer.with_link_story
    transfer.Monitor, transfer.first_failure, transfer.with_link_story = Recording, first_failure, with_link_story
    timer = threading.Timer(1.0, kill_engine) if name == "engine-dies" else None
    if timer:
        timer.start()
    try:
        res = run_transfer(backend="local", **{"seed": 1, **kw})
    finally:
        if timer:
            timer.cancel()
        transfer.Monitor, transfer.first_failure, transfer.with_link_story = saved
    rec.update(ok=res.ok, error=res.error, error_kind=res.error_kind and str(res.error_kind))
    print(f"{name}: {res.error_kind}: {res.error}", file=sys.stderr)
    return rec


def kill_engine() -> None:
    """SIGKILL the engine this process started (its command line names our temp dir)."""
    mine = tempfile.gettempdir().encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if b"linkemu" in cmd and mine in cmd:
            os.kill(int(pid), signal.SIGKILL)


def main() -> None:
    tempfile.tempdir = tempfile.mkdtemp(prefix="rdt-record-")
    try:
        runs = {name: record(name, what, dict(kw)) for name, (what, kw) in RUNS.items()}
    finally:
        os.rmdir(tempfile.tempdir)
    OUT.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
