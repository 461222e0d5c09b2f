#!/usr/bin/env bash
# Makes (once) and caches the Debian 12 arm64 sysroot the arm64 cross build
# links against: Debian's arm64 DPDK 22.11, yaml-cpp, GoogleTest, libpcap,
# libstdc++ and glibc, with their dependencies.
#
#   deploy/sysroot-arm64.sh [--print-cross-file FILE]
#
# UFAB_SYSROOT=DIR   where (default /var/cache/ufab/sysroot-arm64-bookworm)
# UFAB_DEBIAN_MIRROR (default http://deb.debian.org/debian)
#
# Why a sysroot and not multiarch: libyaml-cpp-dev (and others) cannot be
# co-installed for amd64 and arm64. Why mmdebstrap's `extract` variant: it
# resolves and unpacks the packages without running any arm64 program (no
# maintainer scripts), so it needs neither binfmt_misc nor qemu; debootstrap
# --foreign would need a --second-stage under qemu through binfmt_misc, which
# is not mounted on these VMs. qemu-user-static runs the tests afterwards.
# The sysroot is reused while its package list (the stamp) is unchanged.
set -euo pipefail

SYSROOT="${UFAB_SYSROOT:-/var/cache/ufab/sysroot-arm64-bookworm}"
MIRROR="${UFAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
PACKAGES="libc6-dev,libstdc++-12-dev,libgcc-12-dev,libdpdk-dev,libyaml-cpp-dev,libgtest-dev,libgmock-dev,libpcap-dev,nlohmann-json3-dev"
STAMP="$SYSROOT/.ufab-sysroot"
WANT="$SUITE $PACKAGES"

die() { printf 'sysroot-arm64: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'sysroot-arm64: %s\n' "$*" >&2; }

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  log "reusing $SYSROOT"
else
  command -v mmdebstrap >/dev/null ||
    die "mmdebstrap is not installed: apt-get install mmdebstrap (the arm64 build also needs qemu-user-static g++-aarch64-linux-gnu)"
  [ "$(id -u)" -eq 0 ] || die "making the sysroot needs root (mmdebstrap --mode=root); run as root once, it is cached in $SYSROOT"
  log "making $SYSROOT ($SUITE arm64: ${PACKAGES//,/ }) from $MIRROR"
  mkdir -p "$(dirname "$SYSROOT")"
  tmp="$SYSROOT.tmp.$$"
  rm -rf "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  start=$(date +%s)
  if ! mmdebstrap --quiet --variant=extract --architectures=arm64 --mode=root \
      --include="$PACKAGES" "$SUITE" "$tmp" "$MIRROR" >&2; then
    die "mmdebstrap failed (is $MIRROR reachable? are arm64 packages on it?)"
  fi
  [ -f "$tmp/usr/lib/aarch64-linux-gnu/pkgconfig/libdpdk.pc" ] || die "the sysroot has no libdpdk.pc"
  echo "$WANT" > "$tmp/.ufab-sysroot"
  rm -rf "$SYSROOT"
  mv "$tmp" "$SYSROOT"
  trap - EXIT
  log "made $SYSROOT in $(( $(date +%s) - start )) s ($(du -sh "$SYSROOT" | cut -f1))"
fi

if [ "${1:-}" = "--print-cross-file" ]; then
  [ $# -ge 2 ] || die "--print-cross-file needs a FILE"
  printf "# written by deploy/sysroot-arm64.sh\n[constants]\nsysroot = '%s'\n" "$SYSROOT" > "$2"
fi
