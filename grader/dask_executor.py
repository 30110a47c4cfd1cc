"""Grade a class on a Dask cluster (`rdtlab grade --scheduler tcp://HOST:8786`).

Each submission is one task running the same job as `python -m grader.protocol.job`. Workers
need the kit installed and the submissions and output folder at the same paths (a
shared file system), and root for the sandbox and the netns backend, as on one machine.
"""

from __future__ import annotations

import socket
from typing import Callable

from harness.procs import UsageError

from grader.protocol.battery import Battery
from grader.collect import Submission
from grader.protocol.grade import Options


def _job(sub: Submission, battery_ref: str, names: list[str], out: str | None, options: Options) -> dict:
    from grader.protocol.battery import load_battery
    from grader.protocol.grade import grade_submission

    battery = load_battery(battery_ref).select(names=names)
    result = grade_submission(sub, battery, out, options)
    try:
        from distributed import get_worker

        result["graded_by"] = get_worker().address
    except (ImportError, ValueError):
        result["graded_by"] = socket.gethostname()
    return result


def grade_on_cluster(
    address: str,
    subs: list[Submission],
    battery_ref: str,
    battery: Battery,
    out: str | None,
    options: Options,
    done: Callable[[dict], None] | None = None,
) -> list[dict]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError("--scheduler needs dask.distributed (pip install 'dask[distributed]')") from None
    try:
        client = Client(address, timeout=30)
    except (OSError, TimeoutError) as e:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    names = [s.name for s in battery.scenarios]
    with client:
        futures = [
            client.submit(_job, sub, battery_ref, names, out, options, pure=False, key=f"grade-{k}-{sub.student}")
            for k, sub in enumerate(subs)
        ]
        index = {f.key: k for k, f in enumerate(futures)}
        results: list = [None] * len(subs)
        for future in as_completed(futures):
            results[index[future.key]] = future.result()
            if done:
                done(results[index[future.key]])
    return results
