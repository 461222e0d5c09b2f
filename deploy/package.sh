#!/usr/bin/env bash
# Packages ufab-edge and ufab-core as a Debian package (deploy/ufab package).
#
#   deploy/package.sh [--target arm64] [--out DIR]
#
# Contents: /usr/bin/ufab-edge, /usr/bin/ufab-core (DPDK linked in statically,
# no crypto PMDs, no IPsec-mb: edge/dpdk/meson.build),
# /lib/systemd/system/ufab-edge@.service, /etc/ufab/ (configs: NAME.yaml and
# NAME.env per instance), /usr/share/ufab/examples/smartnic.{yaml,env} and
# the READMEs. Depends: the Debian packages that hold the binaries' NEEDED
# libraries (the names are the same on amd64 and arm64).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { printf 'package: error: %s\n' "$*" >&2; exit 1; }

TARGET=native OUT="$ROOT"
while [ $# -gt 0 ]; do
  case "$1" in
    --target) [ "${2:-}" = arm64 ] || die "unknown target '${2:-}' (available: arm64)"; TARGET=arm64; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a DIR"; OUT="$2"; shift 2 ;;
    *) die "usage: deploy/package.sh [--target arm64] [--out DIR]" ;;
  esac
done

if [ "$TARGET" = arm64 ]; then
  BUILD="${UFAB_BUILD_ARM64:-$ROOT/build-arm64}" ARCH=arm64 STRIP=aarch64-linux-gnu-strip
  "$ROOT/deploy/ufab" build --target arm64
else
  BUILD="${UFAB_BUILD:-$ROOT/build}" ARCH="$(dpkg --print-architecture)" STRIP=strip
  [ -f "$BUILD/build.ninja" ] || UFAB_BUILD="$BUILD" "$ROOT/deploy/ufab" build
  ninja -C "$BUILD" pipeline/ufab-edge p4/softswitch/ufab-core >&2
fi
for b in pipeline/ufab-edge p4/softswitch/ufab-core; do
  [ -x "$BUILD/$b" ] || die "$BUILD/$b was not built (libdpdk-dev and libyaml-cpp-dev found?)"
done
command -v dpkg-deb >/dev/null || die "dpkg-deb not found (a Debian system is needed to make the .deb)"

VERSION="$(sed -n "s/^ *version: '\([^']*\)'.*/\1/p" "$ROOT/meson.build" | head -1)"
PKG="ufab_${VERSION}_${ARCH}"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
D="$STAGE/$PKG"
install -d "$D/DEBIAN" "$D/usr/bin" "$D/lib/systemd/system" "$D/etc/ufab" "$D/usr/share/ufab/examples" "$D/usr/share/doc/ufab"
install -m 0755 "$BUILD/pipeline/ufab-edge" "$BUILD/p4/softswitch/ufab-core" "$D/usr/bin/"
"$STRIP" "$D/usr/bin/ufab-edge" "$D/usr/bin/ufab-core"
install -m 0644 "$ROOT/deploy/systemd/ufab-edge@.service" "$D/lib/systemd/system/"
install -m 0644 "$ROOT/deploy/examples/smartnic.yaml" "$ROOT/deploy/examples/smartnic.env" "$D/usr/share/ufab/examples/"
install -m 0644 "$ROOT/README.md" "$D/usr/share/doc/ufab/README.md"
install -m 0644 "$ROOT/edge/README.md" "$D/usr/share/doc/ufab/ufab-edge.md"

# Depends: the packages that ship the NEEDED sonames (looked up on this host,
# whose amd64 packages have the same names as the arm64 ones).
deps=()
MA="$(dpkg-architecture -qDEB_BUILD_MULTIARCH 2>/dev/null || gcc -print-multiarch)"
for so in $(readelf -d "$D/usr/bin/ufab-edge" "$D/usr/bin/ufab-core" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | sort -u); do
  case "$so" in
    ld-linux*) pkg=libc6 ;;  # the arm64 loader is NEEDED by name
    *) pkg="$(dpkg -S "*/$MA/$so" 2>/dev/null | grep -v -- '-cross' | head -1 | cut -d: -f1)" ;;
  esac
  [ -n "$pkg" ] || die "no Debian package found for $so (install it on this host)"
  deps+=("$pkg")
done
case " ${deps[*]} " in *IPSec*|*ipsec*|*librte*|*dpdk*) die "a DPDK or IPsec-mb package in Depends: ${deps[*]}" ;; esac
DEPENDS="$(printf '%s\n' "${deps[@]}" | sort -u | paste -sd, | sed 's/,/, /g')"

cat > "$D/DEBIAN/control" <<CONTROL
Package: ufab
Version: $VERSION
Architecture: $ARCH
Maintainer: ufab developers <ufab@localhost>
Section: net
Priority: optional
Depends: $DEPENDS
Description: uFAB predictable virtual fabric edge (ufab-edge) and software switch (ufab-core)
 DPDK 22.11 data plane of uFAB (SIGCOMM'22), statically linked with the
 drivers it uses (virtual devices, virtio, mlx5 for SmartNIC representors);
 no crypto PMD and no IPsec-mb. Run one edge per configuration with the
 systemd unit ufab-edge@NAME (/etc/ufab/NAME.yaml, /etc/ufab/NAME.env).
CONTROL
mkdir -p "$OUT"
dpkg-deb --root-owner-group --build "$D" "$OUT/$PKG.deb" >/dev/null
printf '%s\n' "$OUT/$PKG.deb"
