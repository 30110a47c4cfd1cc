#!/bin/sh
# A student's server on the course hub (DockerSpawner starts it as root, with a few of
# Docker's default capabilities and no_new_privs):
#   1. a passwd entry for the student's uid (NB_UID and NB_USER, from the hub), the home
#      and the work volume handed over;
#   2. the command (jupyterhub-singleuser) as that uid, with no capability left and no
#      way to get one back.
# Every problem is one line starting "rdtlab-hub:" and exit status 1.
set -eu
say() { echo "rdtlab-hub: $*" >&2; }
die() { say "$*"; exit 1; }

NB_GID=${NB_GID:-100}
case "${NB_UID:-}" in ''|*[!0-9]*) die "NB_UID must be the student's uid, a number (the hub sets it)" ;; esac
[ "$NB_UID" -ge 1000 ] || die "NB_UID $NB_UID is a system uid; the hub gives students uids from 10000"
[ -n "${NB_USER:-}" ] || die "NB_USER must be the student's name (the hub sets it)"
case "$NB_USER" in *:*|*/*|-*|.*) die "the name '$NB_USER' cannot be an account" ;; esac
[ "$(id -u)" = 0 ] || die "start as root: the start hands the home to uid $NB_UID, then drops to it"

if ! grep -q "^$NB_USER:" /etc/passwd; then
    echo "$NB_USER:x:$NB_UID:$NB_GID::/home/jovyan:/bin/bash" >>/etc/passwd
fi
WORK=/home/jovyan/work
[ -d "$WORK" ] || die "$WORK is missing: the hub mounts the student's home volume there"
chown "$NB_UID:$NB_GID" /home/jovyan "$WORK"
find /home/jovyan -xdev -path "$WORK" -prune -o ! -user "$NB_UID" -exec chown -h "$NB_UID:$NB_GID" {} +

cd "$WORK"
exec rdtlab-drop-to "$NB_UID" "$NB_GID" "$NB_USER" /home/jovyan "$@"
