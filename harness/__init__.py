"""rdtlab harness: the lab bench (link engine, hosts, transfers, experiments)."""
