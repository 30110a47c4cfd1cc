#!/bin/sh
# `make images`: rdtlab/kit, rdtlab/lab and rdtlab/grader, also where no registry answers.
#   BASE=rdtlab/base:bookworm (default) is built from Debian's packages (docker/base.sh);
#   BASE=debian:bookworm-slim (or any Debian bookworm image) is pulled instead.
# Steps that have not changed are skipped (the wheelhouse) or come from Docker's layer
# cache, so a second run takes seconds. Legacy builder (DOCKER_BUILDKIT=0): what
# Debian's docker.io has, and all the Dockerfiles need.
#
# `docker/build.sh --light` makes only the parts that can yield the CPU: the base image
# and the kit's Debian layer (debootstrap and apt, mostly downloads) beside the
# wheelhouse and the releases (pip and nbgrader on the host), then the kit's Python
# packages (a container at the lowest CPU weight); `make test` runs it beside its first
# pass (tests/passes.sh; BENCHMARKS.md, "The test suite"), and a whole build
# starts with it. What is left (the kit, the lab, the grader) is COPY and small layers.
set -eu
cd "$(dirname "$0")/.."
BASE=${BASE:-rdtlab/base:bookworm}
TAG=${TAG:-latest}
PY=${PY:-.venv/bin/python}
WHEELS=build/docker/wheels
export DOCKER_BUILDKIT=0

t0=$(date +%s)
step() { echo "== $* ($(( $(date +%s) - t0 )) s)" >&2; }

light=
case "${1:-}" in
    --light) light=1 ;;
    "") ;;
    *) echo "docker/build.sh: unknown argument $1 (give none, or --light)" >&2; exit 2 ;;
esac
mkdir -p build/docker

failed() {   # failed WHAT LOG: one line naming what failed, the log's last, then exit
    echo "docker/build.sh: $1 failed: $(grep -v '^\s*$' "$2" | tail -n 1) (log: $2)" >&2
    exit 1
}

docker_build() {   # docker_build WHAT LOG ARGS...: one image or layer, its log kept
    what=$1 log=$2; shift 2
    docker build -q --force-rm "$@" . >"$log" 2>&1 || failed "$what" "$log"
}

debian_parts() {   # the Debian layer untagged: the kit's build finds it in the layer cache
    [ "$BASE" != rdtlab/base:bookworm ] || docker/base.sh "$BASE"
    step "the kit's Debian layer"
    docker_build "the kit's Debian layer" build/docker/build-debian.log \
        --target system -f docker/kit.Dockerfile --build-arg "BASE=$BASE" --iidfile build/docker/system.id
}

# The kit's Python packages: /opt/venv installed over the kit's Debian layer in a
# container that has the wheelhouse mounted read-only, then committed as
# rdtlab/kit-packages, tagged by what went in (the Debian layer, the wheels, these
# commands), so an unchanged one is not made again. At the lowest CPU weight
# (--cpu-shares 2 of the usual 1024: what `nice` cannot reach in the daemon's
# containers), so beside make test's first pass it takes only idle CPU. The venv is
# byte-compiled after the install, on every core (pip compiles file by file on one): it
# is read-only to the lab's user, so its .pyc files must be in the image.
PACKAGES_SH='python3 -m venv /opt/venv
/opt/venv/bin/pip install -q --no-compile --no-index --find-links /tmp/wheels --no-cache-dir \
    -r /tmp/wheels/requirements.txt -c /tmp/wheels/constraints.txt
cp /tmp/no_rfc3987_syntax.pth "$(/opt/venv/bin/python -c "import sysconfig; print(sysconfig.get_path(\"purelib\"))")/"
/opt/venv/bin/python -m compileall -q -j 0 /opt/venv/lib >/dev/null'
python_packages() {
    step "the kit's Python packages"
    system=$(cat build/docker/system.id)     # written by debian_parts' build
    key=$(printf '%s\n%s\n%s\n' "$system" "$(cat "$WHEELS/.stamp")" "$PACKAGES_SH" | cat - rdtlab/no_rfc3987_syntax.pth |
          sha256sum | cut -c1-16)
    if ! docker image inspect "rdtlab/kit-packages:$key" >/dev/null 2>&1; then
        container=rdtlab-packages-$$
        # --sig-proxy=false: an interrupted build stops here at once (then finish removes it)
        log=build/docker/build-packages.log
        docker run --name "$container" --sig-proxy=false --cpu-shares 2 --network none \
            -v "$PWD/$WHEELS:/tmp/wheels:ro" -v "$PWD/rdtlab/no_rfc3987_syntax.pth:/tmp/no_rfc3987_syntax.pth:ro" \
            "$system" sh -ec "$PACKAGES_SH" >"$log" 2>&1 &&
        docker commit -c 'CMD ["/bin/bash"]' "$container" "rdtlab/kit-packages:$key" >>"$log" 2>&1 ||
            failed "the kit's Python packages" "$log"
        docker rm -f "$container" >/dev/null 2>&1
        container=
    fi
    docker tag "rdtlab/kit-packages:$key" rdtlab/kit-packages:latest
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
        . docker/wheels.sh
        # shellcheck disable=SC2086
        "$PY" -m pip download -q --dest "$WHEELS" $WHEELS_FOR_IMAGES \
            -r "$WHEELS/requirements.txt" -c "$WHEELS/constraints.txt"
        echo "$stamp" >"$WHEELS/.stamp"
    fi
    step "assignment releases"
    PY=$PY docker/release.sh
}

build() {   # build NAME DOCKERFILE ARGS...
    name=$1 file=$2; shift 2
    step "image $name"
    docker_build "building $name" "build/docker/build-$(basename "${name%:*}").log" -f "$file" "$@" -t "$name"
}

if [ -z "$light" ]; then
    for bin in linkemu rdtexec; do
        [ -x harness/linkemu/target/release/$bin ] || { echo "docker/build.sh: no harness/linkemu/target/release/$bin; run make build first" >&2; exit 1; }
    done
fi
docker/engine.sh
# The light parts: the Debian ones (mostly downloads) beside the host's (pip, nbgrader).
debian= lab= container=
finish() {   # a failure or an interruption leaves no build or container running
    [ -z "$container" ] || docker rm -f "$container" >/dev/null 2>&1
    for p in $debian $lab; do wait "$p" || true; done
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
debian_parts &
debian=$!
host_parts
wait "$debian" || { debian=; echo "docker/build.sh: the base image or the kit's Debian layer was not built (above)" >&2; exit 1; }
debian=
python_packages
if [ -n "$light" ]; then
    step "done"
    exit 0
fi

build "rdtlab/kit:$TAG" docker/kit.Dockerfile --build-arg "BASE=$BASE" --build-arg PACKAGES=rdtlab/kit-packages:latest
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
