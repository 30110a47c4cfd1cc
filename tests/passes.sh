#!/bin/sh
# make test-python: the Python tests in two passes (tests/conftest.py says which tests
# are which): the together tier three at a time, then the rest one at a time. The
# second runs even when the first fails; the exit status is the first failing pass's,
# and a pass that PYTEST_ARGS leaves empty (pytest's status 5) is no failure.
#
# A whole run as root also makes the Docker images' light parts beside the first pass
# (docker/build.sh --light: the base image and the kit's Debian layer, debootstrap and
# apt, mostly downloads; the wheelhouse and releases, pip and nbgrader on the host; the
# kit's Python packages in a container at the lowest CPU weight), niced, with
# idle-class I/O: on a clean machine, most of what the Docker tests' fixture would
# otherwise wait for alone in the second pass; what is left for it is COPY.
# (The old venv stage's COPY --from in the daemon was neither
# niced nor light on the disk: BENCHMARKS.md, "The test suite".) The second
# pass starts once this has ended.
# Usage: PY=.venv/bin/python tests/passes.sh [PYTEST_ARGS...]
set -u
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}

ahead=
stop_ahead() { [ -z "$ahead" ] || kill -- "-$ahead" 2>/dev/null; }
trap stop_ahead EXIT
trap 'stop_ahead; exit 130' INT
trap 'stop_ahead; exit 143' TERM
if [ $# -eq 0 ] && [ "$(id -u)" = 0 ]; then
    mkdir -p build/docker
    echo "the Docker images' light parts beside the first pass (log: build/docker/ahead.log)"
    # its own process group (setsid), so an interrupted run stops all of it
    setsid nice -n 19 ionice -c 3 env PY="$PY" docker/build.sh --light >build/docker/ahead.log 2>&1 &
    ahead=$!
fi

mkdir -p build/tests     # each test's time, for finding where a run waits
a=0; "$PY" -m pytest -q -n 3 -m together --durations=10 --junitxml=build/tests/together.xml "$@" || a=$?
[ $a -eq 5 ] && a=0
if [ -n "$ahead" ]; then
    s=$(date +%s)
    if wait "$ahead"; then built="made"; else built="not made (build/docker/ahead.log says why)"; fi
    ahead=
    echo "the Docker images' light parts $built; waited $(( $(date +%s) - s )) s for them after the first pass"
fi
b=0; "$PY" -m pytest -q -m 'not together' --durations=30 --junitxml=build/tests/alone.xml "$@" || b=$?
[ $b -eq 5 ] && b=0
exit $(( a ? a : b ))
