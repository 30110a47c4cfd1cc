#!/bin/sh
# The course hub's images, over `make images`' rdtlab/lab and rdtlab/grader:
#   rdtlab/hub         JupyterHub, DockerSpawner, the authenticators, the culler, the proxy
#   rdtlab/lab-hub     a student's server (the lab image with the single-user server)
#   rdtlab/grader-hub  the grader account's server (the grading image with the formgrader)
# The hub's wheels (constraints.txt) and the proxy's npm modules (chp/package-lock.json)
# are fetched on the host, never from inside a build. Unchanged steps are skipped or come
# from Docker's layer cache.
#   docker/hub/build.sh          the images
#   docker/hub/build.sh --lock   remake constraints.txt from requirements.txt (then build)
set -eu
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
BASE=${BASE:-rdtlab/base:bookworm}
TAG=${TAG:-latest}
OUT=build/docker/hub
export DOCKER_BUILDKIT=0
say() { echo "docker/hub/build.sh: $*" >&2; }

for image in "$BASE" "rdtlab/lab:$TAG" "rdtlab/grader:$TAG"; do
    docker image inspect "$image" >/dev/null 2>&1 || { say "no image $image; build it first with make images"; exit 1; }
done
mkdir -p "$OUT"

. docker/wheels.sh   # WHEELS_FOR_IMAGES: for the image's Python, not the host's
wheels() {   # wheels DEST [-c CONSTRAINTS]: the requirements' wheels into DEST
    dest=$1; shift
    # sdist-only packages (pure Python): built here into wheels first
    "$PY" -m pip wheel -q --no-deps -w "$dest" onetimepass "$@"
    # shellcheck disable=SC2086
    "$PY" -m pip download -q --dest "$dest" --find-links "$dest" $WHEELS_FOR_IMAGES \
        -r docker/hub/requirements.txt "$@"
}
if [ "${1:-}" = --lock ]; then
    rm -rf "$OUT/lock" && mkdir -p "$OUT/lock" && wheels "$OUT/lock"
    { sed -n '1,2p' docker/hub/constraints.txt
      ls "$OUT/lock" | sed -n 's/^\([^-]*\)-\([^-]*\)-.*\.whl$/\1==\2/p' | tr 'A-Z_' 'a-z-' | sort; } >"$OUT/constraints.txt"
    mv "$OUT/constraints.txt" docker/hub/constraints.txt
    say "docker/hub/constraints.txt remade"
fi
stamp=$(cat docker/hub/requirements.txt docker/hub/constraints.txt | sha256sum | cut -c1-16)
if [ "$(cat "$OUT/wheels/.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$OUT/wheels" && mkdir -p "$OUT/wheels"
    cp docker/hub/requirements.txt docker/hub/constraints.txt "$OUT/wheels/"
    wheels "$OUT/wheels" -c docker/hub/constraints.txt || { say "fetching the hub's wheels failed (above)"; exit 1; }
    echo "$stamp" >"$OUT/wheels/.stamp"
fi
stamp=$(sha256sum docker/hub/chp/package-lock.json | cut -c1-16)
if [ "$(cat "$OUT/npm/.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$OUT/npm" && mkdir -p "$OUT/npm"
    cp docker/hub/chp/package.json docker/hub/chp/package-lock.json "$OUT/npm/"
    (cd "$OUT/npm" && npm ci --omit=dev --no-audit --no-fund --loglevel=error >/dev/null) \
        || { say "npm ci of the proxy failed (above)"; exit 1; }
    echo "$stamp" >"$OUT/npm/.stamp"
fi

build() {   # build NAME DOCKERFILE ARGS...
    name=$1 file=$2; shift 2
    log="$OUT/build-$(basename "${name%:*}").log"
    docker build -q --force-rm -f "$file" "$@" -t "$name" . >"$log" 2>&1 \
        || { say "building $name failed: $(grep -v '^\s*$' "$log" | tail -n 1) (log: $log)"; exit 1; }
    say "$name"
}
build "rdtlab/hub:$TAG" docker/hub/hub.Dockerfile --build-arg "BASE=$BASE"
build "rdtlab/lab-hub:$TAG" docker/hub/lab-hub.Dockerfile --build-arg "LAB=rdtlab/lab:$TAG"
build "rdtlab/grader-hub:$TAG" docker/hub/grader-hub.Dockerfile --build-arg "GRADER=rdtlab/grader:$TAG"
