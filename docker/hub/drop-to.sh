#!/bin/sh
# rdtlab-drop-to UID GID NAME HOME COMMAND...: the last step of the hub's start scripts,
# once their root work is done: COMMAND as UID:GID, with no supplementary group, no
# capability left and no way to get one back (empty inheritable and bounding sets,
# no_new_privs), in an environment that names NAME and HOME.
set -eu
[ $# -ge 5 ] || { echo "rdtlab-drop-to: usage: rdtlab-drop-to UID GID NAME HOME COMMAND..." >&2; exit 2; }
uid=$1 gid=$2 name=$3 home=$4
shift 4
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --bounding-set=-all \
    --no-new-privs -- env HOME="$home" USER="$name" LOGNAME="$name" SHELL=/bin/bash "$@"
