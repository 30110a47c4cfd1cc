#!/bin/sh
# The lab container's entry point (runs as root, then as the notebook user).
#   1. the student's work folder: writable by the notebook user, the assignments copied
#      into it once (never over the student's files);
#   2. the backend: with NET_ADMIN, SYS_ADMIN and /dev/net/tun the notebook user gets
#      those two capabilities (ambient) and the netns backend works; else one line says
#      transfers use the local backend;
#   3. JupyterLab on port 8888 with a token; once it answers, one line with the URL.
# Every problem is one line starting "rdtlab-lab:" with what to do, and exit status 1.
set -eu
NB_USER=${NB_USER:-jovyan}
NB_UID=${NB_UID:-1000}
NB_GID=${NB_GID:-100}
WORK=/home/$NB_USER/work
RELEASE=${RDTLAB_RELEASE:-/opt/rdtlab/release}
HOST_PORT=${RDTLAB_PORT:-8888}

say() { echo "rdtlab-lab: $*"; }
die() { say "$*" >&2; exit 1; }

if [ "$(id -u)" = 0 ]; then
    as_user() { setpriv --reuid="$NB_UID" --regid="$NB_GID" --init-groups -- "$@"; }
else
    as_user() { "$@"; }
fi

# -- 1. the work folder ------------------------------------------------------------
[ -d "$WORK" ] || die "$WORK is missing; mount a volume or a folder there (docker/compose.yaml does)"
if ! as_user test -w "$WORK"; then
    if [ "$(id -u)" = 0 ] && [ "${CHOWN_WORK:-no}" = yes ]; then
        chown -R "$NB_UID:$NB_GID" "$WORK"
    else
        die "$WORK (owner uid $(stat -c %u "$WORK")) is not writable by $NB_USER (uid $NB_UID); start with -e CHOWN_WORK=yes to hand it over, or mount a folder you own"
    fi
fi
for assignment in "$RELEASE"/*; do
    [ -d "$assignment" ] || continue
    name=$(basename "$assignment")
    if [ ! -e "$WORK/$name" ]; then
        as_user cp -R "$assignment" "$WORK/$name"
        say "copied the assignment '$name' into your work folder"
    fi
done

# -- 2. the backend ----------------------------------------------------------------
. /usr/local/lib/rdtlab/netns-prep.sh
ambient=""
if [ "$(id -u)" = 0 ] && netns_possible; then
    problem=$(netns_prepare "$NB_UID:$NB_GID")
    [ -z "$problem" ] || say "$problem"
    ambient="--inh-caps=+net_admin,+sys_admin --ambient-caps=+net_admin,+sys_admin"
else
    say "$NETNS_MISSING"
fi

# -- 3. JupyterLab -----------------------------------------------------------------
if [ -z "${JUPYTER_TOKEN:-}" ]; then
    JUPYTER_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
fi
export JUPYTER_TOKEN
cd "$WORK"
# shellcheck disable=SC2086  # $ambient is a list of options
if [ "$(id -u)" = 0 ]; then
    env HOME="/home/$NB_USER" USER="$NB_USER" LOGNAME="$NB_USER" SHELL=/bin/bash \
        setpriv --reuid="$NB_UID" --regid="$NB_GID" --init-groups $ambient -- \
        jupyter lab --ip=0.0.0.0 --port=8888 --no-browser --ServerApp.root_dir="$WORK" "$@" &
else
    jupyter lab --ip=0.0.0.0 --port=8888 --no-browser --ServerApp.root_dir="$WORK" "$@" &
fi
server=$!
trap 'kill -TERM "$server" 2>/dev/null' TERM INT
python3 - "$server" <<'PY' && say "JupyterLab is ready: open http://127.0.0.1:$HOST_PORT/lab?token=$JUPYTER_TOKEN"
import os, sys, time, urllib.request
pid = int(sys.argv[1])
while True:
    try:
        urllib.request.urlopen("http://127.0.0.1:8888/api", timeout=1)
        break
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            sys.exit(1)
        time.sleep(0.1)
PY
wait "$server"
