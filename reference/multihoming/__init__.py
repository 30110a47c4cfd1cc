"""The reference's programs with the `multihoming` assignment's command lines (an honest
student's folder in the course's tests; `rdtlab sheet multihoming --impl reference/multihoming`)."""
