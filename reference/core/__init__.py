"""Sans-IO protocol cores: no sockets and no clock inside (see api.py).

    from reference.core import CoreConfig, make_sender, make_receiver
    sender = make_sender("sr", data, CoreConfig(window=64, timeout=0.06))
    receiver = make_receiver("sr", CoreConfig(window=64))

Protocols: "sw" stop-and-wait, "gbn" Go-Back-N, "sr" Selective Repeat, "tcp" TCP-like
(cumulative ACKs, fast retransmit), "mh" multi-homed Selective Repeat.
"""

from __future__ import annotations

import importlib

from reference.core.api import Ack, Data, ReceiverCore, ReceiverStats, SenderCore, SenderStats
from reference.core.config import PROTOCOLS, CoreConfig

# protocol -> (module, sender class, receiver class)
_CORES = {
    "sw": ("stop_and_wait", "StopAndWaitSender", "StopAndWaitReceiver"),
    "gbn": ("gbn", "GoBackNSender", "GoBackNReceiver"),
    "sr": ("sr", "SelectiveRepeatSender", "SelectiveRepeatReceiver"),
    "tcp": ("tcp", "TcpLikeSender", "TcpLikeReceiver"),
    "mh": ("multihomed", "MultiHomedSender", "MultiHomedReceiver"),
}


def _core_class(protocol: str, which: int):
    module, *classes = _CORES[protocol]
    try:
        mod = importlib.import_module(f"reference.core.{module}")
    except ModuleNotFoundError as e:
        if e.name != f"reference.core.{module}":
            raise
        raise NotImplementedError(f"protocol {protocol!r} has no core yet") from None
    return getattr(mod, classes[which])


def make_sender(protocol: str, data: bytes, config: CoreConfig | None = None) -> SenderCore:
    """A sender core for ``protocol`` that will deliver ``data``."""
    config = config or CoreConfig()
    config.validate(protocol)
    return _core_class(protocol, 0)(bytes(data), config)


def make_receiver(protocol: str, config: CoreConfig | None = None) -> ReceiverCore:
    """A receiver core for ``protocol``."""
    config = config or CoreConfig()
    config.validate(protocol)
    return _core_class(protocol, 1)(config)


__all__ = [
    "Ack",
    "Data",
    "CoreConfig",
    "PROTOCOLS",
    "ReceiverCore",
    "ReceiverStats",
    "SenderCore",
    "SenderStats",
    "make_receiver",
    "make_sender",
]
