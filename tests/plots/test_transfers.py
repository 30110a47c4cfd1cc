"""The time-sequence graph of real transfers: the real engine, the reference programs.

The engine draws each packet's fate from the seed and the packet's payload, and GBN's
and SR's senders send the same bytes, so with seed 2 on this link the first data packet
lost is the same for Go-Back-N and Selective Repeat: GBN must then resend its whole
window after the timeout, SR only packets that were lost. Every run's
trace must show exactly what the engine counted (lost, queue drops, duplicates,
corruptions, repeats), whatever the machine's load did to the timing.
"""

import pytest

from harness import Link, Program, run_transfer
from rdtlab.cli import main
from harness.plots import draw, load
from harness.plots.tsg import describe

REF = "reference/comn"
W = 32
# Forward loss only (ACKs arrive), a timeout far above the round trip (no premature resend).
LOSSY = Link("delay 10ms loss 5% rate 10mbit", reverse="delay 10ms rate 10mbit")
COUNTERS = ("packets_in", "delivered", "lost", "queue_drops", "down_drops", "duplicated", "corrupted", "repeats")


def assert_trace_matches_engine(res, tr):
    for d in ("forward", "reverse"):
        assert tr.counts()[d] == {k: res.link[d][k] for k in COUNTERS}, d
    assert tr.counts()["retransmissions"] == res.retransmissions
    assert tr.capture.seed == res.seed


def labels(fig):
    return set(fig.axes[0].get_legend_handles_labels()[1])


def first_burst(tr):
    t = tr.timeouts[0]
    end = tr.timeouts[1] if len(tr.timeouts) > 1 else float("inf")
    return [p.seq for p in tr.sent() if p.cause == "timeout" and t <= p.t < end]


def sliding(kind, tmp_path, seed=2):
    if kind == "gbn":
        s = Program(
            f"python3 {REF}/Sender3.py {{receiver_host}} {{receiver_port}} {{file}} 200 {W}", output_format="comn"
        )
        r = Program(f"python3 {REF}/Receiver3.py {{listen_port}} {{output}}")
    else:
        s = Program(
            f"python3 {REF}/Sender4.py {{receiver_host}} {{receiver_port}} {{file}} 200 {W}", output_format="comn"
        )
        r = Program(f"python3 {REF}/Receiver4.py {{listen_port}} {{output}} {W}")
    res = run_transfer(
        s,
        r,
        LOSSY,
        size=100 << 10,
        seed=seed,
        backend="local",
        trace=str(tmp_path / f"{kind}.trace"),
        pcap=str(tmp_path / f"{kind}.pcap"),
    )
    assert res.ok, res.error
    return res


