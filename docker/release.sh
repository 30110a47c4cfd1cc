#!/bin/sh
# The assignments' student versions for the lab image, in build/docker/release/NAME/.
# With nbgrader: `nbgrader generate_assignment` on a copy of the course (assignments/),
# so the course folder gets no release/ or gradebook.db from an image build. Without
# nbgrader: the source folders as they are. No assignments/: an empty release.
set -eu
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
PY=$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")
OUT=build/docker/release
COURSE=build/docker/course
STAMP=build/docker/release.stamp
# The course as an instructor keeps it, without what nbgrader generates.
course_tar() {
    tar -C assignments --sort=name --mtime=@0 --owner=0 --group=0 --exclude=./release \
        --exclude=./submitted --exclude=./autograded --exclude=./feedback --exclude=./gradebook.db \
        --exclude=__pycache__ --exclude=.ipynb_checkpoints -c .
}
[ -d assignments/source ] || { rm -rf "$OUT" "$STAMP"; mkdir -p "$OUT"; echo "release: no assignments/source, the lab image gets no assignment" >&2; exit 0; }
# nbgrader takes a minute on a busy machine: skip it when the course has not changed.
stamp=$(course_tar | sha256sum | cut -c1-16)
if [ -d "$OUT" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
rm -rf "$OUT" "$COURSE" "$STAMP"
mkdir -p "$OUT"

if ! "$PY" -c 'import nbgrader' 2>/dev/null; then
    echo "release: nbgrader is not installed; the lab image gets the source notebooks, solutions included (install nbgrader to release them)" >&2
    cp -R assignments/source/. "$OUT"/
    echo "$stamp" >"$STAMP"
    exit 0
fi
mkdir -p "$COURSE"
# nbgrader runs `alembic` from PATH: the venv's.
PATH="$(dirname "$PY"):$PATH"
course_tar | tar -C "$COURSE" -x
for src in "$COURSE"/source/*/; do
    name=$(basename "$src")
    if ! (cd "$COURSE" && "$PY" -m nbgrader generate_assignment "$name" --force \
            --CourseDirectory.root=. --log-level=ERROR >generate.log 2>&1); then
        echo "release: nbgrader generate_assignment $name failed: $(grep -v '^\s*$' "$COURSE/generate.log" | tail -n 1)" >&2
        exit 1
    fi
    cp -R "$COURSE/release/$name" "$OUT/$name"
done
echo "$stamp" >"$STAMP"
echo "release: $(ls "$OUT" | tr '\n' ' ')from nbgrader generate_assignment" >&2
