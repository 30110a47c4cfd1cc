# The grading image: `rdtlab grade` as its entry point. One submission or a folder of
# them in, results out; the same image serves a Gradescope package and a cluster's jobs.
#   docker run --rm --cap-add NET_ADMIN --cap-add SYS_ADMIN --cap-add SYS_PTRACE \
#       --device /dev/net/tun --security-opt apparmor:unconfined \
#       --security-opt seccomp=unconfined --security-opt systempaths=unconfined \
#       -v "$PWD/submitted:/submissions:ro" -v "$PWD/results:/results" \
#       rdtlab/grader /submissions --out /results
# The netns backend needs NET_ADMIN, SYS_ADMIN and the TUN device; the bubblewrap jail
# needs pivot_root and its own /proc (seccomp and Docker's masked /proc paths off) and
# SYS_PTRACE (the harness reads the jailed programs' sockets in /proc/PID/fd).
# It runs as root: the sandbox (bubblewrap) gives each submission a uid of its own and
# needs root to switch to it. The kit's make, gcc, g++ and JDK, and here Debian's Go
# and Rust (golang-go, cargo: bookworm's 1.19 and 1.63), build what students hand in
# (harness/resolver.py), offline, in each submission's jail.
ARG KIT=rdtlab/kit:latest
FROM ${KIT}

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends golang-go cargo \
 && rm -rf /var/lib/apt/lists/*

# The kit with the grader, the reference solutions and the assignments' folders (their
# batteries; the course itself is mounted at /course), installed in place.
COPY pyproject.toml /opt/rdtlab/
COPY rdtlab /opt/rdtlab/rdtlab
COPY harness /opt/rdtlab/harness
COPY reference /opt/rdtlab/reference
COPY grader /opt/rdtlab/grader
COPY assignments /opt/rdtlab/assignments
RUN pip install -q --no-deps --no-index --no-build-isolation --no-cache-dir --config-settings editable_mode=compat -e /opt/rdtlab \
 && rm -rf /opt/rdtlab/harness/linkemu /opt/rdtlab/build \
 && python3 -m compileall -q /opt/rdtlab

COPY docker/grade-start.sh /usr/local/bin/rdtlab-grade-start
WORKDIR /results
ENTRYPOINT ["tini", "--", "rdtlab-grade-start"]
CMD ["--help"]
