"""The reference's programs with the `gbn-vs-tcp` assignment's command lines (an honest
student's folder in the course's tests; `rdtlab sheet gbn-vs-tcp --impl reference/gbn_vs_tcp`)."""
