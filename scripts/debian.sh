#!/usr/bin/env bash
# Builds a Debian package from a release tree with dpkg-deb (docs/board.md, "Packages"). Called by
# scripts/release.sh:
#
#   scripts/debian.sh unit|fleet TREE ARCH VERSION OUTDIR
#
# unit  -> vendd_<version>_<arch>.deb: the release in /usr/lib/vendd, /usr/bin/vendd, the units of systemd/,
#          /etc/vendd/config.yaml (a conffile); maintainer scripts from packaging/debian/vendd.*.
# fleet -> vendd-fleet_<version>_<arch>.deb: the fleet server (and the emulator as a tool) in
#          /usr/lib/vendd-fleet, /usr/bin/vendd-fleet, vendd-fleet.service, /etc/vendd-fleet/fleet.yaml.
set -euo pipefail

flavour="$1" tree="$2" arch="$3" version="$4" out="$5"
repo="$(cd "$(dirname "$0")/.." && pwd)"
tpl="$repo/packaging/debian"
case "$flavour" in
  unit) pkg=vendd ;;
  fleet) pkg=vendd-fleet ;;
  *) echo "debian.sh: unit or fleet, not $flavour" >&2; exit 2 ;;
esac
stage="$(dirname "$tree")/deb-$pkg"
rm -rf "$stage"
umask 022
mkdir -p "$stage/DEBIAN" "$stage/usr/lib" "$stage/usr/bin" "$stage/lib/systemd/system" "$stage/usr/share/doc/$pkg" \
  "$stage/usr/share/lintian/overrides"
cp -a "$tree" "$stage/usr/lib/$pkg"
# Files 0644, directories and the program 0755, whatever the umask of the build was.
find "$stage/usr/lib/$pkg" -type d -exec chmod 0755 {} +
find "$stage/usr/lib/$pkg" -type f -exec chmod 0644 {} +
chmod 0755 "$stage/usr/lib/$pkg/dist/src/cli/main.js"

if [ "$pkg" = vendd ]; then
  # The units run /opt/vendd/current (a release bundle swaps that link); the package's release is its target
  # until a bundle brings another (postinst).
  printf '#!/bin/sh\nexec /usr/bin/node /opt/vendd/current/dist/src/cli/main.js "$@"\n' >"$stage/usr/bin/vendd"
  for u in vendd.service vendd-bundle.path vendd-bundle.service vendd-pull.service vendd-pull.timer vendd-console@.service; do
    sed -e 's#^\(Documentation=\).*#\1man:vendd(1) file:///usr/share/doc/vendd/README.Debian#' \
      -e 's#^\# vendd: the payment unit daemon. Install with scripts/install.sh.*#\# vendd: the payment unit daemon (Debian package vendd: docs/board.md).#' \
      "$repo/systemd/$u" >"$stage/lib/systemd/system/$u"
  done
  # The manual page from the option tables (src/cli/manPage.ts) and the Debian notes the units name.
  mkdir -p "$stage/usr/share/man/man1"
  node --input-type=module -e '
    const [url, version, date] = process.argv.slice(1);
    const { renderManPage } = await import(url);
    process.stdout.write(renderManPage(version, date));' \
    "file://$repo/dist/src/cli/manPage.js" "$version" "$(date -u -d "@${SOURCE_DATE_EPOCH:-0}" +%Y-%m-%d)" |
    gzip -9n >"$stage/usr/share/man/man1/vendd.1.gz"
  cp "$tpl/vendd.README.Debian" "$stage/usr/share/doc/vendd/README.Debian"
  mkdir -p "$stage/etc/vendd"
  cp "$repo/config/example.yaml" "$stage/etc/vendd/config.yaml"
  echo /etc/vendd/config.yaml >"$stage/DEBIAN/conffiles"
  desc="payment unit for vending machines (MDB cashless, wallet payments)
 vendd is the payment brain of a vending machine: MDB cashless over serial,
 wallet-app payments, QR/BLE/NFC check-in and an SQLite journal that ends
 every payment captured or cancelled exactly once. This package holds the
 unit's release built for this architecture (native modules included) and
 its systemd units; nothing is started or enabled on installation."
  depends="nodejs (>= 20.18.1), passwd"
  recommends="pcscd, libccid"
