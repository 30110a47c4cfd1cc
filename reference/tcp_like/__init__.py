"""The reference's programs with the `tcp-like` assignment's command lines (an honest
student's folder in the course's tests; `rdtlab sheet tcp-like --impl reference/tcp_like`)."""
