"""What a scenario's runs must show. Each check gives a verdict and one line saying
why; numbers come from the harness (what crossed the link), never from what the
program printed, except the printed-line check itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.monitor import ErrorKind
from harness.transfer import OUTPUT_FORMATS, TransferResult

from grader.protocol.battery import Programs, Scenario


@dataclass
class Check:
    name: str
    passed: bool
    detail: str


def evaluate(
    scenario: Scenario, programs: Programs, runs: list[TransferResult], references: list[TransferResult | None]
) -> list[Check]:
    """Every check of the scenario over its runs (a run failing one fails it)."""
    checks = [delivered(runs, wraps=scenario.size > WRAP_BYTES)]
    if scenario.printed and scenario.meet != "receiver" and programs.output_format:
        checks.append(printed(runs, programs))
    if scenario.goodput_vs_ref is not None:
        checks.append(goodput(runs, references, scenario.goodput_vs_ref))
    if scenario.retx_vs_ref is not None:
        checks.append(retransmissions(runs, references, *scenario.retx_vs_ref))
    if scenario.retx_vs_losses is not None:
        checks.append(retx_vs_losses(runs, *scenario.retx_vs_losses))
    if scenario.sent_vs_ref is not None:
        checks.append(sent(runs, references, *scenario.sent_vs_ref))
    if scenario.path_share is not None:
        checks.append(path_share(runs, scenario.path_share))
    if scenario.fast_retransmit_k is not None:
        checks.append(fast_retransmit_k(runs, scenario.fast_retransmit_k))
    if scenario.timer_after_sample_ms is not None:
        checks.append(timer_after_sample(runs, scenario.timer_after_sample_ms))
    return checks


def _traces(runs: list[TransferResult]):
    """The engine's trace of each delivered run, decoded (harness/plots/trace.py); a run
    whose trace is missing or unreadable is left out, never held against the student."""
    from harness.plots.trace import load
    from harness.procs import UsageError

    for r in runs:
        if r.ok:
            try:
                yield load(r)
            except (UsageError, OSError, ValueError):
                continue


def timer_after_sample(runs: list[TransferResult], bound_ms: float) -> Check:
    """The first timeout after each clean RTT sample (an ACK newly covering only data sent
    once) comes within `bound_ms` of the sender's last send or ACK: its RTO then follows
    the round trip, not an earlier back-off nor a sample that spanned a repair (read
    from the trace; harness/plots/trace.waits_after_samples). The median over the run."""
    from statistics import median

    from harness.plots.trace import waits_after_samples

    seen = []
    for tr in _traces(runs):
        waits = [wait for _, wait in waits_after_samples(tr)]
        if not waits:
            continue
        m = 1000 * median(waits)
        if m > bound_ms:
            return Check(
                "timer",
                False,
                f"after a clean round-trip sample the sender still waited a median {m:.0f} ms before its "
                f"next timeout ({len(waits)} of them; at most {bound_ms:g} ms on this link): its timeout "
                "does not follow the round trip",
            )
        seen.append(m)
    if not seen:
        return Check("timer", True, "no timeout after a clean sample")
    return Check("timer", True, f"a median {seen[0]:.0f} ms before a timeout after a clean sample")


def fast_retransmit_k(runs: list[TransferResult], k: int) -> Check:
    """Fast retransmit at k, read from the engine's trace of each run
    (harness/plots/trace.py): no resend prompted by fewer than k duplicate ACKs in a row
    (reordering and duplicated ACKs make one or two often, and a sender must wait for
    the k-th); and where k in a row came twice or more, at least one resend they
    prompted (not a timer's every time). A run with no trace to read is not held
    against the student."""
    from harness.plots.trace import early_fast_retransmits, fast_retransmit_use

    read = 0
    for tr in _traces(runs):
        if not tr.sent():  # no data message in the format the trace reads: nothing to judge
            continue
        read += 1
        early = early_fast_retransmits(tr, k)
        if early:
            p = early[0]
            return Check(
                "fast retransmit",
                False,
                f"packet {p.seq} resent {1000 * p.t:.0f} ms in, right after only {p.dups} duplicate "
                f"ACK{'s' if p.dups != 1 else ''} in a row (fast retransmit waits for {k}); "
                f"{len(early)} such resend{'s' if len(early) != 1 else ''} in all",
            )
        signalled, resent = fast_retransmit_use(tr, k)
        if signalled >= 2 and not resent:
            return Check(
                "fast retransmit",
                False,
                f"{k} duplicate ACKs in a row reached the sender {signalled} times and it never resent at "
                "once: every loss waited for its timer",
            )
    if not read:
        return Check("fast retransmit", True, "no trace of the runs to read")
    return Check("fast retransmit", True, f"every fast retransmit waited for {k} duplicate ACKs")


def sent(runs: list[TransferResult], refs: list[TransferResult | None], factor: float, slack: float) -> Check:
    """Data messages the sender put into the link, counting those sent into a path that
    was down (which no retransmission count sees), against the reference's on the same
    link and seed: a sender that does not back off keeps sending into an outage."""

    def into(r):
        return (r.packets or {}).get("forward")

    for r, ref in zip(runs, refs):
        if not (r.ok and ref is not None and ref.ok) or into(r) is None or into(ref) is None:
            continue
        allowed = factor * into(ref) + slack
        if into(r) > allowed:
            return Check(
                "sent",
                False,
                f"{into(r)} data messages into the link, the reference sent {into(ref)} (at most {allowed:g} allowed)",
            )
    mine = [into(r) for r in runs if into(r) is not None]
    theirs = [into(ref) for ref in refs if ref is not None and into(ref) is not None]
    return Check(
        "sent", True, f"{sum(mine)} data messages into the link" + (f", the reference {sum(theirs)}" if theirs else "")
    )


def path_share(runs: list[TransferResult], least: float) -> Check:
    """Every path carried at least `least` of the data messages that entered the link
    (the engine's counters per path): a multi-homed sender uses all the paths that work."""
    worst = None
    for r in runs:
        paths = (r.link or {}).get("paths") or {}
        counts = {name: ((p.get("forward") or {}).get("packets_in") or 0) for name, p in sorted(paths.items())}
        total = sum(counts.values())
        if not r.ok or len(counts) < 2 or not total:
            continue
        for name, n in counts.items():
            if worst is None or n / total < worst[0]:
                worst = (n / total, name, n, total)
    if worst is None:
        return Check("paths", True, "no path counters to compare")
    share, name, n, total = worst
    verdict = share >= least
    return Check(
        "paths",
        verdict,
        f"path {name} carried {n} of the {total} data messages ({share:.0%})"
        + ("" if verdict else f"; each path must carry at least {least:.0%}"),
    )


WRAP_BYTES = 65536 * 1024  # a file larger than this needs more messages than 16-bit numbers name


def receiver_gone(r: TransferResult) -> bool:
    """The receiver exited on its own (not stopped by the harness once the sender had
    ended): it was gone while the sender still ran, which the spec allows."""
    rx = r.receiver
    # (exit status 0: one the harness stopped after the sender ended shows a signal's)
    return rx is not None and rx.exit_code == 0 and not rx.timed_out and not rx.stopped_when_done


def sender_gave_up(r: TransferResult) -> bool:
    """The file arrived whole, the receiver had gone, and the sender then ended on its
    own, whatever its exit status: what the spec asks of a sender whose receiver
    finished first ("take appropriate measures for terminating your sender ...")."""
    tx = r.sender
    return (
        r.verified
        and receiver_gone(r)
        and tx is not None
        and tx.exit_code is not None
        and not tx.timed_out
        and r.error_kind == ErrorKind.SENDER_FAILED
    )


def delivered(runs: list[TransferResult], wraps: bool = False) -> Check:
    gave_up = 0
    for k, r in enumerate(runs):
        if r.ok:
            continue
        if sender_gave_up(r):
            gave_up += 1
            continue
        which = f"run {k + 1} (seed {r.seed}): " if k else ""
        why = r.error or "failed"
        if r.verified and receiver_gone(r) and r.sender is not None and r.sender.timed_out:
            why = (
                "the file arrived whole and the receiver had gone, but your sender never ended on its own "
                f"(it must stop waiting once the receiver is gone): {why}"
            )
        elif wraps:
            why = (
                "across the wrap (more than 65536 messages: sequence numbers pass 65535 and start again "
                f"at 0, modulo 65536): {why}"
            )
        return Check("delivered", False, which + why)
    note = (
        (
            f"; the receiver had gone and the sender gave up in {gave_up} run{'s' if gave_up > 1 else ''}, "
            "as the spec allows"
        )
        if gave_up
        else ""
    )
    return Check(
        "delivered",
        True,
        "the file arrived byte for byte" + (f" in all {len(runs)} runs" if len(runs) > 1 else "") + note,
    )


def retx_vs_losses(runs: list[TransferResult], factor: float, slack: float) -> Check:
    """Retransmissions seen on the wire against the losses the link made in both
    directions (a lost ACK may cost a resend too): a receiver that buffers lets its
    sender resend only what was lost; one that discards out-of-order data makes it
    resend whole windows."""
    total_retx = total_lost = 0
    for r in runs:
        if not r.ok or r.retransmissions is None or not r.link:
            continue
        lost = sum(((r.link.get(d) or {}).get(k) or 0) for d in ("forward", "reverse") for k in ("lost", "queue_drops"))
        allowed = factor * lost + slack
        if r.retransmissions > allowed:
            return Check(
                "retransmissions",
                False,
                f"{r.retransmissions} retransmissions on the wire for {lost} messages and ACKs the link "
                f"lost (at most {allowed:g} allowed)",
            )
        total_retx, total_lost = total_retx + r.retransmissions, total_lost + lost
    return Check("retransmissions", True, f"{total_retx} retransmissions on the wire for {total_lost} losses")


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
            continue  # no comparison: a failed reference run never costs the student
        ratio = r.goodput_kBps / ref.goodput_kBps
        if worst is None or ratio < worst[0]:
            worst = (ratio, r.goodput_kBps, ref.goodput_kBps)
    if worst is None:
        return Check("goodput", True, "no reference figure to compare with")
    ratio, mine, theirs = worst
    verdict = ratio >= fraction
    return Check(
        "goodput",
        verdict,
        f"goodput {mine:.1f} KB/s, {ratio:.0%} of the reference's {theirs:.1f} KB/s"
        + ("" if verdict else f" (at least {fraction:.0%} needed)"),
    )


def retransmissions(
    runs: list[TransferResult], refs: list[TransferResult | None], factor: float, slack: float
) -> Check:
    for r, ref in zip(runs, refs):
        if not (r.ok and ref is not None and ref.ok) or r.retransmissions is None or ref.retransmissions is None:
            continue
        allowed = factor * ref.retransmissions + slack
        if r.retransmissions > allowed:
            return Check(
                "retransmissions",
                False,
                f"{r.retransmissions} retransmissions on the wire, the reference needed "
                f"{ref.retransmissions} (at most {allowed:g} allowed)",
            )
    mine = [r.retransmissions for r in runs if r.retransmissions is not None]
    theirs = [ref.retransmissions for ref in refs if ref is not None and ref.retransmissions is not None]
    return Check(
        "retransmissions",
        True,
        f"{sum(mine)} retransmissions on the wire" + (f", the reference {sum(theirs)}" if theirs else ""),
    )
