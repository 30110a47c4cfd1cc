#!/bin/sh
# Make sure a Docker engine answers, as `make images` and the docker tests need one.
# As root: install Debian's docker.io (and docker-compose when there is no compose
# plugin) when missing, and start dockerd when no daemon runs. Otherwise: one line
# saying what to do, exit 1.
set -eu
LOG=${RDTLAB_DOCKERD_LOG:-/var/log/rdtlab-dockerd.log}

say() { echo "docker/engine.sh: $*" >&2; }
root() { [ "$(id -u)" = 0 ]; }

if ! command -v docker >/dev/null 2>&1 || ! command -v dockerd >/dev/null 2>&1; then
    if ! root; then
        say "no Docker engine here; install one (Debian: sudo apt-get install docker.io) and start it, then retry"
        exit 1
    fi
    echo "installing Debian's docker.io" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi

# Compose: the v2 plugin if there is one, else Debian's docker-compose (v1.29).
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null 2>&1 && root; then
    echo "installing Debian's docker-compose" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose >/dev/null
fi

docker info >/dev/null 2>&1 && exit 0

if ! root; then
    if [ -S /var/run/docker.sock ]; then
        say "the Docker daemon does not answer you; add yourself to the docker group (sudo usermod -aG docker \$USER, then log in again) or start it (sudo systemctl start docker)"
    else
        say "the Docker daemon is not running; start it (sudo systemctl start docker) and retry"
    fi
    exit 1
fi

if ! pgrep -x dockerd >/dev/null 2>&1; then
    # No systemd in CI containers and VMs like this one: start the daemon directly.
    if command -v systemctl >/dev/null 2>&1 && systemctl start docker >/dev/null 2>&1; then :; else
        echo "starting dockerd (log: $LOG)" >&2
        # without the caller's other descriptors: a daemon holding a `flock` on a lock file
        # or a pipe a CI runner reads would keep that lock or that pipe open for good
        nohup dockerd >"$LOG" 2>&1 </dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
    fi
fi
i=0
until docker info >/dev/null 2>&1; do
    i=$((i + 1))
    if [ "$i" -ge 60 ]; then
        say "dockerd did not answer within 30 s; see $LOG (last line: $(tail -n 1 "$LOG" 2>/dev/null))"
        exit 1
    fi
    sleep 0.5
done
