"""A tiny impairing UDP relay for the program tests: sits between a sender and a
receiver on loopback and, from a seeded generator, drops, duplicates and reorders
datagrams in each direction. (The real link engine, harness/linkemu, does this with
netem's full semantics; this keeps the reference tests independent of it.)
"""

from __future__ import annotations

import random
import selectors
import socket
import threading


class LossyRelay:
    """Listens on ``address``; forwards to ``to``; answers go back to the last client.

    ``loss``, ``duplicate`` and ``reorder`` are probabilities per datagram, applied the
    same way in both directions; a reordered datagram is held back and sent after the
    next one in its direction. ``down()`` drops everything from then on (a dead path).
    """

    def __init__(self, to: tuple[str, int], loss=0.0, duplicate=0.0, reorder=0.0, seed=1, host="127.0.0.1"):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.to = to
        self.loss, self.duplicate, self.reorder = loss, duplicate, reorder
        self.rng = random.Random(seed)
        self.front = socket.socket(family, socket.SOCK_DGRAM)
        self.front.bind((host, 0))
        self.back = socket.socket(family, socket.SOCK_DGRAM)
        self.address = self.front.getsockname()[:2]
        self.client = None
        self.held = {}  # direction -> a datagram held back
        self.counts = {"forward": 0, "reverse": 0, "dropped": 0, "duplicated": 0, "reordered": 0}
        self.is_down = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(5)
        self.front.close()
        self.back.close()

    def down(self):
        self.is_down = True

    def _pass(self, direction, datagram, send):
        self.counts[direction] += 1
        if self.is_down or self.rng.random() < self.loss:
            self.counts["dropped"] += 1
            return
        copies = 2 if self.rng.random() < self.duplicate else 1
        self.counts["duplicated"] += copies - 1
        if direction not in self.held and self.rng.random() < self.reorder:
            self.counts["reordered"] += 1
            self.held[direction] = datagram
            return
        for _ in range(copies):
            send(datagram)
        if direction in self.held:
            send(self.held.pop(direction))

    def _run(self):
        with selectors.DefaultSelector() as sel:
            sel.register(self.front, selectors.EVENT_READ)
            sel.register(self.back, selectors.EVENT_READ)
            while not self._stop.is_set():
                for key, _ in sel.select(0.05):
                    try:
                        datagram, source = key.fileobj.recvfrom(65535)
                    except OSError:  # e.g. ICMP refused from a receiver not up yet
                        continue
                    try:
                        if key.fileobj is self.front:
                            self.client = source
                            self._pass("forward", datagram, lambda d: self.back.sendto(d, self.to))
                        elif self.client is not None:
                            self._pass("reverse", datagram, lambda d: self.front.sendto(d, self.client))
                    except OSError:
                        pass
