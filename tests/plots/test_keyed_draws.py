"""A packet's fate is its own: the engine draws it from the seed, the packet's payload and
which copy of it this is, so how often a program resends (its timer, or a host that held
it up) does not move which of its packets are lost, on either backend.

Read from the engine's trace: the k-th copy of each data packet and of each ACK."""

import pytest

from harness import Link, Program, run_transfer
from harness.plots import load

REF = "reference/comn"
LINK = Link("delay 5ms loss 15% rate 10mbit", shared_queue=True)
BACKENDS = ["local", pytest.param("netns", marks=pytest.mark.netns)]


def fates(timeout_ms: int, backend: str, tmp_path) -> dict:
    """{(kind, seq, copy): fate} of a stop-and-wait transfer with this timer."""
    res = run_transfer(
        Program(
            f"python3 {REF}/Sender2.py {{receiver_host}} {{receiver_port}} {{file}} {timeout_ms}",
            output_format="comn-sw",
        ),
        Program(f"python3 {REF}/Receiver2.py {{listen_port}} {{output}}"),
        LINK,
        size=40 << 10,
        seed=7,
        backend=backend,
        trace=str(tmp_path / f"{backend}-{timeout_ms}.trace"),
    )
    assert res.ok, res.error
    copies, out = {}, {}
    for p in sorted(load(res).packets, key=lambda p: p.t):
        key = (p.kind, p.seq)
        copies[key] = copies.get(key, 0) + 1
        out[(*key, copies[key])] = p.copy.fate
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_timer_that_fires_more_often_meets_the_same_losses(backend, tmp_path):
    # 8 ms against a round trip of 10 ms and more: every packet is resent at least once
    # before its ACK can come back; 300 ms: only what was lost is resent
    eager, patient = fates(8, backend, tmp_path), fates(300, backend, tmp_path)
    both = eager.keys() & patient.keys()
    data = [k for k in both if k[0] == "data"]
    assert len(data) >= 41 and len(eager) > 1.5 * len(patient)
    assert {k: eager[k] for k in both} == {k: patient[k] for k in both}
    assert any(eager[k] == "lost" for k in data)


@pytest.mark.netns
def test_both_backends_lose_the_same_packets(tmp_path):
    local, netns = fates(300, "local", tmp_path), fates(300, "netns", tmp_path)
    assert local == netns
