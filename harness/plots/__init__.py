"""Pictures of transfers: the time-sequence graph of one transfer, from what crossed the link.

    from harness.plots import draw, load
    res = run_transfer(..., trace="run.trace")      # the engine records every packet's fate
    fig = draw(res, title="GBN, W=64", focus="timeout", save="gbn.png")
    load(res).counts()                              # the same events, as numbers
"""
from harness.plots.trace import Packet, Transfer, load
from harness.plots.tsg import draw

__all__ = ["draw", "load", "Transfer", "Packet"]
