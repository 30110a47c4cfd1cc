# The layers both images share: Debian with Python 3.11, iperf3, nftables and iproute2
# (the netns backend), the Python packages in /opt/venv and the link engine.
#
# BASE is rdtlab/base:bookworm, made from Debian's packages by docker/base.sh where no
# registry answers; `make images BASE=debian:bookworm-slim` uses Docker Hub's instead.
# Python packages come from build/docker/wheels, a wheelhouse docker/build.sh fills on
# the host: no network and no CA certificate is needed in the build, and the wheels
# stay in the `venv` stage, out of the final image.
# The link engine is the host's build (`make build`), copied: building it here would
# need crates.io over TLS and a newer Rust than bookworm's 1.63. It needs glibc >= 2.34.
ARG BASE=rdtlab/base:bookworm

FROM ${BASE} AS system
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv iperf3 iproute2 nftables procps tini \
 && rm -rf /var/lib/apt/lists/*

FROM system AS venv
COPY build/docker/wheels /tmp/wheels
COPY rdtlab/no_rfc3987_syntax.pth /tmp/
# Byte-compiled after the install, on every core (pip compiles file by file on one): the
# venv is read-only to the lab's user, so its .pyc files must be in the image.
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install -q --no-compile --no-index --find-links /tmp/wheels --no-cache-dir \
        -r /tmp/wheels/requirements.txt -c /tmp/wheels/constraints.txt \
 && cp /tmp/no_rfc3987_syntax.pth "$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/" \
 && /opt/venv/bin/python -m compileall -q -j 0 /opt/venv/lib >/dev/null

FROM system
COPY --from=venv /opt/venv /opt/venv
COPY harness/linkemu/target/release/linkemu /usr/local/bin/linkemu
# harness/procs.py starts programs through it (found beside RDTLAB_LINKEMU)
COPY harness/linkemu/target/release/rdtexec /usr/local/bin/rdtexec
COPY docker/netns-prep.sh /usr/local/lib/rdtlab/netns-prep.sh
ENV PATH=/opt/venv/bin:$PATH \
    RDTLAB_LINKEMU=/usr/local/bin/linkemu \
    LANG=C.UTF-8 \
    PYTHONUNBUFFERED=1
