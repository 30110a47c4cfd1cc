# Sourced by docker/build.sh and docker/hub/build.sh: pip's options for wheels the
# images' Python can install (Debian bookworm's 3.11.2 on glibc 2.36), not the host's.
WHEELS_FOR_IMAGES="--only-binary=:all: --python-version 3.11.2 --implementation cp --platform manylinux2014_x86_64"
for v in $(seq 17 36); do WHEELS_FOR_IMAGES="$WHEELS_FOR_IMAGES --platform manylinux_2_${v}_x86_64"; done
