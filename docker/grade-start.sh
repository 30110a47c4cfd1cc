#!/bin/sh
# The grading image's entry point: `rdtlab grade ARGS`, as root (the sandbox switches
# each submission to a uid of its own), with the netns backend when the container has
# NET_ADMIN, SYS_ADMIN and /dev/net/tun.
set -eu
. /usr/local/lib/rdtlab/netns-prep.sh
if netns_possible; then
    problem=$(netns_prepare 0:0)
    [ -z "$problem" ] || echo "rdtlab-grader: $problem" >&2
else
    echo "rdtlab-grader: $NETNS_MISSING" >&2
fi
exec rdtlab grade "$@"
