"""harness.plots.trace on hand-made captures: decoding, byte order, the protocol's
events (retransmissions, timeouts, fast retransmits) and the window. The captures are
what the engine's trace would hold for the traffic described; the real engine is in
test_transfers.py."""

import json
import struct

import pytest

from harness.plots.capture import Capture, Copy, read
from harness.plots.trace import early_fast_retransmits, load, waits_after_samples
from harness.procs import UsageError

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)


def data(seq, t, order=">", fate="delivered", eof=False):
    head = struct.pack(order + "HB", seq & 0xFFFF, eof) + b"x" * 29
    return Copy("forward", 0, head, t, None if fate != "delivered" else t + 0.005, fate, length=1027)


def ack(n, t, order=">", fate="delivered"):
    return Copy(
        "reverse",
        0,
        struct.pack(order + "H", n & 0xFFFF),
        t - 0.005,
        t if fate == "delivered" else None,
        fate,
        length=2,
    )


def transfer(copies, **kw):
    return load(Capture(copies, "trace", "test"), **kw)


@pytest.mark.parametrize("order,fmt", [(">", "comn-be"), ("<", "comn-le")])
def test_byte_order_is_found_from_the_numbers(order, fmt):
    copies = [data(i, i * 0.001, order) for i in range(5)] + [ack(i, 0.01 + i * 0.001, order) for i in range(5)]
    tr = transfer(copies)
    assert tr.fmt == fmt
    assert [p.seq for p in tr.data] == [0, 1, 2, 3, 4]
    assert [p.seq for p in tr.acks] == [0, 1, 2, 3, 4]


def test_numbers_unwrap_past_65535():
    seqs = list(range(0, 65000, 1000)) + list(range(65530, 65542))
    tr = transfer([data(s, i * 0.001) for i, s in enumerate(seqs)] + [ack(65541, 0.5)], fmt="comn-be")
    assert [p.seq for p in tr.data] == seqs
    assert tr.acks[0].seq == 65541


def test_go_back_n_window_resend_is_one_timeout():
    # packets 0..3 sent, 1 lost; ACK 0 then duplicates of 0; the timer resends 1..3 at once
    c = [
        data(0, 0.000),
        data(1, 0.001, fate="lost"),
        data(2, 0.002),
        data(3, 0.003),
        ack(0, 0.010),
        ack(0, 0.011),
        ack(0, 0.012),
        data(1, 0.100),
        data(2, 0.1001),
        data(3, 0.1002),
        ack(3, 0.110),
    ]
    tr = transfer(c)
    assert tr.ack == "cumulative"
    assert [(p.seq, p.cause) for p in tr.sent() if p.retransmission] == [(1, "timeout"), (2, "timeout"), (3, "timeout")]
    assert tr.timeouts == [pytest.approx(0.100)]
    assert tr.counts()["max_outstanding"] == 4
    assert tr.window[-1][3] == 0, "everything acknowledged at the end"


def test_stop_and_wait_timeouts_in_a_row_are_separate():
    c = [data(0, 0.0, fate="lost"), data(0, 0.02, fate="lost"), data(0, 0.04), ack(0, 0.05)]
    tr = transfer(c)
    assert len(tr.timeouts) == 2
    assert tr.counts()["forward"]["lost"] == 2


def test_fast_retransmit_needs_the_third_duplicate_at_once():
    c = [data(i, i * 0.001) for i in range(6)]
    c[1] = data(1, 0.001, fate="lost")
    c += [ack(0, 0.010), ack(0, 0.011), ack(0, 0.012), ack(0, 0.013), data(1, 0.0131), ack(5, 0.020)]
    tr = transfer(c, ack="cumulative")
    resent = [p for p in tr.sent() if p.retransmission]
    assert [(p.seq, p.cause) for p in resent] == [(1, "fast")]
    assert tr.timeouts == []
    # the same resend long after the third duplicate is a timeout (a GBN sender's timer)
    c[-2] = data(1, 0.2)
    c[-1] = ack(5, 0.21)
    tr = transfer(c, ack="cumulative")
    assert [p.cause for p in tr.sent() if p.retransmission] == ["timeout"]


