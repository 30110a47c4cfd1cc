"""The reference's programs with the `stop-and-wait-crc` assignment's command lines (an
honest student's folder in the course's tests; `rdtlab sheet stop-and-wait-crc --impl reference/stop_and_wait_crc`)."""
