#!/bin/sh
# `make images`: rdtlab/kit, rdtlab/lab and rdtlab/grader, also where no registry answers.
#   BASE=rdtlab/base:bookworm (default) is built from Debian's packages (docker/base.sh);
#   BASE=debian:bookworm-slim (or any Debian bookworm image) is pulled instead.
# Steps that have not changed are skipped (the wheelhouse) or come from Docker's layer
# cache, so a second run takes seconds. Legacy builder (DOCKER_BUILDKIT=0): what
# Debian's docker.io has, and all the Dockerfiles need.
#
# Two light parts can run on their own, so `make test` makes them beside its first pass
# (tests/passes.sh; BENCHMARKS.md, "make test's Docker images"):
#   docker/build.sh --base  the Docker engine, the base image and the kit's Debian layer
#                           (no venv, no link engine)
#   docker/build.sh --host  the wheelhouse and the assignments' releases (the host's venv,
#                           no Docker)
set -eu
cd "$(dirname "$0")/.."
BASE=${BASE:-rdtlab/base:bookworm}
TAG=${TAG:-latest}
PY=${PY:-.venv/bin/python}
WHEELS=build/docker/wheels
export DOCKER_BUILDKIT=0

t0=$(date +%s)
step() { echo "== $* ($(( $(date +%s) - t0 )) s)" >&2; }

part=all
case "${1:-}" in
    --base) part=base ;;
    --host) part=host ;;
    "") ;;
    *) echo "docker/build.sh: unknown argument $1 (give none, --base or --host)" >&2; exit 2 ;;
esac
mkdir -p build/docker

base_image() {
    [ "$BASE" != rdtlab/base:bookworm ] || docker/base.sh "$BASE"
}

debian_layer() {   # untagged: the kit's build finds it in the layer cache
    step "the kit's Debian layer"
    if ! docker build -q --force-rm --target system -f docker/kit.Dockerfile --build-arg "BASE=$BASE" . \
            >build/docker/build-debian.log 2>&1; then
        echo "docker/build.sh: the kit's Debian layer failed: $(grep -v '^\s*$' build/docker/build-debian.log | tail -n 1) (log: build/docker/build-debian.log)" >&2
        exit 1
    fi
}

host_parts() {
    step "wheelhouse $WHEELS"
    # Wheels for the images' Python (Debian bookworm's 3.11.2 on glibc 2.36), not the host's:
    # some current packages need a newer 3.11 than bookworm has. The packages the project
    # names are pinned to the host venv's versions (the ones its tests ran).
    "$PY" docker/requirements.py pyproject.toml >build/docker/requirements.txt
    "$PY" -m pip freeze --exclude-editable | "$PY" docker/requirements.py --pins build/docker/requirements.txt >build/docker/constraints.txt
    stamp=$(cat build/docker/requirements.txt build/docker/constraints.txt | sha256sum | cut -c1-16)
    if [ "$(cat "$WHEELS/.stamp" 2>/dev/null)" != "$stamp" ]; then
        rm -rf "$WHEELS" && mkdir -p "$WHEELS"
        cp build/docker/requirements.txt build/docker/constraints.txt "$WHEELS"/
        platforms="--platform manylinux2014_x86_64"
        for v in $(seq 17 36); do platforms="$platforms --platform manylinux_2_${v}_x86_64"; done
        # shellcheck disable=SC2086
        "$PY" -m pip download -q --dest "$WHEELS" --only-binary=:all: --python-version 3.11.2 \
            --implementation cp $platforms -r "$WHEELS/requirements.txt" -c "$WHEELS/constraints.txt"
        echo "$stamp" >"$WHEELS/.stamp"
    fi
    step "assignment releases"
    PY=$PY docker/release.sh
}

build() {   # build NAME DOCKERFILE ARGS...
    name=$1 file=$2; shift 2
    log=build/docker/build-$(basename "${name%:*}").log
    step "image $name"
    if ! docker build -q --force-rm -f "$file" "$@" -t "$name" . >"$log" 2>&1; then
        echo "docker/build.sh: building $name failed: $(grep -v '^\s*$' "$log" | tail -n 1) (log: $log)" >&2
        exit 1
    fi
}

case $part in
    base)
        docker/engine.sh
        base_image
        debian_layer
        step "done"
        exit 0 ;;
    host)
        host_parts
        step "done"
        exit 0 ;;
esac

for bin in linkemu rdtexec; do
    [ -x harness/linkemu/target/release/$bin ] || { echo "docker/build.sh: no harness/linkemu/target/release/$bin; run make build first" >&2; exit 1; }
done
docker/engine.sh
# The base image (debootstrap: mostly downloads) is made beside the wheelhouse and the
# releases (pip and nbgrader on the host), and waited for before the first image.
base= lab=
trap 'for p in $base $lab; do wait "$p" || true; done' EXIT    # a failure below leaves no build running
if [ "$BASE" = rdtlab/base:bookworm ] && ! docker image inspect "$BASE" >/dev/null 2>&1; then
    step "base image $BASE (beside the wheelhouse and the releases)"
    base_image &
    base=$!
fi
host_parts
if [ -n "$base" ]; then
    wait "$base" || { base=; echo "docker/build.sh: the base image $BASE was not built (above)" >&2; exit 1; }
    base=
fi

build "rdtlab/kit:$TAG" docker/kit.Dockerfile --build-arg "BASE=$BASE"
# the lab and the grader both start from the kit: side by side
build "rdtlab/lab:$TAG" docker/lab.Dockerfile --build-arg "KIT=rdtlab/kit:$TAG" &
lab=$!
if [ -f docker/grader.Dockerfile ]; then
    build "rdtlab/grader:$TAG" docker/grader.Dockerfile --build-arg "KIT=rdtlab/kit:$TAG"
fi
wait "$lab" || { lab=; exit 1; }
lab=
step "done"
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep "^rdtlab/.*:$TAG " >&2
