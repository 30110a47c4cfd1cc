"""The `multihoming` results sheet (seed 000): a 5,000,000-byte file over one path and
over two, each cell repeated until its 95% margin of error is under 10%, and a path
taken down mid-transfer (spec.py measures it)."""

from __future__ import annotations

from assignments.results_sheets.builder import Notebook

from . import NAME


MARKING = {
    "comparison_discussion": """\
- Two paths are faster at every loss rate (numbers and ratios from their tables); not 2× because of the
  ending (the last packets' losses on a single RTO), the start-up of each path's RTO, and losses that a
  per-path timer finds late. (2)
- Loss costs more than in proportion: at 28% per link a packet and its ACK cross four lossy links, so a
  round trip succeeds (1 − 0.28)⁴ ≈ 27% of the time. (1)
- Against the report (ratio 1.07–1.16, 48–173 s): its sender sleeps one timeout per packet in a thread
  and alternates packets between paths, so timers, not links, set its time; the links' rate and delay are
  not stated; comparable in loss and file size only. (2)""",
    "failover_discussion": """\
- How their sender decides a path is dead (e.g. no ACK on it for n RTOs; the report: 1000 timeouts of one
  packet) and what it does with the packets in flight there (resend on the live path). (2)
- The cost: the detection time (a few RTOs, backed off) plus resending what was in flight; their total
  time against two paths without failure. (1)
- The trade-off: detecting sooner risks declaring a lossy path dead; later stalls the transfer. (1)""",
}


