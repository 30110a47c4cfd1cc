# The students' image on the course hub: the lab image with JupyterHub's single-user
# server, started by the hub (DockerSpawner) as the student's own uid.
#   - nbgrader's Assignments tab and Validate on (students fetch and submit through the
#     exchange, mounted at /srv/nbgrader/exchange), the instructors' pages off;
#   - no assignment copied in at start: students fetch releases;
#   - no added capability: the local backend (the netns backend's SYS_ADMIN is never
#     given on a shared host).
ARG LAB=rdtlab/lab:latest
FROM ${LAB}

RUN jupyter server extension enable --sys-prefix nbgrader.server_extensions.assignment_list \
        nbgrader.server_extensions.validate_assignment >/dev/null 2>&1 \
 && jupyter labextension enable --level=sys_prefix @jupyter/nbgrader >/dev/null 2>&1 \
 && jupyter labextension disable --level=sys_prefix @jupyter/nbgrader:formgrader \
        @jupyter/nbgrader:create-assignment @jupyter/nbgrader:course-list \
        @jupyter/nbgrader:open-formgrader @jupyter/nbgrader:open-formgrader-local \
        @jupyter/nbgrader:open-create-assignment @jupyter/nbgrader:open-course-list >/dev/null 2>&1 \
 && rm -rf /opt/rdtlab/release

COPY docker/hub/student_nbgrader_config.py /etc/jupyter/nbgrader_config.py
COPY docker/hub/student-start.sh /usr/local/bin/rdtlab-hub-start
COPY docker/hub/drop-to.sh /usr/local/bin/rdtlab-drop-to
HEALTHCHECK NONE
ENTRYPOINT ["tini", "-g", "--", "rdtlab-hub-start"]
CMD ["jupyterhub-singleuser"]
