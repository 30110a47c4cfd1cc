"""A Selective Repeat sender that hangs: it sends nothing, ignores SIGTERM and sleeps,
with a child that sleeps too. The harness must stop both (no progress on the link)."""
import os
import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
os.fork()            # parent and child both hang
while True:
    time.sleep(3600)
