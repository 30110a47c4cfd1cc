"""Pictures of transfers: the time-sequence graph of one transfer, from what crossed the link.

    from harness.plots import draw, load
    res = run_transfer(..., trace="run.trace")      # the engine records every packet's fate
    fig = draw(res, title="GBN, W=64", focus="timeout", window=64, save="gbn.png")
    load(res).counts()                              # the same events, as numbers

`draw` imports matplotlib when first used, so `rdtlab` starts fast.
"""

from harness.plots.trace import Packet, Transfer, load

__all__ = ["draw", "load", "Transfer", "Packet"]


def __getattr__(name):
    if name == "draw":
        from harness.plots.tsg import draw

        return draw
    raise AttributeError(f"module 'harness.plots' has no attribute {name!r}")
