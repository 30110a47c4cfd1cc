"""The `stop-and-wait-crc` results sheet (seed 002): stop-and-wait with a CRC32 and
exponential back-off, payloads of 1-64 KB over IPv4 and IPv6, kernel TCP as the baseline,
and a lossy link (spec.py measures it)."""

from __future__ import annotations

from assignments.results_sheets.builder import Notebook

from . import NAME


MARKING = {
    "payload_discussion": """\
- Stop-and-wait sends one payload per round trip, so throughput = payload / RTT grows with the payload until
  serialising the payload dominates the RTT (64 KB: ~56 ms of a ~57 ms round trip at 10 Mbit/s). (2)
- Small payloads: the fixed 2 ms of delay and the programs' own time per message dominate; large: the link. (1)
- IPv6 costs more bytes per fragment (40-byte header, an 8-byte fragment header): a few % lower throughput and
  a longer RTT, most visible for small payloads; numbers from their table. (2)
- TCP keeps a window in flight and reaches the link's rate: far above stop-and-wait at small payloads. (1)""",
    "loss_discussion": """\
- A 64 KB message is 45-46 IP fragments: losing any one loses the message, so at 1% per IP packet it is lost
  (1 − 0.99^46) ≈ 37% of the time, against ~2% for 1 KB: large payloads multiply the loss. (2)
- Each loss costs a timeout, which doubles at each consecutive expiry (exponential back-off, up to a ceiling):
  their resends and the measured back-off ratio. (2)""",
}


def build() -> Notebook:
    nb = Notebook(marking=MARKING)
    nb.md("""
# Stop-and-wait with CRC over IPv4 and IPv6 — results sheet

This notebook measures **your own programs** (`Sender.py` and `Receiver.py` beside it) between two hosts with
their own IPv4 and IPv6 addresses, joined by one 10 Mbit/s hop with 1 ms each way (MTU 1500), emulated by
rdtlab. A message larger than the MTU crosses as IP fragments. Throughput is the file over its time on the wire
(Mbit/s, 10⁶ bit/s); RTT is from a message entering the link to its ACK leaving it, read from what crossed the
link (so your messages must be in the extended format of `rdt.py`); the delay variation is the mean absolute
difference between each message's RTT and their mean.

- `MODE = "quick"`: a 256 KB file, payloads 1–64 KB, 2 runs per cell (a few minutes); `"full"`: a 2 MB file,
  5 runs per cell. Runs go one at a time: RTT is what is measured.
- Cells marked *YOUR CODE HERE* / *YOUR ANSWER HERE* are yours. The tests under them check the shape and units;
  grading also **re-runs a sample of your cells with your programs** on the same link and seeds, and a number
  your programs cannot produce loses its points.
""")
    nb.setup(NAME)

    nb.md("""
## Part 1 — payload size, IPv4 and IPv6

**Question 1** – Your stop-and-wait with payloads of 1, 4, 8, 16, 32 and 64 KB ("64 KB" is 65,495 bytes: with the
12-byte header the largest UDP datagram IPv4 carries) over IPv4 and IPv6: throughput, RTT, delay variation and
retransmissions per cell (`Sender.py <host> <port> <file> <payload bytes>`).
""")
    nb.measured("sw")
    nb.table_answer(
        "sw",
        "`family, kb, throughput_mbps, throughput_mbps_ci95, rtt_ms, rtt_ms_ci95, delay_var_ms, "
        "delay_var_ms_ci95, retransmissions, retransmissions_ci95, runs, failed`",
    )
    nb.md("""
**Question 2 (from your table)** – What IPv6 costs: for each payload of **your** `sw_table`, the IPv4 throughput
divided by the IPv6 throughput. Set `v4_over_v6 = {kb: ratio}`.
""")
    nb.answer(
        "v4_over_v6_answer",
        "# v4_over_v6 = {1: ..., ...}",
        """
by = sw_table.set_index(["family", "kb"])["throughput_mbps"]
v4_over_v6 = {int(kb): by[("IPv4", kb)] / by[("IPv6", kb)] for kb in sw_table["kb"].unique()}""",
    )
    nb.test(
        "test_v4_over_v6",
        2,
        'assert isinstance(nb.given("v4_over_v6", globals()), dict), "v4_over_v6 is a dict {kb: ratio}"',
        'nb.assert_close_each("v4_over_v6", v4_over_v6, lab.models.v4_over_v6(sw_table), rel=0.01)',
    )
    nb.md("""
**Question 3 (model)** – How many IP packets carry one "64 KB" message (65,507 bytes of UDP payload: 65,495 of
file data and the 12-byte header; plus the 8-byte UDP header) over a 1500-byte MTU? An IPv4 fragment carries up
to 1480 bytes of data (a multiple of 8), an IPv6 one 1448 (40-byte header and an 8-byte fragment header).
Set `fragments_64kb = {"IPv4": …, "IPv6": …}`.
""")
    nb.answer(
        "fragments_answer",
        '# fragments_64kb = {"IPv4": ..., "IPv6": ...}',
        """
import math
fragments_64kb = {"IPv4": math.ceil((65_507 + 8) / 1480), "IPv6": math.ceil((65_507 + 8) / 1448)}""",
    )
    nb.test(
        "test_fragments",
        1,
        'assert set(nb.given("fragments_64kb", globals())) == {"IPv4", "IPv6"}, '
        '"fragments_64kb needs the keys \\"IPv4\\" and \\"IPv6\\""',
        'nb.assert_close_each("fragments_64kb", fragments_64kb, '
        '{f: lab.models.fragments(f, 64) for f in ("IPv4", "IPv6")}, rel=0)',
    )
    nb.md("**Question 4** – Kernel TCP sending the same file over IPv4 and IPv6: the baseline.")
    nb.measured("tcp", plot=False)
    nb.table_answer("tcp", "`family, throughput_mbps, throughput_mbps_ci95, runs, failed`", remeasure_points=0)
    nb.md("""
**Question 5** – Why does your throughput grow with the payload, what does IPv6 cost, and how far is TCP ahead?
""")
    nb.discussion("payload_discussion", 6)

    nb.md("""
## Part 2 — a lossy link

**Question 6** – The same payloads with 1% of IP packets lost each way: throughput and resends per packet.
""")
    nb.measured("loss")
    nb.table_answer(
        "loss",
        "`family, kb, loss_pct, throughput_mbps, throughput_mbps_ci95, resends_per_packet, "
        "resends_per_packet_ci95, runs, failed`",
        remeasure_points=0,
    )
    nb.md("""
**Question 7 (model)** – A try of a message succeeds when all its IP packets and the ACK get through, each lost
with p = 1%: q = (1 − p)^(fragments + 1), and the expected resends per message are 1/q − 1. Set
`resends_model = {1: …, 64: …}` for 1 KB (one IP packet) and "64 KB" messages over IPv4.
""")
    nb.answer(
        "resends_answer",
        "# resends_model = {1: ..., 64: ...}",
        """
resends_model = {kb: 1 / (0.99 ** (n + 1)) - 1 for kb, n in ((1, 1), (64, fragments_64kb["IPv4"]))}""",
    )
    nb.test(
        "test_resends_model",
        2,
        'assert set(nb.given("resends_model", globals())) == {1, 64}, "resends_model needs the keys 1 and 64"',
        'nb.assert_close_each("resends_model", resends_model, '
        '{kb: lab.models.resends_model("IPv4", kb, 1) for kb in (1, 64)}, rel=0.02)',
    )
    nb.md("""
**Question 8** – What does fragmentation do on a lossy link, and is your back-off exponential?
""")
    nb.discussion("loss_discussion", 4)
    return nb
