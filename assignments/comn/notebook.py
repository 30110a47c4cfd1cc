"""The `comn` results sheet (seed 004): questions 1-8 of the COMN sheet, with the
reference answers and marking notes (spec.py measures it)."""

from __future__ import annotations

from assignments.results_sheets.builder import Notebook

from . import NAME


# The reference answers, by grade_id: the source notebook's solutions, and what the
# course's tests type in as an honest student.
SOLUTIONS = {
    "q1_utilisation_answer": (
        "t_data = 1069 * 8 / 10e6     # a data packet on the wire: 1024 + 3 + 42 bytes\n"
        "t_ack = 44 * 8 / 10e6        # an ACK: 2 + 42 bytes\n"
        "q1_utilisation = t_data / (t_data + 2 * 0.005 + t_ack)"
    ),
    "q2_timeout_answer": (
        'fewest = q1_table["retransmissions"].min()\n'
        'eligible = q1_table[q1_table["retransmissions"] <= 1.25 * fewest]\n'
        'q1_optimal_timeout = int(eligible.loc[eligible["throughput_kBps"].idxmax(), "timeout_ms"])'
    ),
    "q3_bdp_answer": (
        "t_data, t_ack = 1069 * 8 / 10e6, 44 * 8 / 10e6\n"
        "q3_bdp_packets = {d: (2 * d / 1000 + t_data + t_ack) / (t_data + t_ack) for d in (5, 25, 100)}"
    ),
    "q4_peak_answer": (
        'q3_peak_window = {int(d): int(g.loc[g["throughput_kBps"].idxmax(), "window"])\n'
        '                  for d, g in q3_table.groupby("delay_ms")}'
    ),
    "q8_mathis_answer": "q8_mathis_kBps = 1.22 * 1024 / (0.050 * 0.05 ** 0.5) / 1024",
}

MARKING = {
    "q2_discussion": """\
- The idle round trip is about 10.9 ms (2 × 5 ms plus serialising a 1069-byte packet and a
  44-byte ACK at 10 Mbit/s). Timeouts below it (5, 10 ms) resend before any ACK can return:
  many more retransmissions (hundreds for 1 MB) for little or no gain. (2 marks)
- Above the RTT the retransmissions stay near the loss floor, (1 − q)/q per packet with
  q = 0.95², about 100 for 1 MB, while each loss costs a whole timeout, so throughput falls as the
  timeout grows (model: harness/models stop_and_wait). (1 mark)
- Optimal: a little above one RTT (15–20 ms here), consistent with their table. (1 mark)
  Full marks need numbers from their own table; a premature timeout with the highest throughput
  is fine if they note that it spends capacity nobody else wanted on this link.""",
    "q4_discussion": """\
- Throughput grows with the window until the window covers the bandwidth-delay product
  (≈ 12, 58, 234 packets at 5, 25, 100 ms); the longer the delay, the larger that window. (2)
- Delay hurts small windows most (ratio ≈ RTT ratio at window 1, close to 1 at 256). (1)
- Large windows lose throughput: data and ACKs share one 10 Mbit/s queue on `lo`, so the round
  trip grows to W·(t_data + t_ack); once it exceeds the timeout, windows time out while their ACKs
  are queued and GBN resends whole windows (duplicates on the link). (2)
- Each loss makes the receiver discard the rest of the window, so a loss costs more as W grows;
  the textbook GBN efficiency ignores the timeout and the shared queue and is far too high. (1)""",
    "q6_discussion": """\
- Window 1: SR and GBN are the same stop-and-wait and measure alike. (1)
- Larger windows: SR ahead, because a loss makes GBN resend everything after the lost packet
  (which the receiver discarded) while SR resends only what was lost and buffers out-of-order
  packets; fewer whole-window bursts, so ACKs queue behind less data. (2)
- A lost SR ACK costs a retransmission that GBN's cumulative ACKs avoid; numbers from their tables. (1)""",
    "q8_discussion": """\
- Mathis 1.22·MSS/(RTT·√p) ≈ 109 KB/s for MSS 1 KB, RTT 50 ms, p 5%: a Reno estimate that is
  independent of the window; compared with a Reno measurement (the sheet's Q7 measures Reno
  beside today's default, CUBIC). Credit an explanation that names the algorithm that ran (the
  table's header says it) and follows from its figures, not one that assumes CUBIC or BBR. (1)
- A window of w KB caps TCP at w/RTT, so small windows grow almost linearly. (1)
- GBN/SR have no congestion control and keep the whole window in flight whatever the loss:
  on this private link that buys throughput; on a shared network it would be unfair and could
  collapse. TCP's minimum RTO (200 ms) makes its timeouts costlier than our 60 ms. (2)""",
}


