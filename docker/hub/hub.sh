#!/bin/sh
# The course hub on this machine (docker/hub/compose.yaml), for `make hub` / `make hub-down`:
#   docker/hub/hub.sh up     start it, print its address and the admin's login
#   docker/hub/hub.sh down   stop it, students' servers and grading containers included;
#                            the volumes (homes, the course, the exchange, the hub's
#                            database) stay
# `up` also makes the secrets once (RDTLAB_HUB_STATE, default build/hub: the proxy's and
# the grader account's tokens, the admin's password), the admin account, and the
# firewall rules of the students' network: there, containers reach the hub and the hub
# reaches them, nothing else (no student's server reaches another's, the grader's or the
# host). Those rules need root (or sudo); `down` removes them.
# Environment: RDTLAB_HUB_PORT (default 8000), RDTLAB_NOTEBOOK_MODE (the students' plan).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${RDTLAB_HUB_STATE:-$HERE/../../build/hub}
PORT=${RDTLAB_HUB_PORT:-8000}
BRIDGE=rdtlab-hub0
TAG=rdtlab-hub
export RDTLAB_HUB_PORT=$PORT
say() { echo "hub: $*" >&2; }
die() { say "$*"; exit 1; }

. "$HERE/../compose.sh"
compose_choose || die "no Docker Compose; install it (Debian: apt-get install docker-compose) and retry"
# shellcheck disable=SC2086  # $COMPOSE is one or two words
compose() { $COMPOSE -p rdtlab-hub -f "$HERE/compose.yaml" "$@"; }
if [ "$(id -u)" = 0 ]; then as_root() { "$@"; }
elif command -v sudo >/dev/null 2>&1; then as_root() { sudo -n "$@"; }
else as_root() { die "the firewall rules of the students' network need root; run as root or install sudo"; }
fi

secrets() {   # the tokens and the admin's password: made once, kept in $STATE (0600)
    mkdir -p "$STATE"
    if [ ! -s "$STATE/secrets.env" ]; then
        umask 077
        {   echo "RDTLAB_GRADER_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
            echo "RDTLAB_PROXY_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
            echo "RDTLAB_ADMIN_PASSWORD=$(python3 -c 'import secrets; print(secrets.token_urlsafe(12))')"
        } >"$STATE/secrets.env"
    fi
    set -a; . "$STATE/secrets.env"; set +a
    RDTLAB_COURSE_ID=$(sed -n 's/^course_id *= *"\(.*\)".*/\1/p' "$HERE/settings.toml")
    ADMIN=$(sed -n 's/^admin *= *"\(.*\)".*/\1/p' "$HERE/settings.toml")
    export RDTLAB_COURSE_ID
}

firewall_off() {
    for chain in DOCKER-USER INPUT; do
        as_root iptables -S "$chain" 2>/dev/null | grep -- "--comment $TAG" | sed 's/^-A /-D /' |
            while read -r rule; do
                # shellcheck disable=SC2086  # a rule is a list of words
                as_root iptables $rule
            done
    done
}

firewall_on() {   # firewall_on HUB_IP
    firewall_off
    as_root iptables -I DOCKER-USER -i "$BRIDGE" -o "$BRIDGE" -s "$1" -m comment --comment "$TAG" -j ACCEPT
    as_root iptables -I DOCKER-USER -i "$BRIDGE" -o "$BRIDGE" -d "$1" -m comment --comment "$TAG" -j ACCEPT
    as_root iptables -I INPUT -i "$BRIDGE" -m comment --comment "$TAG" -j DROP
}

# The servers the hub started and the grading containers: not compose's, so stopped here.
spawned() { docker ps -aq --filter network=rdtlab-hub; docker ps -aq --filter label=rdtlab.hub=grading; }

if [ "${1:-up}" = down ]; then
    secrets
    compose stop -t 10 >/dev/null 2>&1 || true
    ids=$(spawned | sort -u)
    [ -z "$ids" ] || docker rm -f $ids >/dev/null
    compose down --remove-orphans >/dev/null 2>&1 || compose down
    firewall_off
    say "stopped; the volumes (homes, course, exchange, the hub's database) are kept"
    exit 0
fi
[ "${1:-up}" = up ] || die "say up or down, not $1"

docker info >/dev/null 2>&1 || die "the Docker engine does not answer; start it (as root: docker/engine.sh) and retry"
for image in "${RDTLAB_HUB_IMAGE:-rdtlab/hub:latest}" "${RDTLAB_HUB_LAB_IMAGE:-rdtlab/lab-hub:latest}" \
             "${RDTLAB_HUB_GRADER_IMAGE:-rdtlab/grader-hub:latest}" "${RDTLAB_GRADING_IMAGE:-rdtlab/grader:latest}"; do
    docker image inspect "$image" >/dev/null 2>&1 || die "no image $image; build them with make hub (docker/hub/build.sh)"
done
secrets
running=$(compose ps -q hub 2>/dev/null || true)
if [ -z "$running" ] && ! port_free "$PORT"; then
    die "port $PORT is taken by another program; choose a free one, e.g. RDTLAB_HUB_PORT=$((PORT + 1)) make hub"
fi
if ! out=$(compose up -d --no-build 2>&1); then
    die "docker compose up failed: $(echo "$out" | grep -v '^\s*$' | tail -n 1)"
fi
hub_ip=$(docker inspect -f '{{(index .NetworkSettings.Networks "rdtlab-hub").IPAddress}}' rdtlab-hub)
firewall_on "$hub_ip"

# The hub answers, then the admin's account (NativeAuthenticator's sign-up; the admin
# is approved at once), made the first time.
URL="http://127.0.0.1:$PORT"
PYTHONPATH="$HERE/../.." python3 -m rdtlab.hub.signin "$URL" "$ADMIN" "$RDTLAB_ADMIN_PASSWORD" ||
    { docker logs --tail 5 rdtlab-hub >&2; die "the hub did not start, or its admin could not sign in (its last lines are above)"; }
say "JupyterHub is ready: $URL/hub/  (admin: $ADMIN, password in $STATE/secrets.env)"