else
  printf '#!/bin/sh\nexec /usr/bin/node /usr/lib/vendd-fleet/dist/src/cli/main.js "$@"\n' >"$stage/usr/bin/vendd-fleet"
  cp "$repo/systemd/vendd-fleet.service" "$stage/lib/systemd/system/"
  mkdir -p "$stage/etc/vendd-fleet"
  # The minimal config that starts as it is (test/fleet/shipped-config.test.ts); the full example beside
  # the TLS proxy example (docs/fleet-server.md, test/fleet/tls-proxy.test.ts).
  cp "$repo/config/fleet.yaml" "$stage/etc/vendd-fleet/fleet.yaml"
  echo /etc/vendd-fleet/fleet.yaml >"$stage/DEBIAN/conffiles"
  mkdir -p "$stage/usr/share/doc/vendd-fleet/examples"
  cp "$repo/config/nginx-fleet.conf" "$repo/config/fleet.example.yaml" "$stage/usr/share/doc/vendd-fleet/examples/"
  desc="fleet server for vendd payment units
 The fleet server of vendd: unit enrolment, events, dashboard, reconciliation,
 plans and invoices, on SQLite or PostgreSQL. The payment service emulator
 comes with it as a tool (vendd-fleet emulator). Its systemd unit is
 installed, never started or enabled on installation."
  depends="nodejs (>= 20.18.1), passwd"
  recommends=""
fi
# The C and C++ libraries the native modules need: the newest symbol versions they use (readelf reads
# any CPU's ELF; dpkg-shlibdeps would need the target's libraries installed).
glibc="$(find "$stage/usr/lib/$pkg" -name '*.node' -exec readelf -V --wide {} + 2>/dev/null |
  grep -o 'GLIBC_2\.[0-9]*' | sort -uV | tail -1 | sed 's/GLIBC_//')"
depends="$depends, libc6 (>= ${glibc:-2.34})"
if find "$stage/usr/lib/$pkg" -name '*.node' -exec readelf -d {} + 2>/dev/null | grep 'libstdc++' >/dev/null; then
  depends="$depends, libstdc++6 (>= 12), libgcc-s1"
fi
chmod 0755 "$stage/usr/bin/$pkg"
chmod 0644 "$stage/lib/systemd/system/"* "$stage/etc/$pkg/"*
[ ! -d "$stage/usr/share/man" ] || find "$stage/usr/share/man" -type f -exec chmod 0644 {} +

cat >"$stage/usr/share/doc/$pkg/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: vendd
Source: vendd

Files: *
Copyright: the vendd authors
License: Expat
 The MIT License, and the licenses of the bundled modules in their own
 directories under /usr/lib/$pkg/node_modules.
 .
 Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software and associated documentation files (the "Software"), to deal
 in the Software without restriction, including without limitation the rights
 to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 copies of the Software, and to permit persons to whom the Software is
 furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in
 all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
 THE SOFTWARE.
EOF
date_rfc="$(date -R -u -d "@${SOURCE_DATE_EPOCH:-0}")"
printf '%s (%s) unstable; urgency=medium\n\n  * Release %s built for %s by scripts/release.sh.\n\n -- vendd maintainers <maintainers@vendd.example.org>  %s\n' \
  "$pkg" "$version" "$version" "$arch" "$date_rfc" | gzip -9n >"$stage/usr/share/doc/$pkg/changelog.Debian.gz"
cp "$tpl/lintian-overrides" "$stage/usr/share/lintian/overrides/$pkg"
find "$stage/usr/share/doc/$pkg" -type f -exec chmod 0644 {} +
chmod 0644 "$stage/usr/share/lintian/overrides/$pkg"
sed -i "s/^/$pkg: /" "$stage/usr/share/lintian/overrides/$pkg"

for s in postinst prerm postrm; do
  sed "s/@VERSION@/$version/g" "$tpl/$pkg.$s" >"$stage/DEBIAN/$s"
  chmod 0755 "$stage/DEBIAN/$s"
done
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums" "$stage/DEBIAN/conffiles"
{
  echo "Package: $pkg"
  echo "Version: $version"
  echo "Architecture: $arch"
  echo "Maintainer: vendd maintainers <maintainers@vendd.example.org>"
  echo "Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)"
  echo "Depends: $depends"
  [ -z "$recommends" ] || echo "Recommends: $recommends"
  echo "Section: misc"
  echo "Priority: optional"
  echo "Homepage: https://vendd.example.org/"
  echo "Description: $desc"
} >"$stage/DEBIAN/control"
deb="$out/${pkg}_${version}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb.tmp" >/dev/null
mv "$deb.tmp" "$deb"
echo "debian.sh: $(basename "$deb")"
