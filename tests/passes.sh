#!/bin/sh
# make test-python: the Python tests in two passes (tests/conftest.py says which tests
# are which): the together tier three at a time, then the rest one at a time. The
# second runs even when the first fails; the exit status is the first failing pass's,
# and a pass that PYTEST_ARGS leaves empty (pytest's status 5) is no failure.
#
# A whole run as root also builds the Docker images (docker/build.sh, as `make images`)
# beside the first pass, niced: on a clean machine that is 4-5 minutes of downloads,
# unpacking and layer commits the Docker tests would otherwise wait for alone. The
# second pass starts once the build has ended, so no measured test shares the machine
# with it; tests/docker's fixture then finds the images built (or, when this build
# failed, builds them itself and says why). Usage: PY=.venv/bin/python tests/passes.sh [PYTEST_ARGS...]
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
    echo "building the Docker images beside the first pass (log: build/docker/ahead.log)"
    # its own process group (setsid), so an interrupted run stops the whole build
    setsid nice -n 19 env PY="$PY" docker/build.sh >build/docker/ahead.log 2>&1 &
    ahead=$!
fi

mkdir -p build/tests     # each test's time, for finding where a run waits
a=0; "$PY" -m pytest -q -n 3 -m together --durations=10 --junitxml=build/tests/together.xml "$@" || a=$?
[ $a -eq 5 ] && a=0
if [ -n "$ahead" ]; then
    s=$(date +%s)
    if wait "$ahead"; then built="built"; else built="not built (build/docker/ahead.log says why)"; fi
    ahead=
    echo "Docker images $built; waited $(( $(date +%s) - s )) s for them after the first pass"
fi
b=0; "$PY" -m pytest -q -m 'not together' --durations=30 --junitxml=build/tests/alone.xml "$@" || b=$?
[ $b -eq 5 ] && b=0
exit $(( a ? a : b ))
