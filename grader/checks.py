"""What a scenario's runs must show. Each check gives a verdict and one line saying
why; numbers come from the harness (what crossed the link), never from what the
program printed, except the printed-line check itself.
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.transfer import OUTPUT_FORMATS, TransferResult

from grader.battery import Programs, Scenario


@dataclass
class Check:
    name: str
    passed: bool
    detail: str


def evaluate(scenario: Scenario, programs: Programs, runs: list[TransferResult],
             references: list[TransferResult | None]) -> list[Check]:
    """Every check of the scenario over its runs (a run failing one fails it)."""
    checks = [delivered(runs)]
    if scenario.printed and scenario.meet != "receiver" and programs.output_format:
        checks.append(printed(runs, programs))
    if scenario.goodput_vs_ref is not None:
        checks.append(goodput(runs, references, scenario.goodput_vs_ref))
    if scenario.retx_vs_ref is not None:
        checks.append(retransmissions(runs, references, *scenario.retx_vs_ref))
    return checks


def delivered(runs: list[TransferResult]) -> Check:
    for k, r in enumerate(runs):
        if not r.ok:
            which = f"run {k + 1} (seed {r.seed}): " if k else ""
            return Check("delivered", False, which + (r.error or "failed"))
    return Check("delivered", True, "the file arrived byte for byte" + (f" in all {len(runs)} runs" if len(runs) > 1 else ""))


def printed(runs: list[TransferResult], programs: Programs) -> Check:
    shape = " ".join(f"<{n}>" for n in OUTPUT_FORMATS[programs.output_format])
    for r in runs:
        if r.ok and r.printed is None:
            tail = (r.sender.stdout_tail.strip().splitlines() or [""])[-1][:80] if r.sender else ""
            return Check("printed", False, f"the sender's last line {tail!r} is not '{shape}'")
    return Check("printed", True, f"the sender printed '{shape}'")


def goodput(runs: list[TransferResult], refs: list[TransferResult | None], fraction: float) -> Check:
    worst = None
    for r, ref in zip(runs, refs):
        if not (r.ok and ref is not None and ref.ok and r.goodput_kBps and ref.goodput_kBps):
            continue        # no comparison: a failed reference run never costs the student
        ratio = r.goodput_kBps / ref.goodput_kBps
        if worst is None or ratio < worst[0]:
            worst = (ratio, r.goodput_kBps, ref.goodput_kBps)
    if worst is None:
        return Check("goodput", True, "no reference figure to compare with")
    ratio, mine, theirs = worst
    verdict = ratio >= fraction
    return Check("goodput", verdict, f"goodput {mine:.1f} KB/s, {ratio:.0%} of the reference's {theirs:.1f} KB/s"
                 + ("" if verdict else f" (at least {fraction:.0%} needed)"))


def retransmissions(runs: list[TransferResult], refs: list[TransferResult | None], factor: float,
                    slack: float) -> Check:
    for r, ref in zip(runs, refs):
        if not (r.ok and ref is not None and ref.ok) or r.retransmissions is None or ref.retransmissions is None:
            continue
        allowed = factor * ref.retransmissions + slack
        if r.retransmissions > allowed:
            return Check("retransmissions", False,
                         f"{r.retransmissions} retransmissions on the wire, the reference needed "
                         f"{ref.retransmissions} (at most {allowed:g} allowed)")
    mine = [r.retransmissions for r in runs if r.retransmissions is not None]
    theirs = [ref.retransmissions for ref in refs if ref is not None and ref.retransmissions is not None]
    return Check("retransmissions", True, f"{sum(mine)} retransmissions on the wire"
                 + (f", the reference {sum(theirs)}" if theirs else ""))
