"""rdtlab reference solutions: sans-IO protocol cores, runtimes and COMN programs."""
