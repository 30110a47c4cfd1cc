"""The `tcp-like` results sheet (seed 003): transfer time against loss with fast
retransmit off and on, throughput and queueing delay against the window, with the
models (window/RTT, M/D/1) the student computes (spec.py measures it)."""

from __future__ import annotations

from assignments.results_sheets.builder import Notebook

from . import NAME


MARKING = {
    "loss_discussion": """\
- Loss costs time far beyond the lost bytes: each loss found by the timer stalls the fixed window for
  a whole RTO; at high loss the retransmissions themselves and their ACKs are lost and the timer backs
  off. Numbers from their own table. (2)
- Fast retransmit repairs a loss about one round trip after it (k = 4 later segments arrive, 4 duplicate
  ACKs), needing at least k + 1 segments in flight behind the loss: a 10,000-byte window holds 10. (1)
- Their speed-up is likely below the report's 3–4× (78 s → 20 s with a fixed 1 s timer): an adaptive RTO on a
  21 ms round trip makes a timeout cheap, so there is less to save; when the retransmission or the ACKs after
  it are lost only the timer recovers; loss on the ACKs too. (2)""",
    "window_discussion": """\
- Throughput ≈ window / RTT (linear) because every window is below the bandwidth-delay product (about
  25,000 bytes here): the sender waits for ACKs, not for the link. Shortfall = the programs' own time per
  round trip and the queueing inside a window. (2)
- Queueing delay grows faster than linearly with the window as ρ → 1, as M/D/1 says. (1)
- It is not M/D/1: arrivals are not Poisson; a window's segments leave in a burst clocked by the ACKs, so
  each waits behind its own burst (for large windows more than M/D/1 predicts, for small ones it can be
  less); M/D/1 is a rough guide. Numbers from their table. (2)""",
}


