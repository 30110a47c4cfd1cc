"""How long a scenario may run: the grader's choice among harness/time_limits.py's
policies, which hold every number and why.

- time limit: GRADER (3x the expected duration of the part's protocol on the
  scenario's link, from its `model` in the battery: GBN, SR, stop-and-wait or a blast,
  plus 5 s, at least 10 s). A scenario's own `time_limit` in the battery wins.
- no progress: GRADER_WINDOW (8 rounds of round trip, jitter and retry timeout, at
  least 5 s). A scenario's own `no_progress` wins.
"""

from __future__ import annotations

from functools import partial

from harness import time_limits
from harness.time_limits import MODELS, mean_loss  # noqa: F401  (the battery checks models by this name)

time_limit = time_limits.GRADER
no_progress_window = partial(time_limits.no_progress_window, policy=time_limits.GRADER_WINDOW)


def expected_seconds(
    model: str, forward: str, reverse: str, size: int, params: dict, shared_queue: bool = True
) -> float:
    """The expected duration of a transfer of `size` bytes under `model`."""
    return time_limits.expected_seconds(forward, reverse, size, params, shared_queue, model=model)
