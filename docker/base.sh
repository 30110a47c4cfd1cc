#!/bin/sh
# Build the base image from Debian's packages, for machines where no registry can be
# reached (no `docker pull`): debootstrap a minimal bookworm, then `docker import` it.
# Skipped when the image already exists. Usage: docker/base.sh [IMAGE]
set -eu
IMAGE=${1:-rdtlab/base:bookworm}
SUITE=bookworm
# The host's own Debian mirror when it has one (a campus mirror or proxy), else Debian's.
MIRROR=${RDTLAB_DEBIAN_MIRROR:-$(grep -rhoE 'https?://[^ ]*/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | head -n 1 | tr -d ' ')}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "docker/base.sh: building $IMAGE with debootstrap needs root; run it as root, or pass a pullable base (make images BASE=debian:bookworm-slim)" >&2
    exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
    echo "installing debootstrap" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

ROOT=$(mktemp -d "${TMPDIR:-/tmp}/rdtlab-rootfs.XXXXXX")
trap 'rm -rf "$ROOT"' EXIT INT TERM
echo "debootstrap $SUITE from $MIRROR (about 30 s)" >&2
if ! debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1; then
    echo "docker/base.sh: debootstrap failed: $(grep -E '^[EW]:' "$ROOT.log" | tail -n 1); full log in $ROOT.log" >&2
    exit 1
fi
rm -f "$ROOT.log"
# What Debian's own docker images do: no docs, man pages or apt caches in the layers.
cat >"$ROOT/etc/dpkg/dpkg.cfg.d/docker-slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
CFG
cat >"$ROOT/etc/apt/apt.conf.d/docker-clean" <<'CFG'
APT::Install-Recommends "false";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };
CFG
rm -rf "$ROOT/var/cache/apt/archives/"*.deb "$ROOT/var/lib/apt/lists/"* "$ROOT/usr/share/doc" "$ROOT/usr/share/man"
printf 'deb %s %s main\ndeb %s %s-updates main\n' "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" >"$ROOT/etc/apt/sources.list"
tar -C "$ROOT" -c . | docker import -c 'CMD ["/bin/bash"]' -c 'ENV LANG=C.UTF-8' - "$IMAGE" >/dev/null
echo "built $IMAGE" >&2