def test_selective_acks_are_told_from_cumulative():
    # SR: 1 lost, later packets acked one by one, then 1 resent and acked: numbers go down
    c = [data(i, i * 0.001) for i in range(8)]
    c[1] = data(1, 0.001, fate="lost")
    c[5] = data(5, 0.005, fate="lost")
    c += [ack(i, 0.01 + i * 0.001) for i in (0, 2, 3, 4, 6, 7)]
    c += [data(1, 0.05), ack(1, 0.06), data(8, 0.061), ack(8, 0.065), data(5, 0.07), ack(5, 0.08)]
    tr = transfer(c)
    assert tr.ack == "selective"
    assert len(tr.timeouts) == 2
    # after ACKs 0, 2, 3, 4, 6, 7 only 1 and 5 are outstanding
    assert [w[3] for w in tr.window if w[0] == pytest.approx(0.017)] == [2]


def test_link_copies_are_not_transmissions():
    c = [data(0, 0.0), ack(0, 0.01)]
    dup = data(0, 0.0)
    dup.duplicate = True
    tr = transfer(c + [dup])
    assert tr.counts()["retransmissions"] == 0
    assert tr.counts()["forward"]["duplicated"] == 1


def test_messages_not_in_the_format_are_counted_apart():
    c = [data(0, 0.0), Copy("forward", 0, b"\x00\x00\x07hello", 0.001, 0.002, "delivered"), ack(0, 0.01)]
    assert transfer(c, fmt="comn-be").counts()["other"] == 1


def test_trace_file_errors_are_one_line(tmp_path):
    with pytest.raises(UsageError, match="not found"):
        read(tmp_path / "missing.trace")
    (tmp_path / "stats.json").write_text('{"seed": 1}\n')
    with pytest.raises(UsageError, match="no start line"):
        read(tmp_path / "stats.json")
    (tmp_path / "junk").write_bytes(b"\x00\x01junk")
    with pytest.raises(UsageError, match="neither"):
        read(tmp_path / "junk")
    with pytest.raises(UsageError, match="format"):
        load(tmp_path / "junk", fmt="tcp")


def test_a_cut_last_line_is_skipped(tmp_path):
    lines = [
        {"ev": "start", "mode": "udp", "seed": 3, "paths": ["p0"]},
        {
            "ev": "in",
            "t": 10,
            "path": 0,
            "dir": "forward",
            "id": 0,
            "len": 4,
            "head": "00000061",
            "repeat": False,
            "fate": "queued",
            "corrupted": False,
            "reordered": False,
            "dup": None,
        },
        {
            "ev": "out",
            "t": 20,
            "path": 0,
            "dir": "forward",
            "id": 0,
            "copy": "orig",
            "fate": "delivered",
            "corrupted": False,
        },
    ]
    path = tmp_path / "cut.trace"
    path.write_text("\n".join(json.dumps(x) for x in lines) + '\n{"ev":"in","t":3')
    cap = read(path)
    assert (cap.seed, cap.skipped_lines, len(cap.copies)) == (3, 1, 1)
    assert (cap.copies[0].t_in, cap.copies[0].t_out, cap.copies[0].fate) == (10e-9, 20e-9, "delivered")


def test_a_late_lone_resend_after_three_duplicates_is_still_fast():
    # the sender was slow to react (6 ms), but resent only the missing packet, long before a timer
    c = [data(i, i * 0.001) for i in range(6)]
    c[1] = data(1, 0.001, fate="lost")
    c += [ack(0, 0.030), ack(0, 0.031), ack(0, 0.032), ack(0, 0.033), data(1, 0.039), data(6, 0.0395), ack(6, 0.06)]
    tr = transfer(c, ack="cumulative")
    assert [(p.seq, p.cause) for p in tr.sent() if p.retransmission] == [(1, "fast")]
    assert tr.timeouts == []