def build() -> Notebook:
    nb = Notebook(marking=MARKING)
    nb.md("""
# Multi-homed reliable transfer over UDP — results sheet

This notebook measures **your own programs** (`Sender.py` and `Receiver.py` beside it) on the report's
topology, emulated by rdtlab: source `s`, destination `d` and routers `r1`, `r2`, `r3` as paths of the link
engine. Experiment 1 sends through `s–r3–d`, experiment 2 over `s–r1–d` and `s–r2–d` at once. Every path is
`delay 10ms rate 10mbit loss <q>%` in each direction, where q folds the loss p of the path's two links
(q = 1 − (1 − p)²); the loss hits data and ACKs alike. The transfer time is measured on the wire (first data
packet to last ACK).

- Each cell is **repeated until the 95% margin of error of its mean time is under 10% of the mean**, the
  report's rule (at least 3 runs; at most 8 in quick mode, 20 in full): the tables show the runs and the
  margin (`time_s_ci95`).
- `MODE = "quick"`: a 1,000,000-byte file (a few minutes); `"full"`: the report's 5,000,000 bytes.
- Cells marked *YOUR CODE HERE* / *YOUR ANSWER HERE* are yours. The tests under them check the shape and units;
  grading also **re-runs a sample of your cells with your programs** on the same paths and seeds, and a
  number your programs cannot produce loses its points.
""")
    nb.setup(NAME)

    nb.md("""
## Experiments 1 and 2

**Question 1** – Experiment 1: the file through one path (`s–r3–d`) at 5, 15 and 28% loss on every link
(`Sender.py <file> <host>:<port>`, `Receiver.py <port> <file> 1`): mean **transfer time** (s), its 95% margin,
the runs it took, and the retransmissions (copies of a packet seen again on the link).
""")
    nb.measured("one_path")
    nb.table_answer(
        "one_path",
        "`loss_pct, path_loss_pct, time_s, time_s_ci95, retransmissions, retransmissions_ci95, runs, failed`",
    )
    nb.md("""
**Question 2** – Experiment 2: the same file over two paths at once (`s–r1–d` and `s–r2–d`:
`Sender.py <file> <host>:<port> <host2>:<port2>`, `Receiver.py <port> <file> 2`).
""")
    nb.measured("two_paths")
    nb.table_answer("two_paths", "the same as `one_path_table`")
    nb.md("Figure 3: both experiments, with the report's times dotted (scaled to this file's size).")
    nb.code('lab.plot(title="Figure 3");', "locked", "comparison_plot")
    nb.md("""
**Question 3 (model)** – The loss per direction of a path made of two links that each lose p: a packet crosses
a path only when neither link drops it. Set `path_loss_pct = {5: …, 15: …, 28: …}` (percent, for p = 5, 15, 28%).
""")
    nb.answer(
        "path_loss_answer",
        "# path_loss_pct = {5: ..., 15: ..., 28: ...}",
        "path_loss_pct = {p: 100 * (1 - (1 - p / 100) ** 2) for p in (5, 15, 28)}",
    )
    nb.test(
        "test_path_loss",
        1,
        'assert set(nb.given("path_loss_pct", globals())) == {5, 15, 28}, '
        '"path_loss_pct needs the keys 5, 15 and 28 (loss per link, %)"',
        'nb.assert_close_each("path_loss_pct", path_loss_pct, {p: lab.models.path_loss(p) for p in (5, 15, 28)}, '
        "rel=0.01)",
    )
    nb.md("""
**Question 4 (from your tables)** – How much faster are two paths? For each loss of your tables, your
one-path time divided by your two-path time. Set `speed_up = {loss_pct: ratio}`.
""")
    nb.answer(
        "speed_up_answer",
        "# speed_up = {5: ..., ...}",
        """
one = one_path_table.set_index("loss_pct")["time_s"]
two = two_paths_table.set_index("loss_pct")["time_s"]
speed_up = {int(p): one[p] / two[p] for p in one.index if p in two.index}""",
    )
    nb.test(
        "test_speed_up",
        2,
        'assert isinstance(nb.given("speed_up", globals()), dict), "speed_up is a dict {loss_pct: ratio}"',
        'nb.assert_close_each("speed_up", speed_up, lab.models.speed_ups(one_path_table, two_paths_table), rel=0.01)',
    )
    nb.md("""
**Question 5 (model)** – No protocol beats the link: the fastest possible transfer of the report's 5,000,000
bytes is its 4,883 packets of 1024 bytes (1078 bytes on the wire with headers) at 10 Mbit/s per path, plus one
round trip's propagation (20 ms). Set `bound_one_s` (one path) and `bound_two_s` (two paths, the packets
shared between them), in seconds.
""")
    nb.answer(
        "bound_answer",
        "# bound_one_s = ...\n# bound_two_s = ...",
        """
per_packet = 1078 * 8 / 10e6
bound_one_s = 4883 * per_packet + 0.020
bound_two_s = 4883 * per_packet / 2 + 0.020""",
    )
    nb.test(
        "test_bound",
        1,
        'assert 0 < nb.given("bound_two_s", globals()) < nb.given("bound_one_s", globals()), '
        '"two paths carry the file faster than one"',
        'nb.assert_close("bound_one_s", bound_one_s, lab.models.capacity_bound_s(5_000_000, 1), rel=0.02)\n'
        'nb.assert_close("bound_two_s", bound_two_s, lab.models.capacity_bound_s(5_000_000, 2), rel=0.02)',
    )
    nb.md("""
**Question 6** – Does multi-homing pay? Compare your two experiments at each loss rate, and with the
report's (Table 1: 48.2, 81.2, 173.0 s on one path; Table 2: 41.3, 73.1, 161.9 s on two, at 5, 15, 28%).
Why is two paths not twice as fast, and why do your times differ from the report's?
""")
    nb.discussion("comparison_discussion", 5)

    nb.md("""
## Fail-over

**Question 7** – Both paths at 5% loss per link; the link engine takes `s–r2–d` down shortly after the first
packet and never brings it back. Your sender must notice, resend what it had in flight there on `s–r1–d`,
and finish on that path alone. Every run must complete.
""")
    nb.measured("failover", plot=False)
    nb.table_answer(
        "failover",
        "`loss_pct, path_loss_pct, down_ms, time_s, time_s_ci95, runs, failed`",
        table_points=2,
        remeasure_points=0,
    )
    nb.md("""
**Question 8** – How does your sender detect that a path is down, how long did that take here, and what did
it cost against two paths without a failure? What would detecting sooner, or later, risk?
""")
    nb.discussion("failover_discussion", 4)
    return nb
