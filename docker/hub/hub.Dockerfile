# The course's JupyterHub (docker/hub/compose.yaml): JupyterHub with DockerSpawner,
# NativeAuthenticator (LTI 1.3's authenticator beside it), the idle culler and the
# grading service, behind configurable-http-proxy on Debian's Node.
# The Python wheels (docker/hub/constraints.txt) and the proxy's npm modules
# (docker/hub/chp/) are fetched on the host by docker/hub/build.sh: nothing here reaches
# PyPI or npm, and the wheels stay in the first stage.
ARG BASE=rdtlab/base:bookworm

FROM ${BASE} AS packages
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
COPY build/docker/hub/wheels /tmp/wheels
RUN python3 -m venv /opt/hub \
 && /opt/hub/bin/pip install -q --no-index --find-links /tmp/wheels --no-cache-dir \
        -r /tmp/wheels/requirements.txt -c /tmp/wheels/constraints.txt

FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 nodejs tini \
 && rm -rf /var/lib/apt/lists/*
COPY --from=packages /opt/hub /opt/hub
COPY build/docker/hub/npm/node_modules /opt/chp/node_modules
RUN ln -s /opt/chp/node_modules/configurable-http-proxy/bin/configurable-http-proxy /usr/local/bin/configurable-http-proxy
COPY docker/hub/jupyterhub_config.py docker/hub/settings.toml docker/hub/grading_service.py /srv/jupyterhub/
COPY rdtlab/hub/users.py /srv/jupyterhub/rdtlab_hub_users.py
ENV PATH=/opt/hub/bin:$PATH PYTHONPATH=/srv/jupyterhub LANG=C.UTF-8 PYTHONUNBUFFERED=1
WORKDIR /srv/jupyterhub/data
EXPOSE 8000
ENTRYPOINT ["tini", "--"]
CMD ["jupyterhub", "-f", "/srv/jupyterhub/jupyterhub_config.py"]