def test_a_window_resent_right_after_duplicates_is_a_timeout():
    # GBN: the timer fired just after the third duplicate; the whole window goes again
    c = [data(i, i * 0.001) for i in range(4)]
    c[1] = data(1, 0.001, fate="lost")
    c += [
        ack(0, 0.090),
        ack(0, 0.091),
        ack(0, 0.092),
        ack(0, 0.093),
        data(1, 0.0935),
        data(2, 0.0936),
        data(3, 0.0937),
        ack(3, 0.12),
    ]
    tr = transfer(c, ack="cumulative")
    assert [p.cause for p in tr.sent() if p.retransmission] == ["timeout"] * 3
    assert tr.timeouts == [pytest.approx(0.0935)]
    assert tr.counts()["fast_retransmits"] == 0


def test_a_resend_after_fewer_duplicates_than_k_is_early():
    # packet 1 overtaken by 2 and 3 (no loss): ACK 0 (the sender sends 4 on it), then two
    # duplicates; 1 resent at once
    c = [data(0, 0.000), data(1, 0.001), data(2, 0.002), data(3, 0.003)]
    c += [ack(0, 0.010), data(4, 0.0101), ack(0, 0.011), ack(0, 0.012), data(1, 0.0121), ack(4, 0.016)]
    tr = transfer(c, ack="cumulative")
    [resent] = [p for p in tr.sent() if p.retransmission]
    assert resent.dups == 2
    assert early_fast_retransmits(tr, 3) == [resent]
    assert early_fast_retransmits(tr, 2) == []  # at k = 2 it is on time
    # with no send since the new ACK, the new ACK may have prompted it: not held against it
    del c[5]
    tr = transfer(c, ack="cumulative")
    assert [p.dups for p in tr.sent() if p.retransmission] == [0] and early_fast_retransmits(tr, 3) == []


def test_a_resend_a_new_ack_or_a_timer_prompted_is_not_early():
    # NewReno: the partial ACK 2 (and the link's copy of it, a duplicate) prompt the resend of 3
    c = [data(i, i * 0.001) for i in range(6)]
    c += [ack(0, 0.010), data(6, 0.0101)] + [ack(0, 0.011 + i * 0.001) for i in range(3)] + [data(1, 0.0135)]
    c += [ack(2, 0.030), Copy("reverse", 0, struct.pack(">H", 2), 0.025, 0.0301, "delivered", duplicate=True)]
    c += [data(3, 0.0305), ack(5, 0.05)]
    tr = transfer(c, ack="cumulative")
    assert [(p.seq, p.dups) for p in tr.sent() if p.retransmission] == [(1, 3), (3, 0)]
    assert early_fast_retransmits(tr, 3) == []
    # a timer: no ACK since the sender's last send
    c = [data(0, 0.0), data(1, 0.001), ack(0, 0.010), ack(0, 0.011), data(2, 0.012), data(1, 0.5), ack(2, 0.52)]
    tr = transfer(c, ack="cumulative")
    assert [p.dups for p in tr.sent() if p.retransmission] == [None]
    assert early_fast_retransmits(tr, 3) == []


def test_the_wait_before_the_first_timeout_after_a_clean_sample():
    # 0..3 acked at once (each sent once: a sample any estimator takes), then 4 is lost
    # and its timer resends it: the quiet before that resend is at most the RTO
    def run(resend_at, resent_before=False):
        c = [data(i, i * 0.001) for i in range(4)]
        if resent_before:  # 2 went twice: the ACK covering it is no clean sample
            c.append(data(2, 0.004))
        c += [ack(3, 0.025), data(4, 0.026, fate="lost"), data(4, resend_at), ack(4, resend_at + 0.025)]
        return waits_after_samples(transfer(c, ack="cumulative"))

    assert run(0.086) == [(pytest.approx(0.086), pytest.approx(0.060))]
    assert run(0.526) == [(pytest.approx(0.526), pytest.approx(0.500))]
    assert run(0.526, resent_before=True) == []


def test_a_tail_unwraps_from_where_the_transfer_was():
    # the end of a long transfer: numbers from 65,000 across the wrap, nothing before
    seqs = list(range(65000, 65536)) + list(range(0, 11))
    tr = transfer([data(s, i * 0.001) for i, s in enumerate(seqs)] + [ack(10, 0.6)], fmt="comn-be")
    assert [p.seq for p in tr.data] == list(range(65000, 65547))
    assert tr.acks[0].seq == 65546
