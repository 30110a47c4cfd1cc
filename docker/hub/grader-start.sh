#!/bin/sh
# The grader account's server on the course hub. As root, with a few of Docker's
# default capabilities and no_new_privs:
#   1. the course folder (a volume): the kit's course copied in once (nbgrader_config.py
#      and source/), owned by the grader account;
#   2. the exchange (a volume shared with every student): its root sticky and open
#      (students' submissions go into the course's inbound), the course's folder owned by
#      the grader account, so no student can make or change it;
#   3. the command (jupyterhub-singleuser) as the grader account, with no capability.
set -eu
say() { echo "rdtlab-hub-grader: $*" >&2; }
COURSE=/home/grader/course
EXCHANGE=/srv/nbgrader/exchange
UID_GID="$GRADER_UID:100"

[ -d "$COURSE" ] && [ -d "$EXCHANGE" ] || { say "mount the course volume at $COURSE and the exchange at $EXCHANGE"; exit 1; }
if [ ! -e "$COURSE/nbgrader_config.py" ]; then
    cp /opt/rdtlab/assignments/nbgrader_config.py "$COURSE/"
    cp -R /opt/rdtlab/assignments/source "$COURSE/source"
    find "$COURSE/source" \( -name __pycache__ -o -name .rdtlab -o -name .ipynb_checkpoints \) -prune -exec rm -rf {} +
    say "the course folder made from the kit's assignments ($(ls "$COURSE/source" | tr '\n' ' '))"
fi
chown -R "$UID_GID" "$COURSE"

chown root:root "$EXCHANGE"
chmod 1777 "$EXCHANGE"
install -d -o "$GRADER_UID" -g 100 -m 0755 "$EXCHANGE/$RDTLAB_COURSE_ID"
chown "$UID_GID" "$EXCHANGE/$RDTLAB_COURSE_ID"
chmod 0755 "$EXCHANGE/$RDTLAB_COURSE_ID"

cd "$COURSE"
exec rdtlab-drop-to "$GRADER_UID" 100 grader /home/grader "$@" --ServerApp.root_dir="$COURSE"
