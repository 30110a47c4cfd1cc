"""The `rdtlab` command: the top layer, above the harness and the grader it runs."""
