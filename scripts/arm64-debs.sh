#!/usr/bin/env bash
# Debian's arm64 packages that the arm64 release links against and the emulated Pi installs
# (docs/board.md, "The real libpcsclite"): downloaded with this machine's apt, never installed here.
#
#   bash scripts/arm64-debs.sh [DIR]     (default build/cache/debs-arm64)
#
# libpcsclite1 and libpcsclite-dev: nfc-pcsc's binding is compiled with the arm64 headers and linked
# against the arm64 library (scripts/release.sh); pcscd and the libraries it needs: the emulated Pi runs the
# board's PC/SC daemon under qemu (test/board/arm64.test.ts).
# The arm64 package lists go to a directory of their own under DIR (apt's options below), so this
# machine's apt configuration is not changed: no `dpkg --add-architecture`, and the next `apt-get update`
# or `apt-get install` here fetches and sees what it did before. Quick and offline when every .deb is there.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$repo/build/cache/debs-arm64}"
packages=(libpcsclite1 libpcsclite-dev pcscd libsystemd0 libudev1 libcap2 libgcrypt20 libgpg-error0 liblz4-1
  liblzma5 libzstd1)

have_all() {
  for p in "${packages[@]}"; do compgen -G "$dir/${p}_*_arm64.deb" >/dev/null || return 1; done
}
if have_all; then exit 0; fi

mkdir -p "$dir/apt-lists/partial"
apt_opts=(
  -q -o "Dir::State::Lists=$dir/apt-lists" -o "Dir::State::status=/dev/null"
  -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
  -o "APT::Architecture=arm64" -o "APT::Architectures::=arm64"
)
# apt drops to its _apt user to download, who cannot write into a root-owned work directory.
[ "$(id -u)" != 0 ] || apt_opts+=(-o "APT::Sandbox::User=root")
echo "arm64-debs: apt-get update (arm64 package lists, in $dir/apt-lists)"
apt-get "${apt_opts[@]}" update >"$dir/apt-update.log" 2>&1 || {
  cat "$dir/apt-update.log" >&2
  echo "arm64-debs: the arm64 package lists could not be fetched (apt-get update above)" >&2
  exit 1
}
(cd "$dir" && apt-get "${apt_opts[@]}" download "${packages[@]/%/:arm64}")
have_all || { echo "arm64-debs: ${packages[*]} (arm64) not all downloaded to $dir" >&2; exit 1; }
ls "$dir"/*.deb
