#!/usr/bin/env bash
# Builds a local base image for docker/Dockerfile from Debian's own packages, with no container
# registry: debootstrap a minimal Debian, import it, and install a Java 17 runtime and curl in it.
# For machines that reach Debian's mirrors but not Docker Hub (air-gapped build hosts, this
# repository's CI); everywhere else the Dockerfile's default base (eclipse-temurin) is the one to use.
#
#   docker/build-base-image.sh [--tag faro-base:bookworm] [--mirror URL] [--rebuild]
#   podman build --build-arg BASE_IMAGE=faro-base:bookworm -f docker/Dockerfile -t faro:dev .
#
# Needs root, debootstrap and podman (or docker: set CONTAINER_ENGINE). The image is built once:
# an existing tag is kept unless --rebuild. (deploy's systemd tests add systemd on top of it, in
# deploy/src/test/containers/systemd-host.Containerfile.)
set -euo pipefail

tag=faro-base:bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
rebuild=false
engine=${CONTAINER_ENGINE:-podman}
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag=$2; shift 2 ;;
    --mirror) mirror=$2; shift 2 ;;
    --rebuild) rebuild=true; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ "$rebuild" = false ] && "$engine" image exists "$tag" 2>/dev/null; then
  echo "$tag exists (--rebuild to build it again)"
  exit 0
fi
for tool in debootstrap "$engine"; do
  command -v "$tool" > /dev/null || { echo "$tool is not installed" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "debootstrap needs root" >&2; exit 1; }

rootfs=$(mktemp -d /var/tmp/faro-rootfs.XXXXXX)
cleanup() {
  umount "$rootfs/proc" 2> /dev/null || true
  rm -rf "$rootfs"
}
trap cleanup EXIT

packages=(openjdk-17-jre-headless curl ca-certificates)

echo "debootstrap: minbase bookworm from $mirror"
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" > "$rootfs.log" 2>&1 \
  || { tail -20 "$rootfs.log" >&2; exit 1; }
rm -f "$rootfs.log"
# The JRE's post-install scripts read /proc (the java alternatives, the certificates' keystore).
mount -t proc proc "$rootfs/proc"
chroot "$rootfs" /bin/sh -c "
  set -e
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends ${packages[*]}
  apt-get clean
  rm -rf /var/lib/apt/lists/*
" > "$rootfs.apt.log" 2>&1 || { tail -20 "$rootfs.apt.log" >&2; rm -f "$rootfs.apt.log"; exit 1; }
rm -f "$rootfs.apt.log"
umount "$rootfs/proc"

echo "importing as $tag"
tar -C "$rootfs" -c . | "$engine" import \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/bin/bash"]' \
  - "$tag" > /dev/null
echo "built $tag"
