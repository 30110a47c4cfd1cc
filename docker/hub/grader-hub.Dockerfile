# The grader account's server on the course hub (the compose service `grader`, an
# external JupyterHub service for the group instructors): the grading image's kit,
# nbgrader and the course, serving the formgrader as the unprivileged user `grader`.
# Grading itself runs in a grading container the hub's grading service starts
# (docker/hub/grading_service.py); this server has no privilege to run the jail.
ARG GRADER=rdtlab/grader:latest
FROM ${GRADER}

ARG GRADER_UID=2000
RUN useradd --create-home --uid "${GRADER_UID}" --gid 100 --shell /bin/bash grader \
 && printf '#!/bin/sh\nexec /opt/venv/bin/python3 -m rdtlab.hub.grade "$@"\n' >/usr/local/bin/rdtlab-hub-grade \
 && chmod +x /usr/local/bin/rdtlab-hub-grade
ENV GRADER_UID=${GRADER_UID}
COPY docker/hub/grader_nbgrader_config.py /etc/jupyter/nbgrader_config.py
COPY docker/hub/grader-start.sh /usr/local/bin/rdtlab-hub-grader
COPY docker/hub/drop-to.sh /usr/local/bin/rdtlab-drop-to
WORKDIR /home/grader/course
ENTRYPOINT ["tini", "-g", "--", "rdtlab-hub-grader"]
CMD ["jupyterhub-singleuser", "--ip=0.0.0.0", "--port=8888"]