def build() -> Notebook:
    nb = Notebook(SOLUTIONS, MARKING)
    nb.md("""
# COMN Assignment 2 — results sheet

This notebook is your results sheet. It measures **your own programs** (the `Sender*.py` and
`Receiver*.py` beside it) over the course's link, emulated by rdtlab: `loss 5% delay <d>ms rate 10mbit`
as netem on `lo` (data and ACKs share one 10 Mbit/s queue). Every table and plot below comes from the
link itself (what crossed it), never from what your programs print.

- Run the cells from the top. Each measured question shows a progress bar, a table (mean and the
  half-width of its 95% confidence interval, `_ci95`) and a plot, and stores the table in a variable.
  A question whose programs are missing, crash or hang says so in one line; the rest still runs.
  Measurements are kept in `.rdtlab/`, so running a cell again resumes; editing a program measures afresh.
- `MODE = "quick"` measures a 100 KB file on a few cells twice each (a couple of minutes);
  `"full"` is the sheet's settings (1 MB, every cell, 5 runs each: about 15 minutes).
- Cells marked *YOUR CODE HERE* / *YOUR ANSWER HERE* are yours. The tests under them check the shape
  and units; grading also **re-runs a sample of your cells with your programs** on the same link and
  seeds, and a number your programs cannot produce loses its points.
""")
    nb.setup(NAME)

    # ---- Part 2, questions 1 and 2 -----------------------------------------------------
    nb.md("""
## Part 2 — stop-and-wait

**Question 1** – Number of retransmissions and throughput with different retransmission timeout values
with the stop-and-wait protocol (`Sender2.py`, `Receiver2.py`), 5 ms delay, 5% loss. For each timeout the
cell below runs the transfer several times and reports the **average number of retransmissions** (copies
of a packet seen again on the link) and the **average throughput** (KB/s = KiB/s).
""")
    nb.measured("q1")
    nb.md(
        "One transfer up close, drawn from what crossed the link (timeout 20 ms): every data packet and ACK "
        "against time, losses marked, resends and timeouts coloured, the packets in flight below."
    )
    nb.code('lab.picture("q1", timeout=20)', "locked", "q1_picture")
    nb.table_answer(
        "q1",
        "`timeout_ms, retransmissions, retransmissions_ci95, throughput_kBps, throughput_kBps_ci95, runs, failed`",
        k=3,
        label="Question 1",
    )
    nb.md("""
**Question 1 (model)** – The utilisation of stop-and-wait on this link without loss:
U = t_data / (t_data + 2·delay + t_ack), with a data packet of 1069 bytes on the wire (1024 payload + 3
header + 42 of UDP/IP/Ethernet), an ACK of 44 bytes, 10 Mbit/s and 5 ms each way. Set `q1_utilisation`
(a fraction between 0 and 1).
""")
    nb.answer("q1_utilisation_answer", "# q1_utilisation = ...")
    nb.test(
        "test_q1_utilisation",
        1,
        'assert 0 < nb.given("q1_utilisation", globals()) < 1, "q1_utilisation is a fraction between 0 and 1"',
        'nb.assert_close("q1_utilisation", q1_utilisation, lab.models.model_utilisation_q1(), rel=0.05)',
    )
    nb.md("""
**Question 2** – Discuss the impact of retransmission timeout value on the number of retransmissions and
throughput. Indicate the optimal timeout value from a communication efficiency viewpoint (i.e., the
timeout that minimizes the number of retransmissions while ensuring a high throughput).
""")
    nb.discussion("q2_discussion", 4)
    nb.md(
        "Set `q1_optimal_timeout` (ms) from **your** `q1_table`: among the timeouts whose average "
        "retransmissions are at most 1.25 × the fewest in your table, the one with the highest throughput."
    )
    nb.answer("q2_timeout_answer", "# q1_optimal_timeout = ...")
    nb.test(
        "test_q1_optimal_timeout",
        2,
        'assert nb.given("q1_optimal_timeout", globals()) in set(q1_table["timeout_ms"]), '
        '"q1_optimal_timeout must be one of the timeouts of your table"',
        "lab.models.assert_optimal_timeout(q1_table, q1_optimal_timeout)",
    )

    # ---- Part 3, questions 3 and 4 -----------------------------------------------------
    nb.md("""
## Part 3 — Go-Back-N

**Question 3** – Go-Back-N (`Sender3.py`, `Receiver3.py`) for each window size at delays of 5, 25 and
100 ms (5% loss). The retry timeout is the idle round trip plus 10 ms: 2·delay + 10 ms (20, 60, 210 ms).
The cell reports the **average throughput** per window and delay, and draws it against the window
(log2 axis, one line per delay; dashed: harness models).
""")
    nb.measured(
        "q3", show='q3_measured.pivot(index="window", columns="delay_ms", values="throughput_kBps")   # the COMN table'
    )
    nb.md(
        "One Go-Back-N transfer at window 64 and 5 ms, zoomed on its first timeout (if it had one): the "
        "sender resends the whole window after the lost packet."
    )
    nb.code('lab.picture("q3", delay=5, window=64, focus="timeout")', "locked", "q3_picture")
    nb.table_answer(
        "q3",
        "`delay_ms, timeout_ms, window, throughput_kBps, throughput_kBps_ci95, runs, failed`",
        k=3,
        label="Question 3",
    )
    nb.md("""
**Question 3 (model)** – The bandwidth-delay product in packets at each delay: the idle round trip
(2·delay + t_data + t_ack) times the rate at which the shared queue delivers data packets with their ACKs,
1 / (t_data + t_ack) (1069-byte packets, 44-byte ACKs, 10 Mbit/s). Set `q3_bdp_packets = {5: …, 25: …, 100: …}`.
""")
    nb.answer("q3_bdp_answer", "# q3_bdp_packets = {5: ..., 25: ..., 100: ...}")
    nb.test(
        "test_q3_bdp",
        1,
        'assert set(nb.given("q3_bdp_packets", globals())) == {5, 25, 100}, '
        '"q3_bdp_packets needs the keys 5, 25 and 100 (delay in ms)"',
        "for d in (5, 25, 100):\n"
        '    nb.assert_close(f"q3_bdp_packets[{d}]", q3_bdp_packets[d], lab.models.model_bdp_packets(d), rel=0.15)',
    )
    nb.md("**Question 4** – Discuss your results from Question 3.")
    nb.discussion("q4_discussion", 6)
    nb.md(
        "Set `q3_peak_window = {delay_ms: window}`: at each delay, the window where **your** Q3 throughput is highest."
    )
    nb.answer("q4_peak_answer", "# q3_peak_window = {5: ..., 25: ..., 100: ...}")
    nb.test(
        "test_q3_peak_window",
        2,
        'assert isinstance(nb.given("q3_peak_window", globals()), dict), "q3_peak_window is a dict {delay_ms: window}"',
        "lab.models.assert_peak_windows(q3_table, q3_peak_window)",
    )

    # ---- Part 4, questions 5 to 8 ------------------------------------------------------
    nb.md("""
## Part 4 — Selective Repeat and TCP

**Question 5** – Selective Repeat (`Sender4.py`, `Receiver4.py`) at 25 ms delay, 5% loss, timeout 60 ms:
the **average throughput** for each window size.
""")
    nb.measured("q5", plot=False)
    nb.md("One Selective Repeat transfer at window 16, zoomed on its first timeout: only the lost packet is resent.")
    nb.code('lab.picture("q5", window=16, focus="timeout")', "locked", "q5_picture")
    nb.table_answer("q5", "`window, throughput_kBps, throughput_kBps_ci95, runs, failed`", k=3, label="Question 5")
    nb.md("""
**Question 6** – Compare the throughput obtained when using Selective Repeat with the corresponding results
you got from the Go Back N experiment and explain the reasons behind any differences.
""")
    nb.discussion("q6_discussion", 4)
    nb.md("""
**Question 7** – TCP: `iperf3 -M 1024 -w <window>` over the same link (25 ms, 5% loss) for each window
size in KB. The plot puts Go-Back-N, Selective Repeat and TCP together, with Mathis' estimate. The kit
pins kernel TCP's congestion control (CUBIC, Linux's default, unless you set `TCP_CC = "reno"` at the top),
whatever your machine's own default; the plot's legend names the algorithm read back from the connections.
""")
    nb.measured("q7")
    nb.table_answer(
        "q7", "`window_kB, throughput_kBps, throughput_kBps_ci95, runs, failed`", remeasure_points=0, label="Question 7"
    )
    nb.md("""
**Question 8 (model)** – Mathis et al.: TCP Reno's throughput ≈ 1.22 · MSS / (RTT · √L). Set
`q8_mathis_kBps` for MSS = 1 KB, RTT = 50 ms, L = 5%, in KB/s.
""")
    nb.answer("q8_mathis_answer", "# q8_mathis_kBps = ...")
    nb.test(
        "test_q8_mathis",
        1,
        'assert nb.given("q8_mathis_kBps", globals()) > 0, "q8_mathis_kBps is a throughput in KB/s"',
        'nb.assert_close("q8_mathis_kBps", q8_mathis_kBps, lab.models.model_mathis_q8(), rel=0.03)',
    )
    nb.md("""
**Question 8** – Compare the throughput obtained when using Selective Repeat and Go Back N with the
corresponding results you got from the iperf experiment and explain the reasons behind any differences.
""")
    nb.discussion("q8_discussion", 4)

    return nb
