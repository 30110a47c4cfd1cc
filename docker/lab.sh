#!/bin/sh
# The students' lab in Docker (docker/compose.yaml), for `make docker-lab`:
#   docker/lab.sh up     start it in the background and print its URL with the token
#   docker/lab.sh down   stop it (the work stays in the volume rdtlab_rdtlab-work)
# `up` checks first what Docker's own errors say badly: no engine, no compose, no
# image, the port taken; each is one line with what to do.
set -eu
cd "$(dirname "$0")"
PORT=${RDTLAB_PORT:-8888}
export RDTLAB_PORT=$PORT
say() { echo "lab: $*" >&2; }

. ./compose.sh
compose_choose || { say "no Docker Compose; install it (Debian: apt-get install docker-compose) and retry"; exit 1; }
# shellcheck disable=SC2086  # $COMPOSE is one or two words
compose() { $COMPOSE "$@"; }
if [ "${1:-up}" = down ]; then
    compose down; exit
fi
docker info >/dev/null 2>&1 || { say "the Docker engine does not answer; start it (as root: docker/engine.sh) and retry"; exit 1; }
docker image inspect "${RDTLAB_LAB_IMAGE:-rdtlab/lab:latest}" >/dev/null 2>&1 \
    || { say "no image ${RDTLAB_LAB_IMAGE:-rdtlab/lab:latest}; build it with make images"; exit 1; }

ready() { docker logs "$1" 2>&1 | sed -n 's/.*rdtlab-lab: JupyterLab is ready: //p' | tail -n 1; }
cid=$(compose ps -q lab 2>/dev/null || true)
if [ -n "$cid" ] && [ -n "$(ready "$cid")" ]; then
    echo "the lab is already running: $(ready "$cid")"; exit 0
fi
if ! port_free "$PORT"; then
    say "port $PORT is taken by another program; choose a free one, e.g. RDTLAB_PORT=$((PORT + 1)) make docker-lab"; exit 1
fi

if ! out=$(compose up -d --no-build 2>&1); then
    compose down >/dev/null 2>&1
    say "docker compose up failed: $(echo "$out" | grep -v '^\s*$' | tail -n 1)"; exit 1
fi
cid=$(compose ps -q lab)
deadline=$(( $(date +%s) + 60 ))
until [ -n "$(ready "$cid")" ]; do
    if [ "$(docker inspect -f '{{.State.Running}}' "$cid" 2>/dev/null)" != true ] || [ "$(date +%s)" -ge "$deadline" ]; then
        why=$(docker logs "$cid" 2>&1 | grep 'rdtlab-lab:' | tail -n 1 | sed 's/.*rdtlab-lab: //')
        compose down >/dev/null 2>&1
        say "the lab did not start: ${why:-no answer within 60 s; see docker compose logs lab}"; exit 1
    fi
    sleep 0.1
done
ready "$cid"
