"""A download of several objects: one transfer per object, one after the other, as a
sweep's run_one whose row holds the total.

Seed 001 fetches 20 objects of different sizes and plots the total download time; a
protocol's cost per object (the connection set-up of TCP, the ending of a UDP
transfer) and its cost per byte both count. Each object is one `TransferRun` call with
the cell's parameters and the object's `size`, so every object is verified byte for
byte; the first object that fails fails the run, named with its size and reason.
Each object's seed derives from the run's seed and its index, so a run is reproducible.

    ObjectsRun(TransferRun(sender, receiver, "loss {loss}%"), sizes=(1_010, 98_149, ...))

Row: `total_s` (the sum of the objects' wire times), `object_min_s`, `object_max_s`,
`retransmissions` (summed), `objects` (how many arrived intact).
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from typing import Callable


def object_sizes(n: int, low: int, high: int, seed: int) -> tuple[int, ...]:
    """n sizes drawn log-uniformly from [low, high] bytes with `seed` (web objects:
    many small, a few large), in the order drawn."""
    if not (n >= 1 and 1 <= low <= high):
        raise ValueError(f"object_sizes: need n >= 1 and 1 <= low <= high, got {n}, {low}, {high}")
    rng = random.Random(seed)
    return tuple(round(math.exp(rng.uniform(math.log(low), math.log(high)))) for _ in range(n))


def object_seed(seed: int, index: int) -> int:
    digest = hashlib.sha256(f"{seed}|object|{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


@dataclass(frozen=True)
class ObjectsRun:
    transfer: Callable[[dict, int], dict]  # one object: a TransferRun (the cell + "size")
    sizes: tuple[int, ...]

    def __call__(self, params: dict, seed: int) -> dict:
        times, retransmissions, cpu_s = [], 0, 0.0
        for k, size in enumerate(self.sizes):
            row = self.transfer({**params, "size": size}, object_seed(seed, k))
            if not row.get("ok"):
                return {
                    "ok": False,
                    "objects": k,
                    "error": f"object {k + 1} of {len(self.sizes)} ({size:,} bytes): {row.get('error')}",
                }
            if row.get("wire_time_s") is None:
                return {
                    "ok": False,
                    "objects": k,
                    "error": f"object {k + 1} of {len(self.sizes)} ({size:,} bytes): the link saw no packet",
                }
            times.append(row["wire_time_s"])
            retransmissions += row.get("retransmissions") or 0
            cpu_s += row.get("cpu_s") or 0.0
        return {
            "ok": True,
            "error": None,
            "objects": len(times),
            "total_s": math.fsum(times),
            "object_min_s": min(times),
            "object_max_s": max(times),
            "retransmissions": retransmissions,
            "cpu_s": round(cpu_s, 3),
        }
