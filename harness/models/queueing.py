"""M/D/1 queue: Poisson arrivals, deterministic service (a fixed-size packet on a fixed
rate link), one server, infinite buffer. Seed 003 uses it for queueing delay against
window on a 10 Mbit/s, 10 ms, 100-packet link."""

from __future__ import annotations


def md1_utilisation(arrival_rate: float, service_rate: float) -> float:
    """rho = lambda/mu (both in packets per second)."""
    if arrival_rate < 0 or service_rate <= 0:
        raise ValueError("need arrival rate >= 0 and service rate > 0")
    return arrival_rate / service_rate


def md1_wait(arrival_rate: float, service_rate: float) -> float:
    """Mean time in the queue before service (Pollaczek-Khinchine with zero service
    variance): Wq = rho / (2·mu·(1 - rho)) seconds. Infinite when rho >= 1."""
    rho = md1_utilisation(arrival_rate, service_rate)
    if rho >= 1:
        return float("inf")
    return rho / (2 * service_rate * (1 - rho))


def md1_queue_length(arrival_rate: float, service_rate: float) -> float:
    """Mean number waiting: Lq = rho² / (2(1 - rho)) (= lambda·Wq, Little's law)."""
    rho = md1_utilisation(arrival_rate, service_rate)
    if rho >= 1:
        return float("inf")
    return rho * rho / (2 * (1 - rho))
