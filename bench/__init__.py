"""Benchmarks (`make bench`): long measurements whose figures go in BENCHMARKS.md.

Each module here with a ``run(argv) -> int`` function is one benchmark; `python -m
bench NAME` runs one, `python -m bench all` runs them all in order.
"""