def build() -> Notebook:
    nb = Notebook(marking=MARKING)
    nb.md("""
# Reliable transport: a TCP-like protocol — results sheet

This notebook measures **your own programs** (`Sender.py` and `Receiver.py` beside it) over the report's
link, emulated by rdtlab: 10 Mbit/s, 10 ms each way, a 100-packet queue in each direction
(`delay 10ms rate 10mbit limit 100 loss <p>%` as netem on each direction; loss hits data and ACKs alike).
Every number comes from the link itself: the transfer time is from your first data packet to your last
ACK on the wire, the queueing delay is how long your packets waited in the link's queue.

- Run the cells from the top. Each measured question shows a progress bar, a table (mean and the half-width
  of its 95% confidence interval, `_ci95`) and a plot, and stores the table in a variable. A question whose
  programs are missing, crash or hang says so in one line; the rest still runs. Measurements are kept in
  `.rdtlab/`, so running a cell again resumes; editing a program measures afresh.
- `MODE = "quick"`: a 100 KB file, loss 0–30%, six windows, 2 runs per cell (a few minutes); `"full"`: the
  sheet's settings (losses 0–50%, eleven windows, a 514,520-byte file as the report's, 5 runs per cell).
- Cells marked *YOUR CODE HERE* / *YOUR ANSWER HERE* are yours. The tests under them check the shape and units;
  grading also **re-runs a sample of your cells with your programs** on the same link and seeds, and a
  number your programs cannot produce loses its points.
""")
    nb.setup(NAME)

    nb.md("""
## Part 1 — loss and fast retransmit

**Question 1** – The transfer time against the loss on each direction, 0–50%, with fast retransmit off
(`k = 0`) and on (`k = 4` duplicate ACKs; the report's sender resends at the fourth ACK of one number,
that is after 3 duplicates), window 10,000 bytes, your adaptive timeout
(`Sender.py … <window> <k> 0`). The table has the mean **transfer time** (s) and the **retransmissions**
(copies of a segment seen again on the link) per cell; the plot is on a log scale.
""")
    nb.measured("loss")
    nb.md(
        "One transfer at 20% loss with fast retransmit on, drawn from what crossed the link: segments and "
        "ACKs against time, losses marked, fast retransmits and timeouts coloured (zoomed on the first timeout, "
        "if there was one)."
    )
    nb.code('lab.picture("loss", loss=20, fast_retransmit=4, focus="timeout")', "locked", "loss_picture")
    nb.table_answer("loss", "`loss_pct, k, time_s, time_s_ci95, retransmissions, retransmissions_ci95, runs, failed`")
    nb.md("""
**Question 2 (from your table)** – The speed-up of fast retransmit at 20% loss: your mean transfer time
with `k = 0` divided by your mean time with `k = 4`, from **your** `loss_table`. Set `fr_speedup`.
""")
    nb.answer(
        "fr_speedup_answer",
        "# fr_speedup = ...",
        """
times = loss_table.set_index(["loss_pct", "k"])["time_s"]
fr_speedup = times[(20, 0)] / times[(20, 4)]""",
    )
    nb.test(
        "test_fr_speedup",
        2,
        'assert nb.given("fr_speedup", globals()) > 0, "fr_speedup is a ratio of two transfer times"',
        'nb.assert_close("fr_speedup", fr_speedup, lab.models.speed_up(loss_table, 20), rel=0.01)',
    )
    nb.md("""
**Question 3** – How does loss change the transfer time, and what does fast retransmit buy? The report
measured a speed-up of 3–4× at 20% loss (78.1 s without, 20.3 s with fast retransmit, for 514,520 bytes with
a fixed 1 s timer). Compare with your speed-up and explain the difference.
""")
    nb.discussion("loss_discussion", 5)

    nb.md("""
## Part 2 — throughput and queueing delay against the window

**Question 4** – Throughput and queueing delay against the window, 1,000–20,000 bytes, at 0% loss with fast
retransmit on. The queueing delay is measured at the link: the mean time your data segments waited in its
queue (each one's time in the link minus the 10 ms delay and its own serialisation). The plots overlay
window/RTT and the M/D/1 waiting time.
""")
    nb.measured("window")
    nb.table_answer(
        "window",
        "`window_bytes, throughput_kBps, throughput_kBps_ci95, queue_delay_ms, queue_delay_ms_ci95, runs, failed`",
    )
    nb.md("""
**Question 5 (model)** – The idle round trip: RTT = 2 × 10 ms + t_data + t_ack, where a 1000-byte segment is
1045 bytes on the wire (3 bytes of header, 42 of UDP/IP/Ethernet), an ACK 44 bytes, at 10 Mbit/s.
Set `rtt_ms` (milliseconds).
""")
    nb.answer(
        "rtt_answer",
        "# rtt_ms = ...",
        """
t_data = 1045 * 8 / 10e6     # a segment on the wire
t_ack = 44 * 8 / 10e6        # an ACK
rtt_ms = (2 * 0.010 + t_data + t_ack) * 1000""",
    )
    nb.test(
        "test_rtt",
        1,
        'assert 20 < nb.given("rtt_ms", globals()) < 100, "rtt_ms is in milliseconds"',
        'nb.assert_close("rtt_ms", rtt_ms, lab.models.rtt_ms(), rel=0.02)',
    )
    nb.md("""
**Question 6 (model)** – For each window `w` of your `window_table` (bytes): the window/RTT throughput in KB/s
(1 KB = 1024 bytes), and the M/D/1 waiting time in ms: segments arrive at λ = (w / 1000) / RTT per second,
the link serves μ = 1 / t_data per second, ρ = λ / μ, and w̄ = ρ / (2μ(1 − ρ)). Set
`window_rtt_kBps = {w: …}` and `md1_wait_ms = {w: …}`.
""")
    nb.answer(
        "window_models_answer",
        "# window_rtt_kBps = {...}\n# md1_wait_ms = {...}",
        """
mu = 1 / t_data
window_rtt_kBps, md1_wait_ms = {}, {}
for w in window_table["window_bytes"]:
    window_rtt_kBps[int(w)] = w / (rtt_ms / 1000) / 1024
    rho = (w / 1000) / (rtt_ms / 1000) / mu
    md1_wait_ms[int(w)] = rho / (2 * mu * (1 - rho)) * 1000""",
    )
    nb.test(
        "test_window_models",
        2,
        'windows = {int(w) for w in nb.given("window_table", globals())["window_bytes"]}\n'
        'for name in ("window_rtt_kBps", "md1_wait_ms"):\n'
        '    assert set(nb.given(name, globals())) == windows, f"{name} needs one entry per window of your table"',
        'nb.assert_close_each("window_rtt_kBps", window_rtt_kBps, {w: lab.models.window_rtt_kBps(w) for w in windows}, '
        "rel=0.03)\n"
        'nb.assert_close_each("md1_wait_ms", md1_wait_ms, {w: lab.models.md1_wait_ms(w) for w in windows}, rel=0.05)',
    )
    nb.md("""
**Question 7** – Is your throughput linear in the window, as window/RTT says, and does your queueing delay
follow M/D/1? Explain where and why they depart.
""")
    nb.discussion("window_discussion", 5)
    return nb
