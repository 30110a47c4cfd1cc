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

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    std: float  # sample standard deviation (n-1); nan when n < 2
    min: float
    max: float
    ci_low: float  # 95% CI of the mean; nan when n < 2
    ci_high: float
    margin: float  # half-width of the CI (absolute, same unit as the values)
    rel_margin: float  # margin / |mean|; inf when the mean is 0

    def to_dict(self) -> dict:
        return asdict(self)


# scipy's t.ppf(0.975, df) for df = 1..63 (every n the kit's cells have: runs are capped
# at 30), so a 95% interval needs no scipy: importing scipy.stats is slow, and would be
# paid by every kernel and grading process. tests/experiments/test_statistics.py checks each
# value against scipy.
T975 = (
    12.706204736174694,
    4.302652729749462,
    3.1824463052837078,
    2.7764451051977934,
    2.5705818356363146,
    2.4469118511449786,
    2.364624251592784,
    2.306004135204166,
    2.262157162798205,
    2.228138851986274,
    2.200985160091639,
    2.1788128296672284,
    2.1603686564627913,
    2.144786687917804,
    2.131449545559776,
    2.1199052992212546,
    2.1098155778333156,
    2.1009220402410382,
    2.0930240544083087,
    2.085963447265864,
    2.0796138447276795,
    2.0738730679040254,
    2.0686576104190486,
    2.0638985616280245,
    2.0595385527532972,
    2.0555294386428735,
    2.0518305164802846,
    2.0484071417952454,
    2.045229642132703,
    2.0422724563012378,
    2.039513446396408,
    2.0369333434601016,
    2.0345152974493383,
    2.0322445093177186,
    2.030107928250343,
    2.0280940009804502,
    2.0261924630291093,
    2.0243941639119694,
    2.022690920036761,
    2.021075390306273,
    2.019540970441376,
    2.0180817028184443,
    2.016692199227824,
    2.0153675744437636,
    2.014103388880846,
    2.012895598919429,
    2.0117405137297655,
    2.010634757624232,
    2.0095752371292392,
    2.008559112100761,
    2.007583770315836,
    2.006646805061688,
    2.0057459953178687,
    2.0048792881880564,
    2.0040447832891455,
    2.003240718847872,
    2.002465459291007,
    2.0017174841452356,
    2.000995378088267,
    2.0002978220142604,
    1.999623584994939,
    1.9989715170333788,
    1.998340542520741,
)


def t_critical(n: int, confidence: float = CONFIDENCE) -> float:
    """Two-sided Student t quantile for a mean of n samples (n-1 degrees of freedom)."""
    if confidence == CONFIDENCE and 2 <= n <= len(T975) + 1:
        return T975[n - 2]
    from scipy import stats  # here, not at the top: see T975

    return float(stats.t.ppf(0.5 + confidence / 2, n - 1))


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


def needs_more_runs(values: Sequence[float], target_rel_margin: float, cap: int, min_runs: int = 3) -> bool:
    """Seed 000's stopping rule: go on while n < min_runs, or the relative 95% margin is
    not below the target, unless n has reached the cap."""
    n = len(values)
    if n >= cap:
        return False
    if n < min_runs:
        return True
    return not summarize(values).rel_margin < target_rel_margin


def repeat_until(
    measure: Callable[[int], float], target_rel_margin: float = 0.10, cap: int = 30, min_runs: int = 3
) -> list[float]:
    """Call measure(i) for i = 0, 1, ... until the relative 95% margin of the values is
    below the target (with at least min_runs values) or cap values were taken."""
    if cap < 1 or min_runs < 1 or target_rel_margin <= 0:
        raise ValueError("repeat_until: cap and min_runs must be >= 1 and the margin > 0")
    values: list[float] = []
    while needs_more_runs(values, target_rel_margin, cap, min_runs):
        values.append(measure(len(values)))
    return values


# ---- conclusions only where the intervals allow -----------------------------------------
# Every comparison a sheet writes ("A beats B", "peaks at", "X× faster", "the optimal
# timeout is") goes through these: it ranks two cells only when their 95% intervals are
# disjoint, and otherwise says the runs cannot tell them apart and what would.

RUNS_CAP = 1000


POINT = 1 << 30  # "runs" of an exact value (a model's): an interval of width 0


def _nums(cell) -> tuple[int, float, float, float]:
    """(n, mean, std, margin) of a cell summary (a dict or Summary), or of a plain number
    (a model's value: exact, an interval of width 0); nan where unknown."""
    if isinstance(cell, (int, float)):
        return POINT, float(cell), 0.0, 0.0
    get = cell.get if isinstance(cell, dict) else lambda k, d=None: getattr(cell, k, d)
    nan = float("nan")
    n = int(get("n", 0) or 0)
    return n, float(get("mean", nan)), float(get("std", nan)), float(get("margin", nan))


def interval(cell) -> tuple[float, float] | None:
    """The 95% interval of a cell's mean; None with fewer than 2 runs (no interval)."""
    n, mean, _, margin = _nums(cell)
    if n < 2 or not (math.isfinite(mean) and math.isfinite(margin)):
        return None
    return mean - margin, mean + margin


def order(a, b) -> int:
    """+1 if a's mean is above b's with disjoint 95% intervals, -1 if below, 0 if the runs
    cannot tell them apart (the intervals overlap, or a cell has no interval)."""
    ia, ib = interval(a), interval(b)
    if ia is None or ib is None:
        return 0
    if ia[0] > ib[1]:
        return 1
    if ib[0] > ia[1]:
        return -1
    return 0


