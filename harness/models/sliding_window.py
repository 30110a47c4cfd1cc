"""Pipelined protocols: no-loss bound, Go-Back-N and Selective Repeat under random loss.

All return goodput in KiB/s for full data packets (see link.py for the conventions).
The textbook forms (Stallings, "Data and Computer Communications", ch. 7; a = the
propagation time in frame times, P = the frame loss probability) assume the sender
learns of a loss one round trip after it and never waits for a timeout, and that ACKs
are free. On the COMN link neither holds: a loss costs a timeout, and at large windows
the ACKs queue behind the data in the shared rate queue. The textbook GBN value is
therefore far too high at 5% loss (about 4x at window 8-16 on a 5 ms link and worse
above), which is why `gbn_timeout` exists; the sheet prints both with their errors.
"""

from __future__ import annotations

from .link import Link


def pipelined_no_loss(link: Link, window: int) -> float:
    """min(window·payload/RTT, capacity): a window of full packets per idle round trip,
    at most what the rate (shared by data and ACKs when shared_queue) carries."""
    _check_window(window)
    return link.kBps(min(window / link.rtt, link.capacity_pps))


def _window_to_fill(link: Link) -> float:
    """1 + 2a in the textbook: packets that fit in one round trip at line rate."""
    return link.rtt / link.t_data


def gbn_textbook(link: Link, window: int) -> float:
    """Textbook GBN: U = (1-P)/(1+2aP) when W >= 1+2a, else W(1-P)/((1+2a)(1-P+WP)),
    with P = the data loss (ACKs are cumulative, so a lost ACK is covered by the next)."""
    _check_window(window)
    p, fill = link.loss, _window_to_fill(link)
    if window >= fill:
        u = (1 - p) / (1 + (fill - 1) * p)
    else:
        u = window * (1 - p) / (fill * (1 - p + window * p))
    return link.kBps(u / link.t_data)


def sr_textbook(link: Link, window: int) -> float:
    """Textbook SR: U = 1-P when W >= 1+2a, else W(1-P)/(1+2a). With the COMN format an
    ACK acknowledges one packet, so P is the loss of the data OR its ACK."""
    _check_window(window)
    p, fill = link.round_trip_loss, _window_to_fill(link)
    u = (1 - p) if window >= fill else window * (1 - p) / fill
    return link.kBps(u / link.t_data)


def effective_rtt(link: Link, window: int) -> float:
    """Round trip with a full window in flight: on a saturated shared queue each of the
    W packets in flight occupies t_data + t_ack of it (Little's law), so the RTT grows
    to W/capacity once that exceeds the idle RTT."""
    return max(link.rtt, window / link.capacity_pps)


def first_ack_after_burst(link: Link, window: int) -> float:
    """When the first ACK returns after a burst of W packets (e.g. after a timeout). netem
    delays first, then serialises: packet k leaves at delay + k·t_data; the first ACK joins
    the shared queue at 2·delay + t_data and waits behind the data still queued."""
    ready = 2 * link.delay_s + link.t_data
    if link.shared_queue:
        ready = max(ready, link.delay_s + window * link.t_data)
    return ready + link.t_ack


def gbn_timeout(link: Link, window: int, timeout_s: float) -> float:
    """GBN with a fixed timeout on the oldest unacknowledged packet, on the shared queue
    (the reference Sender3; seed 004 Q4 discusses the effects).

    Renewal argument: the sender delivers packets at r = W/RTT_eff (at most the
    capacity; RTT_eff grows with the queue, see `effective_rtt`) until a loss event;
    each event stalls it for D, so goodput = 1 / (1/r + e/(1-e)·D) packets/s, where
    - e = loss + (1-loss)·loss^W: a data loss, or (mostly at W = 1) the loss of every
      ACK that could have covered the packet;
    - D = timeout + RTT_eff·(1 - 1/W): the wait for the lost packet's timer, plus the
      time the W-1 packets sent after it held the pipe, which the receiver discarded
      and the sender sends again.
    Assumes independent losses, zero processing time, a sender that always has data.
    Not modelled: when the queueing delay of a full window, W·(t_data + t_ack), is well
    above the timeout (5 ms: W >= 64 at 20 ms), packets time out while their ACKs wait
    in the queue and every timeout pushes a whole window more into it; measured
    throughput then collapses far below this model.
    Against the reference (1 MiB, 5% loss) it holds below that point (BENCHMARKS.md,
    "The sheets"); at W = 1 it is exactly stop-and-wait.
    """
    _check_window(window)
    if timeout_s <= 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout_s}")
    p = link.loss
    rtt = effective_rtt(link, window)
    rate = min(window / rtt, link.capacity_pps)
    event = p + (1 - p) * p**window
    stall = timeout_s + rtt * (1 - 1 / window)
    return link.kBps(1 / (1 / rate + event / (1 - event) * stall))


def sr_timeout(link: Link, window: int, timeout_s: float) -> float:
    """SR with a fixed per-packet timeout, as rounds of W packets: a round ends when
    every packet of it is acknowledged, because the window cannot slide past a packet
    still missing. Each packet needs a geometric number of failed attempts (data or
    ACK lost, probability P = round-trip loss), each costing one timeout, and they are
    retried in parallel, so a round lasts RTT_eff + timeout·E[max of W such numbers],
    E[max] = sum_k>=1 (1 - (1 - P^k)^W). goodput = min(W/round, capacity·(1-P)).
    Treats rounds as synchronised (an approximation of the sliding window; exact at
    W = 1, where it is stop-and-wait)."""
    _check_window(window)
    if timeout_s <= 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout_s}")
    big_p = link.round_trip_loss
    expected_max_failures, k = 0.0, 1
    while True:
        term = 1 - (1 - big_p**k) ** window
        expected_max_failures += term
        if term < 1e-12:
            break
        k += 1
    round_s = effective_rtt(link, window) + timeout_s * expected_max_failures
    return link.kBps(min(window / round_s, link.capacity_pps * (1 - big_p)))


def _check_window(window: int) -> None:
    if window < 1:
        raise ValueError(f"window must be >= 1 packet, got {window}")
