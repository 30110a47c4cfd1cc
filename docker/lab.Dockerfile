# The students' lab: JupyterLab with rdtlab and the course's assignment releases.
#
# Jupyter Docker stacks' conventions: notebook user jovyan (uid 1000, gid 100), port
# 8888, a token (JUPYTER_TOKEN, else a random one, printed in the URL), student work in
# /home/jovyan/work (a volume). The container starts as root only to prepare that: with
# NET_ADMIN, SYS_ADMIN and /dev/net/tun it hands jovyan those two capabilities (ambient,
# nothing else) so the netns backend works; without them it says once that transfers
# use the local backend. The COMN reference programs are not in this image.
ARG KIT=rdtlab/kit:latest
FROM ${KIT}

ARG NB_USER=jovyan
ARG NB_UID=1000
ARG NB_GID=100
ENV NB_USER=${NB_USER} NB_UID=${NB_UID} NB_GID=${NB_GID} \
    RDTLAB_RELEASE=/opt/rdtlab/release
RUN useradd --create-home --uid "${NB_UID}" --gid "${NB_GID}" --shell /bin/bash "${NB_USER}" \
 && install -d -o "${NB_UID}" -g "${NB_GID}" "/home/${NB_USER}/work"

# The kit, installed in place (its code finds the engine and its files from the tree).
# The harness reads the wire formats from reference/, so that package comes too, but
# not reference/comn: the programs the students are asked to write. Of the assignments'
# folders, what a notebook imports (the registry, each one's sheet and spec: as
# grader/notebook/notebook_jail.py's ASSIGNMENT_VISIBLE), not the course's answers, notebook
# sources or batteries.
COPY pyproject.toml /opt/rdtlab/
COPY rdtlab /opt/rdtlab/rdtlab
COPY harness /opt/rdtlab/harness
COPY reference /opt/rdtlab/reference
COPY assignments /opt/rdtlab/assignments
RUN rm -rf /opt/rdtlab/reference/comn \
 && find /opt/rdtlab/assignments -mindepth 1 -maxdepth 1 ! -name __init__.py -type f -delete \
 && find /opt/rdtlab/assignments -mindepth 2 -type f ! -name __init__.py ! -name sheet.py ! -name spec.py -delete \
 && rm -rf /opt/rdtlab/assignments/source /opt/rdtlab/assignments/results_sheets \
 && pip install -q --no-deps --no-index --no-build-isolation --no-cache-dir --config-settings editable_mode=compat -e /opt/rdtlab \
 && rm -rf /opt/rdtlab/harness/linkemu /opt/rdtlab/build \
 && python3 -m compileall -q /opt/rdtlab

# A student's lab needs none of nbgrader's instructor pages (formgrader, exchange) nor
# language servers (leaving them out halves JupyterLab's start-up), nor news pop-ups.
RUN jupyter server extension disable --sys-prefix nbgrader.server_extensions.formgrader \
        nbgrader.server_extensions.assignment_list nbgrader.server_extensions.course_list \
        nbgrader.server_extensions.validate_assignment jupyter_lsp >/dev/null 2>&1 \
 && jupyter labextension disable --level=sys_prefix @jupyter/nbgrader \
        @jupyterlab/apputils-extension:announcements >/dev/null 2>&1

COPY docker/lab-start.sh /usr/local/bin/rdtlab-lab-start
# The assignments' student versions (nbgrader's release), made by docker/release.sh.
COPY build/docker/release /opt/rdtlab/release

EXPOSE 8888
WORKDIR /home/${NB_USER}/work
VOLUME /home/${NB_USER}/work
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s \
    CMD python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8888/api', timeout=2)" || exit 1
ENTRYPOINT ["tini", "-g", "--", "rdtlab-lab-start"]
