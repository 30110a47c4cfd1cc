"""Analytic models, each with its assumptions and units in its docstring.

Link conventions (netem on `lo`, the COMN setting) are in `link.py`.
"""

from .link import Link
from .queueing import md1_queue_length, md1_utilisation, md1_wait
from .sliding_window import (
    effective_rtt,
    first_ack_after_burst,
    gbn_textbook,
    gbn_timeout,
    pipelined_no_loss,
    sr_textbook,
    sr_timeout,
)
from .stop_and_wait import StopAndWait, stop_and_wait, stop_and_wait_utilisation
from .tcp import mathis, pftk, rfc6298_rto

__all__ = [
    "Link",
    "StopAndWait",
    "stop_and_wait",
    "stop_and_wait_utilisation",
    "pipelined_no_loss",
    "gbn_textbook",
    "gbn_timeout",
    "sr_textbook",
    "sr_timeout",
    "effective_rtt",
    "first_ack_after_burst",
    "mathis",
    "pftk",
    "rfc6298_rto",
    "md1_wait",
    "md1_queue_length",
    "md1_utilisation",
]
