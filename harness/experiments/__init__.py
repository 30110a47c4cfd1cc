"""Experiments: sweeps over transfers (sweep.py), the iperf3 baseline (iperf.py)."""