def test_gbn_resends_its_window_and_sr_one_packet(tmp_path):
    gbn, sr = sliding("gbn", tmp_path), sliding("sr", tmp_path)
    tg, ts = load(gbn), load(sr)
    assert_trace_matches_engine(gbn, tg)
    assert_trace_matches_engine(sr, ts)
    assert (tg.fmt, tg.ack, ts.fmt, ts.ack) == ("comn-be", "cumulative", "comn-be", "selective")
    first_lost = [min(p.seq for p in tr.data if p.copy.fate == "lost") for tr in (tg, ts)]
    assert first_lost[0] == first_lost[1], "the seed decides the first loss"
    k = first_lost[0]
    assert first_burst(tg) == list(range(k, k + W)), "GBN resends the whole window after the timeout"
    lost = {p.seq for p in ts.data if p.copy.fate == "lost"}
    burst = first_burst(ts)
    assert k in burst and set(burst) <= lost, "SR resends lost packets only (Sender4: a repair goes twice)"
    assert tg.counts()["max_outstanding"] == W and ts.counts()["max_outstanding"] <= W
    # every lost data packet got through in a copy sent after it, or (Sender4 sends a
    # repair twice, back to back) in its twin sent just before
    for tr in (tg, ts):
        for p in tr.data:
            if p.copy.fate == "lost":
                assert any(
                    q.seq == p.seq
                    and q.copy.fate == "delivered"
                    and (q.t > p.t or (q.cause is not None and 0 <= p.t - q.t < 0.005))
                    for q in tr.data
                ), p.seq

    png = tmp_path / "gbn.png"
    fig = draw(gbn, title=f"Go-Back-N, W={W}", focus="timeout", window=W, save=png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    assert {
        "data sent",
        "resent after a timeout",
        "ACK received by the sender",
        "data lost",
        "timeout (inferred)",
        "window: sent, not yet ACKed",
    } <= labels(fig)
    lo, hi = fig.axes[0].get_xlim()
    assert lo < tg.timeouts[0] * 1000 < hi, "the focus shows the timeout"

    # from the pcap alone: the delivered packets, no drops
    tp = load(gbn.pcap)
    assert len(tp.data) == gbn.link["forward"]["delivered"] and len(tp.acks) == gbn.link["reverse"]["delivered"]
    assert "drops unknown" in describe(tp)
    assert "data lost" not in labels(draw(tp))


def test_stop_and_wait_little_endian_over_the_comn_link(tmp_path):
    sender = Program(
        f"python3 {REF}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} 25",
        output_format="comn-sw",
        env={"RDT_BYTE_ORDER": "little"},
    )
    receiver = Program(f"python3 {REF}/Receiver2.py {{listen_port}} {{output}}", env={"RDT_BYTE_ORDER": "little"})
    res = run_transfer(
        sender,
        receiver,
        Link("delay 5ms loss 10% rate 10mbit", shared_queue=True),
        size=40 << 10,
        seed=7,
        backend="local",
        trace=str(tmp_path / "sw.trace"),
    )
    assert res.ok, res.error
    tr = load(res)
    assert tr.fmt == "comn-le"
    assert_trace_matches_engine(res, tr)
    c = tr.counts()
    assert c["forward"]["lost"] + c["reverse"]["lost"] > 0, "seed 7 loses packets on this link"
    assert c["data_packets"] == 40 and c["max_outstanding"] == 1
    assert c["timeouts"] == c["retransmissions"] == res.printed["retransmissions"], (
        "each stop-and-wait resend follows its own timeout"
    )


def test_corruption_duplicates_and_queue_drops_are_marked(tmp_path):
    opts = "--protocol sr --format ext --window 16"
    res = run_transfer(
        Program(
            f"python3 -m reference send {opts} --timeout 100 --host {{receiver_host}} --port {{receiver_port}} --file {{file}}"
        ),
        Program(f"python3 -m reference recv {opts} --port {{listen_port}} --file {{output}}"),
        Link(
            "delay 2ms duplicate 10% corrupt 10% loss 3% rate 2mbit limit 8", reverse="delay 2ms duplicate 10% loss 3%"
        ),
        size=60 << 10,
        seed=2,
        backend="local",
        trace=str(tmp_path / "ext.trace"),
    )
    assert res.ok, res.error
    tr = load(res)
    assert (tr.fmt, tr.counts()["other"]) == ("ext", 0)
    assert_trace_matches_engine(res, tr)
    f = res.link["forward"]
    assert f["corrupted"] > 0 and f["duplicated"] > 0 and f["queue_drops"] > 0 and f["lost"] > 0
    fig = draw(tr, window=16, save=tmp_path / "ext.png")
    assert {"delivered corrupted", "copy made by the link", "data dropped: queue full", "data lost"} <= labels(fig)


@pytest.mark.netns
def test_trace_in_tun_mode(tmp_path):
    """Between namespaces the engine sees IP packets; the trace keeps the UDP payload."""
    res = run_transfer(
        Program(f"python3 {REF}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} 30"),
        Program(f"python3 {REF}/Receiver2.py {{listen_port}} {{output}}"),
        Link("delay 2ms loss 10%", reverse="delay 2ms"),
        size=20 << 10,
        seed=5,
        backend="netns",
        trace=str(tmp_path / "tun.trace"),
    )
    assert res.ok, res.error
    tr = load(res)
    assert tr.capture.mode == "tun" and tr.fmt == "comn-be"
    c = tr.counts()
    assert c["forward"]["lost"] == res.link["forward"]["lost"] > 0
    assert c["retransmissions"] == c["timeouts"] == res.link["forward"]["repeats"]
    assert c["data_packets"] == 20


def test_rdtlab_run_tsg_and_rdtlab_tsg(tmp_path, capsys):
    png, trace = tmp_path / "sw.png", tmp_path / "sw.trace"
    sw = [
        "--sender",
        f"python3 {REF}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} 30",
        "--receiver",
        f"python3 {REF}/Receiver2.py {{listen_port}} {{output}}",
    ]
    assert (
        main(
            [
                "run",
                *sw,
                "--link",
                "delay 1ms loss 10%",
                "--size",
                "10KiB",
                "--seed",
                "3",
                "--backend",
                "local",
                "--trace",
                str(trace),
                "--tsg",
                str(png),
                "--json",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    assert out.startswith("{") and f"written to {png}" in err
    assert png.stat().st_size > 10_000 and trace.exists()
    zoom = tmp_path / "zoom.png"
    assert main(["tsg", str(trace), "-o", str(zoom), "--xlim", "0:50", "--fmt", "comn"]) == 0
    assert zoom.exists()
    for argv, why in (
        (["tsg", str(tmp_path / "none"), "-o", str(zoom)], "not found"),
        (["tsg", str(png), "-o", str(zoom)], "neither an engine trace"),
        (["tsg", str(trace), "-o", str(tmp_path / "no" / "x.png")], "cannot write"),
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert why in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit):
        main(["tsg", str(trace), "-o", str(zoom), "--xlim", "5:1"])


def test_tcp_like_fast_retransmit(tmp_path):
    """With seed 2 the first loss is followed by a window's worth of delivered packets,
    so three duplicate ACKs come back long before the 200 ms timer."""
    opts = "--protocol tcp --window 16"
    res = run_transfer(
        Program(
            f"python3 -m reference send {opts} --timeout 200 --host {{receiver_host}} --port {{receiver_port}} --file {{file}}"
        ),
        Program(f"python3 -m reference recv {opts} --port {{listen_port}} --file {{output}}"),
        LOSSY,
        size=100 << 10,
        seed=2,
        backend="local",
        trace=str(tmp_path / "tcp.trace"),
    )
    assert res.ok, res.error
    tr = load(res)
    assert_trace_matches_engine(res, tr)
    k = min(p.seq for p in tr.data if p.copy.fate == "lost")
    assert [p.cause for p in tr.sent() if p.seq == k and p.retransmission][0] == "fast"
    assert "fast retransmit (3 dup ACKs)" in labels(draw(tr))


def test_a_trace_tail_keeps_the_end_of_the_transfer_and_draws(tmp_path):
    """`trace_tail`: a transfer too long to trace whole is traced by its last lines (the
    engine keeps them and writes them when it stops); the graph draws that end."""
    sender = Program(f"python3 {REF}/Sender3.py {{receiver_host}} {{receiver_port}} {{file}} 200 {W}")
    receiver = Program(f"python3 {REF}/Receiver3.py {{listen_port}} {{output}}")
    res = run_transfer(
        sender,
        receiver,
        Link("delay 5ms rate 10mbit"),
        size=200 << 10,
        seed=3,
        backend="local",
        trace=str(tmp_path / "tail.trace"),
        trace_tail=120,
    )
    assert res.ok, res.error
    with open(res.trace) as f:
        assert len(f.readlines()) == 1 + 120  # the start line and the tail
    tr = load(res)
    data = [p.seq for p in tr.sent()]
    assert data and max(data) == 199 and min(data) > 150, "the last messages of the 200, not the first"
    assert not [p for p in tr.packets if p.kind == "ack" and p.t_in is None], "no out line without its in line"
    draw(tr, save=str(tmp_path / "tail.png"))
    assert (tmp_path / "tail.png").stat().st_size > 5000
