"""The `gbn-vs-tcp` results sheet (seed 001): Go-Back-N over UDP against kernel TCP,
downloading objects under loss, corruption, duplication and delay (spec.py
measures it)."""

from __future__ import annotations

from assignments.results_sheets.builder import Notebook

from . import NAME

EXPERIMENTS = '("Loss:", "Corruption:", "Duplication:", "Delay:")'

MARKING = {
    "comparison_discussion": """\
- No impairment: both are fast; the report's TCP took 41 s against GBN's 1.75 s because of its own client
  (connection per object, sleeps): here kernel TCP pays a handshake and a close per object, GBN an ending. (1)
- Loss: TCP recovers most losses by fast retransmit/SACK within a round trip and adapts its RTO; GBN waits a whole
  timeout and resends the window: GBN loses far more as loss grows (the report: 268 s vs 67 s at 10%). (2)
- Corruption: the CRC32 turns a corrupted packet into a lost one (TCP's checksum does the same), so it behaves
  like loss at the same rate. Duplication: harmless to both (a duplicate is discarded and ACKed again). (1)
- Delay with jitter and no rate reorders packets: GBN's receiver discards everything out of order, so reordering
  costs it whole windows; TCP buffers out-of-order segments. Constant delay only adds round trips. (1)
- Their best window/timeout against the report's W 25 / 0.7 s, with numbers from their tables. (1)""",
}


def build() -> Notebook:
    nb = Notebook(marking=MARKING)
    nb.md("""
# Go-Back-N over UDP against TCP — results sheet

This notebook measures **your own Go-Back-N** (`Sender3.py` and `Receiver3.py` beside it, COMN part 3's command
lines) downloading a set of objects of different sizes, and kernel TCP downloading the same objects, under the
report's impairments: loss, corruption, duplication, and 100 ms of delay (constant, uniform ±20 ms or normal
σ 20 ms), each one netem rule on both directions, emulated by rdtlab between two network namespaces. Each object
is one transfer, checked byte for byte; a download's **total** is the sum of the objects' times on the wire.

- Corruption flips a bit that reaches your program: your format needs a checksum (the starter's `rdt.py` has a
  CRC32), or a corrupted packet is written to the file and the download fails.
- `MODE = "quick"`: 10 objects, six rules, 2 downloads per cell (a few minutes); `"full"`: the 20 objects, every
  rule, 3 downloads per cell.
- Cells marked *YOUR CODE HERE* / *YOUR ANSWER HERE* are yours. The tests under them check the shape and units;
  grading also **re-runs a sample of your cells with your programs** on the same link and seeds, and a number
  your programs cannot produce loses its points.
""")
    nb.setup(NAME)

    nb.md("""
## Part 1 — tuning Go-Back-N

**Question 1** – The report chose window 25 and timeout 0.7 s. Find your own: the transfer time of one file at
10% loss each way for each window and timeout (`Sender3.py … <timeout> <window>`).
""")
    nb.measured("tune", plot=False)
    nb.table_answer("tune", "`window, timeout_ms, time_s, time_s_ci95, runs, failed`")
    nb.md("""
**Question 2 (from your table)** – Your best setting: the window and timeout of the least mean time in **your**
`tune_table` (any whose time is within the best one's 95% margin counts). Set `best_window` and `best_timeout_ms`.
""")
    nb.answer(
        "best_answer",
        "# best_window = ...\n# best_timeout_ms = ...",
        """
best = tune_table.loc[tune_table["time_s"].idxmin()]
best_window, best_timeout_ms = int(best["window"]), int(best["timeout_ms"])""",
    )
    nb.test(
        "test_best_setting",
        2,
        'assert nb.given("best_window", globals()) in set(tune_table["window"]), '
        '"best_window must be one of the windows of your table"',
        'nb.assert_one_of("(best_window, best_timeout_ms)", (best_window, best_timeout_ms), '
        'lab.models.best_settings(tune_table), "the least mean time, or within its 95% margin")',
    )

    nb.md("""
## Part 2 — downloads

**Question 3** – The objects downloaded with your Go-Back-N at the report's window 25 and timeout 0.7 s, under
each rule (`netem` empty: no impairment). The table has the mean **total download time** (s) and the
retransmissions (summed over the objects).
""")
    nb.measured("gbn", plot=False)
    nb.table_answer("gbn", "`netem, total_s, total_s_ci95, retransmissions, retransmissions_ci95, runs, failed`")
    nb.md("**Question 4** – The same downloads with your best window and timeout (Question 1's; run Question 1 first).")
    nb.measured("gbn_tuned", plot=False)
    nb.table_answer(
        "gbn_tuned",
        "`netem, window, timeout_ms, total_s, total_s_ci95, retransmissions, retransmissions_ci95, runs, failed`",
        remeasure_points=0,
    )
    nb.md("**Question 5** – The same objects downloaded with kernel TCP (one connection per object).")
    nb.measured("tcp", plot=False)
    nb.table_answer(
        "tcp", "`netem, total_s, total_s_ci95, retransmissions, retransmissions_ci95, runs, failed`", remeasure_points=0
    )
    nb.md(
        "The report's figures: the total download time of each protocol against each impairment, average with "
        "bars from the fastest to the slowest download."
    )
    nb.code(f"lab.plot(title={EXPERIMENTS});", "locked", "experiments_plot")
    nb.md("""
**Question 6 (from your tables)** – For each rule in both your `gbn_table` and your `tcp_table`: your GBN's mean
total divided by TCP's. Set `gbn_over_tcp = {rule: ratio}` (the rule as in the `netem` column).
""")
    nb.answer(
        "gbn_over_tcp_answer",
        "# gbn_over_tcp = {...}",
        """
tcp_totals = dict(zip(tcp_table["netem"], tcp_table["total_s"]))
gbn_over_tcp = {rule: t / tcp_totals[rule] for rule, t in zip(gbn_table["netem"], gbn_table["total_s"])
                if rule in tcp_totals}""",
    )
    nb.test(
        "test_gbn_over_tcp",
        2,
        'assert isinstance(nb.given("gbn_over_tcp", globals()), dict), "gbn_over_tcp is a dict {rule: ratio}"',
        'nb.assert_close_each("gbn_over_tcp", gbn_over_tcp, lab.models.gbn_over_tcp(gbn_table, tcp_table), rel=0.01)',
    )
    nb.md("""
**Question 7 (model)** – A protocol that resends a lost packet on its own (not a whole window) until the packet
and its ACK both get through, each lost with probability p: how many times does it send each packet on average?
Set `sends_per_packet = {10: …, 15: …}` for p = 10% and 15% each way.
""")
    nb.answer(
        "sends_answer",
        "# sends_per_packet = {10: ..., 15: ...}",
        "sends_per_packet = {p: 1 / (1 - p / 100) ** 2 for p in (10, 15)}",
    )
    nb.test(
        "test_sends_per_packet",
        1,
        'assert set(nb.given("sends_per_packet", globals())) == {10, 15}, "sends_per_packet needs the keys 10 and 15"',
        'nb.assert_close_each("sends_per_packet", sends_per_packet, '
        "{p: lab.models.sends_per_packet(p) for p in (10, 15)}, rel=0.01)",
    )
    nb.md("""
**Question 8** – Compare your Go-Back-N with TCP under each impairment, and with the report's findings (at 10%
loss GBN took 268 s against TCP's 67 s; at 10% corruption 95 s against 52 s; without impairment GBN 1.75 s
against TCP's 41 s; duplication changed little). Explain each difference from how the two protocols recover.
""")
    nb.discussion("comparison_discussion", 6)
    return nb
