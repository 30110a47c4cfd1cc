# The layers both images share: Debian with Python 3.11, iperf3, nftables and iproute2
# (the netns backend), make, gcc, g++ and a headless JDK (students' programs in C, C++
# and Java, built in the lab and the grader: harness/resolver.py), bubblewrap (the
# grader's jail), the Python packages in /opt/venv and the link engine. Go and Rust are
# the grading image's only (docker/grader.Dockerfile): the lab stays under 1.5 GB.
#
# BASE is rdtlab/base:bookworm, made from Debian's packages by docker/base.sh where no
# registry answers; `make images BASE=debian:bookworm-slim` uses Docker Hub's instead.
# PACKAGES is the `system` stage below with /opt/venv installed, which docker/build.sh
# makes from the wheelhouse it fills on the host, mounted read-only into a container
# and committed: no network and no CA certificate in the build, no wheel in any layer,
# and no second copy of the 700 MB venv (a stage's COPY --from of it is slow).
# The link engine is the host's build (`make build`), copied: building it here would
# need crates.io over TLS and a newer Rust than bookworm's 1.63. It needs glibc >= 2.34.
ARG BASE=rdtlab/base:bookworm
ARG PACKAGES=rdtlab/kit-packages:latest

FROM ${BASE} AS system
# the JDK's post-install links its man pages: the minimal base has no man1 folder
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv iperf3 iproute2 nftables procps tini \
        bubblewrap make gcc g++ libc6-dev default-jdk-headless \
 && rm -rf /var/lib/apt/lists/*

FROM ${PACKAGES}
COPY harness/linkemu/target/release/linkemu /usr/local/bin/linkemu
# harness/procs.py starts programs through it (found beside RDTLAB_LINKEMU)
COPY harness/linkemu/target/release/rdtexec /usr/local/bin/rdtexec
COPY docker/netns-prep.sh /usr/local/lib/rdtlab/netns-prep.sh
# A terminal's login shell resets PATH (/etc/profile): the kit's venv first there too.
RUN printf 'case ":$PATH:" in *:/opt/venv/bin:*) ;; *) PATH=/opt/venv/bin:$PATH ;; esac\n' >/etc/profile.d/rdtlab.sh
ENV PATH=/opt/venv/bin:$PATH \
    RDTLAB_LINKEMU=/usr/local/bin/linkemu \
    LANG=C.UTF-8 \
    PYTHONUNBUFFERED=1
