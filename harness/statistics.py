"""Per-cell statistics for repeated measurements.

A *cell* is one point of a sweep (one set of parameters) measured n times. We report
mean, sample standard deviation, min, max, the 95% confidence interval of the mean
(Student t, because n is small: 5 runs in the COMN sheet) and its margin of error,
absolute and relative to the mean. Seed 000's rule, "repeat until the 95% margin of
error is below 10% of the mean", is `needs_more_runs` / `repeat_until`.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Sequence

from scipy import stats as _stats

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    std: float          # sample standard deviation (n-1); nan when n < 2
    min: float
    max: float
    ci_low: float       # 95% CI of the mean; nan when n < 2
    ci_high: float
    margin: float       # half-width of the CI (absolute, same unit as the values)
    rel_margin: float   # margin / |mean|; inf when the mean is 0

    def to_dict(self) -> dict:
        return asdict(self)


def t_critical(n: int, confidence: float = CONFIDENCE) -> float:
    """Two-sided Student t quantile for a mean of n samples (n-1 degrees of freedom)."""
    return float(_stats.t.ppf(0.5 + confidence / 2, n - 1))


def summarize(values: Iterable[float], confidence: float = CONFIDENCE) -> Summary:
    """Summary of finite values; NaNs (failed runs) are left out. Empty -> n=0, all nan."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    nan = float("nan")
    if n == 0:
        return Summary(0, nan, nan, nan, nan, nan, nan, nan, nan)
    mean = math.fsum(xs) / n
    if n == 1:
        return Summary(1, mean, nan, xs[0], xs[0], nan, nan, nan, nan)
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    margin = t_critical(n, confidence) * std / math.sqrt(n)
    rel = margin / abs(mean) if mean != 0 else (0.0 if margin == 0 else math.inf)
    return Summary(n, mean, std, min(xs), max(xs), mean - margin, mean + margin, margin, rel)


def needs_more_runs(values: Sequence[float], target_rel_margin: float, cap: int,
                    min_runs: int = 3) -> bool:
    """Seed 000's stopping rule: go on while n < min_runs, or the relative 95% margin is
    not below the target, unless n has reached the cap."""
    n = len(values)
    if n >= cap:
        return False
    if n < min_runs:
        return True
    return not summarize(values).rel_margin < target_rel_margin


def repeat_until(measure: Callable[[int], float], target_rel_margin: float = 0.10,
                 cap: int = 30, min_runs: int = 3) -> list[float]:
    """Call measure(i) for i = 0, 1, ... until the relative 95% margin of the values is
    below the target (with at least min_runs values) or cap values were taken."""
    if cap < 1 or min_runs < 1 or target_rel_margin <= 0:
        raise ValueError("repeat_until: cap and min_runs must be >= 1 and the margin > 0")
    values: list[float] = []
    while needs_more_runs(values, target_rel_margin, cap, min_runs):
        values.append(measure(len(values)))
    return values