def runs_to_separate(a, b, cap: int = RUNS_CAP) -> int | None:
    """About how many runs per cell would make the two intervals disjoint if the means
    and spreads stay as measured (t·(s_a + s_b)/√n < |mean_a − mean_b|); None when the
    means are equal or the spread unknown, or more than `cap` would be needed."""
    _, ma, sa, _ = _nums(a)
    _, mb, sb, _ = _nums(b)
    gap = abs(ma - mb)
    if sa == sb == 0:
        return None
    if not all(math.isfinite(v) for v in (gap, sa, sb)) or gap == 0:
        return None
    for n in range(2, cap + 1):
        if t_critical(n) * (sa + sb) / math.sqrt(n) < gap:
            return n
    return None


def margin_to_separate(a, b) -> float | None:
    """The relative --margin F that would make the intervals disjoint, were the means as
    measured (F·(|mean_a| + |mean_b|) < |mean_a − mean_b|), rounded down; None if the means
    are equal."""
    na, ma, _, _ = _nums(a)
    nb, mb, _, _ = _nums(b)
    total, gap = abs(ma) * (na != POINT) + abs(mb) * (nb != POINT), abs(ma - mb)
    if not (math.isfinite(total) and math.isfinite(gap)) or gap == 0 or total == 0:
        return None
    f = gap / total
    step = 10 ** math.floor(math.log10(f))  # one significant figure, rounded down
    return math.floor(f / step) * step


def what_would_tell(a, b) -> str:
    """', about N runs per cell (or --margin F) would tell them apart' or why none would."""
    runs, margin = runs_to_separate(a, b), margin_to_separate(a, b)
    if runs is None and margin is None:
        return "; their means are the same, so no number of runs would rank them"
    more = []
    if runs is not None:
        more.append(f"about {runs} runs per cell")
    elif math.isfinite(_nums(a)[2]) and math.isfinite(_nums(b)[2]):
        more.append(f"more than {RUNS_CAP} runs per cell")
    if margin is not None:
        more.append(f"--margin {margin:g}")
    return f"; {' (or '.join(more)}{')' if len(more) == 2 else ''} would tell them apart if the means held"


def _value(cell, unit: str, digits: int) -> str:
    n, mean, _, margin = _nums(cell)
    if not math.isfinite(mean):
        return "not measured"
    text = f"{mean:,.{digits}f}"
    if 2 <= n < POINT and math.isfinite(margin):
        text += f" ± {margin:,.{digits}f}"
    return text + (f" {unit}" if unit else "") + ("" if n >= 2 else ", one run")


def compare(
    name_a: str,
    a,
    name_b: str,
    b,
    unit: str = "",
    digits: int = 1,
    higher: str = "is above",
    lower: str = "is below",
    ratio: bool = False,
) -> str:
    """One sentence comparing two cells: ranked only when the 95% intervals are disjoint
    ("A (x ± m) is above B (y ± m)", with "k.k×" if `ratio`), else "the runs cannot tell
    A (...) from B (...)" and how many runs or which --margin would."""
    va, vb = _value(a, unit, digits), _value(b, unit, digits)
    _, ma, _, _ = _nums(a)
    _, mb, _, _ = _nums(b)
    if not (math.isfinite(ma) and math.isfinite(mb)):
        return f"{name_a} ({va}) and {name_b} ({vb}) cannot be compared: one was not measured"
    o = order(a, b)
    if o == 0:
        points = [n for n, c in ((name_a, a), (name_b, b)) if _nums(c)[0] == POINT]
        why = f"{points[0]} lies inside the other's 95% interval" if len(points) == 1 else "their 95% intervals overlap"
        return f"the runs cannot tell {name_a} ({va}) from {name_b} ({vb}): {why}" + what_would_tell(a, b)
    times = f", {ma / mb:.2f}×" if ratio and mb else ""
    return f"{name_a} ({va}) {higher if o > 0 else lower} {name_b} ({vb}{times})"


def best(cells: dict, larger: bool = True) -> tuple[object, list]:
    """The key of the cell with the largest (or smallest) mean, and the keys whose 95%
    intervals overlap it: the runs cannot tell those from the best. Cells without a finite
    mean are left out; ({} -> (None, []))."""
    finite = {k: c for k, c in cells.items() if math.isfinite(_nums(c)[1])}
    if not finite:
        return None, []
    sign = 1 if larger else -1
    top = max(finite, key=lambda k: sign * _nums(finite[k])[1])
    ties = [k for k in finite if k != top and order(finite[top], finite[k]) == 0]
    return top, ties


def best_sentence(what: str, cells: dict, label, unit: str = "", digits: int = 1, larger: bool = True) -> str:
    """ "<what> is <label(best)> (x ± m unit)" when the best cell's 95% interval is clear of
    every other's; otherwise that the runs cannot tell which of the overlapping cells it
    is, and how many runs or which --margin would."""
    top, ties = best(cells, larger)
    if top is None:
        return f"{what}: not measured"
    if not ties:
        return f"{what} is {label(top)} ({_value(cells[top], unit, digits)})"
    closest = max(ties, key=lambda k: runs_to_separate(cells[top], cells[k]) or RUNS_CAP + 1)
    return (
        f"{what}: the runs cannot tell which of {', '.join(label(k) for k in [top, *ties])} it is (their 95% "
        f"intervals overlap; the {'highest' if larger else 'lowest'} mean is {_value(cells[top], unit, digits)} "
        f"at {label(top)})" + what_would_tell(cells[top], cells[closest])
    )
