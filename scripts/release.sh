#!/usr/bin/env bash
# Builds a unit's release for one CPU on this machine (docs/board.md, "Release"):
#
#   npm run release -- --arch arm64|amd64 [--out DIR]
#
# Outputs in DIR (default release/):
#   vendd-<version>-linux-<arch>.tar.gz  the unit's release, for `vendd bundle create --release`
#   vendd_<version>_<arch>.deb           the unit's Debian package
#   vendd-fleet_<version>_<arch>.deb     the fleet server's Debian package (with the emulator as a tool)
#
# How: `npm ci --ignore-scripts` of the locked dependencies for the target CPU into a work directory; the
# native modules compiled there by node-gyp for the target (`--arch`, the official Node's headers from the
# npm package node-linux-<arch>, Debian's cross compiler for arm64); the `vendd` command bundled by esbuild
# into one ESM file (scripts/releaseBundle.ts); the modules it loads at run time copied beside it without
# other platforms' prebuilds and build leftovers (scripts/releaseModules.ts); the packages by dpkg-deb
# (scripts/debian.sh). Needs: npm registry access, g++-aarch64-linux-gnu (arm64), python3, make, dpkg-deb.
# Run `npm run build` first (the npm script does).
set -euo pipefail

arch=""
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || { echo "release: --arch needs arm64 or amd64" >&2; exit 2; }; arch="$2"; shift 2 ;;
    --out) [ $# -ge 2 ] || { echo "release: --out needs a directory" >&2; exit 2; }; out="$2"; shift 2 ;;
    *) echo "release: unknown argument: $1 (usage: npm run release -- --arch arm64|amd64 [--out DIR])" >&2; exit 2 ;;
  esac
done
case "$arch" in
  arm64) npm_cpu=arm64; gnu=aarch64-linux-gnu ;;
  amd64) npm_cpu=x64; gnu=x86_64-linux-gnu ;;
  *) echo "release: --arch arm64|amd64 is required (the board's Debian architecture)" >&2; exit 2 ;;
esac

repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "${out:-$repo/release}" && cd "${out:-$repo/release}" && pwd)"
work="$repo/build/release-$arch"
cache="$repo/build/cache"
debs="$cache/debs-arm64"
version="$(node -p 'require(process.argv[1]).version' "$repo/package.json")"
node_version="$(node -p 'process.versions.node')"
[ -f "$repo/dist/scripts/releaseBundle.js" ] || { echo "release: not built: run 'npm run build' first" >&2; exit 1; }
if [ "$arch" = arm64 ] && ! command -v "$gnu-g++" >/dev/null 2>&1; then
  echo "release: $gnu-g++ is missing: apt-get install g++-aarch64-linux-gnu" >&2
  exit 1
fi
started=$SECONDS
step() { echo "release [$((SECONDS - started)) s]: $*"; }

# --- Node's headers for the target (and, for arm64, the node that runs the release under qemu) ---------------
node_pkg="$cache/node-linux-$npm_cpu-$node_version"
if [ ! -x "$node_pkg/bin/node" ]; then
  step "fetching node-linux-$npm_cpu@$node_version (headers for the native modules)"
  mkdir -p "$cache"
  tgz="$(cd "$cache" && npm pack --silent "node-linux-$npm_cpu@$node_version")"
  rm -rf "$node_pkg.partial" && mkdir -p "$node_pkg.partial"
  tar -xzf "$cache/$tgz" -C "$node_pkg.partial" --strip-components=1
  rm -f "$cache/$tgz"
  mv "$node_pkg.partial" "$node_pkg"
fi

# --- the locked dependencies for the target, natives compiled for it ---------------------------------------
# Kept between runs while the lock file is the same (a second run only re-bundles); built afresh otherwise.
if ! cmp -s "$repo/package-lock.json" "$work/deps/package-lock.json" || [ ! -f "$work/deps/.installed" ]; then
  step "npm ci for linux-$npm_cpu (no install scripts)"
  rm -rf "$work" && mkdir -p "$work/deps"
  cp "$repo/package.json" "$repo/package-lock.json" "$work/deps/"
  (cd "$work/deps" && npm ci --silent --no-audit --no-fund --ignore-scripts --omit=dev \
    --cpu="$npm_cpu" --os=linux --libc=glibc)
  touch "$work/deps/.installed"
fi
rm -rf "$work/unit" "$work/fleet" "$work"/deb-*

gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
[ -f "$gyp" ] || { echo "release: node-gyp (npm's own) not found at $gyp" >&2; exit 1; }
machine="$([ "$arch" = arm64 ] && echo 'ARM aarch64' || echo 'x86-64')"
build_native() { # dir: node-gyp rebuild for the target (skipped when already built for it)
  local dir="$1" name built extra=()
  name="${dir#"$work/deps/node_modules/"}"
  built="$(find "$dir/build/Release" -maxdepth 1 -name '*.node' 2>/dev/null | head -1 || true)"
  if [ -n "$built" ] && file -b "$built" | grep -q "$machine"; then return 0; fi
  local expect="${expected_s[$name]:-}" t0=$SECONDS
  step "compiling $name for $arch (${expect:+expected about $expect s; }log: $work/gyp-${name//\//_}.log)"
  # Packages built by node-pre-gyp name their module in package.json ("binary"); gyp needs the names.
  while IFS= read -r kv; do [ -z "$kv" ] || extra+=("$kv"); done < <(node -e '
    const b = require(process.argv[1]).binary;
    if (b && b.module_name) console.log(`--module_name=${b.module_name}\n--module_path=${b.module_path}`);' "$dir/package.json")
  (
    cd "$dir"
    export npm_config_nodedir="$node_pkg" JOBS=2
    if [ "$arch" = arm64 ]; then
      export CC="$gnu-gcc" CXX="$gnu-g++" LINK="$gnu-g++" AR="$gnu-ar" RANLIB="$gnu-ranlib" STRIP="$gnu-strip"
    fi
    node "$gyp" rebuild --release --arch="$npm_cpu" --nodedir="$node_pkg" "${extra[@]}" >"$work/gyp-${name//\//_}.log" 2>&1 || {
      tail -30 "$work/gyp-${name//\//_}.log" >&2
      exit 1
    }
    for f in build/Release/*.node; do "${STRIP:-strip}" --strip-unneeded "$f"; done
  )
  step "compiled $name in $((SECONDS - t0)) s"
}
# What each native module's compile is expected to take, s: measured from the gyp logs' times of an arm64
# release on the project's shared 2-core host (2026-12-02, under load; an idle host is faster). Shown
# before each compile, so a long silent step says how long it should be.
declare -A expected_s=(
  [better-sqlite3]=330 [@serialport/bindings-cpp]=55 [unix-dgram]=30 [@abandonware/bluetooth-hci-socket]=30
  [@pokusew/pcsclite]=50 [@serialport/bindings]=50 [i2c-bus]=35
)
# nfc-pcsc's binding links libpcsclite, which this machine has for its own CPU only: for arm64 it is
# compiled with the headers of Debian's libpcsclite-dev:arm64 and linked against the real
# libpcsclite1:arm64, both extracted (not installed) into a sysroot of the work directory. Its
# binding.gyp names /usr/include/PCSC and /usr/lib: pointed at the sysroot in the work directory's copy.
if [ "$arch" = arm64 ]; then
  sysroot="$work/sysroot"
  pcsc_lib="$sysroot/usr/lib/$gnu"
  if [ ! -f "$pcsc_lib/libpcsclite.so.1" ] || [ ! -f "$sysroot/usr/include/PCSC/winscard.h" ]; then
    rm -rf "$sysroot" && mkdir -p "$sysroot"
    for p in libpcsclite1 libpcsclite-dev; do
      deb="$(compgen -G "$debs/${p}_*_arm64.deb" | head -1 || true)"
      [ -n "$deb" ] || {
        echo "release: Debian's $p:arm64 is missing in $debs: run 'bash scripts/arm64-debs.sh' (apt-get download libpcsclite1:arm64 libpcsclite-dev:arm64 with arm64 package lists; .ci/run does)" >&2
        exit 1
      }
      dpkg-deb -x "$deb" "$sysroot"
    done
  fi
  pcsc_gyp="$work/deps/node_modules/@pokusew/pcsclite/binding.gyp"
  if grep -q '"/usr/include/PCSC"' "$pcsc_gyp"; then
    sed -i -e "s|\"/usr/include/PCSC\"|\"$sysroot/usr/include/PCSC\"|" -e "s|\"/usr/lib\"|\"$pcsc_lib\"|" "$pcsc_gyp"
    rm -rf "$(dirname "$pcsc_gyp")/build" # built before against a stand-in or this machine's headers
  fi
fi
# Every native module a release carries (the unit's devices and the fleet's database). bleno's own
# binding.gyp is for macOS only; its HCI socket is bluetooth-hci-socket's. i2c-bus drives the I2C OLED
# (display.kind ssd1306/sh1106, issue 46); it includes only the kernel's <linux/i2c-dev.h>.
natives=(better-sqlite3 @serialport/bindings-cpp unix-dgram @abandonware/bluetooth-hci-socket @pokusew/pcsclite i2c-bus)
total=0
for n in "${natives[@]}"; do total=$((total + ${expected_s[$n]:-60})); done
step "native modules for $arch: ${#natives[@]} and their dependencies' (about $total s when none is built yet; a built one is kept)"
for n in "${natives[@]}"; do
  d="$work/deps/node_modules/$n"
  if [ ! -f "$d/binding.gyp" ]; then echo "release: $n is not installed in $work/deps" >&2; exit 1; fi
  build_native "$d"
done
# Native modules further down (johnny-five's firmata brings an older serialport): built where present.
while IFS= read -r gypfile; do
  d="$(dirname "$gypfile")"
  case " ${natives[*]} " in *" ${d#"$work/deps/node_modules/"} "*) continue ;; esac
  [ -f "$d/package.json" ] || continue
  [ ! -d "$d/prebuilds/linux-$npm_cpu" ] || continue # ships a binary for the target (usb)
  case "$d" in */test | */test/* | */example* | */lib/mac) continue ;; esac
  build_native "$d" || echo "release: warning: ${d#"$work/deps/node_modules/"} did not build for $arch (left out)" >&2
done < <(find "$work/deps/node_modules" -mindepth 2 -name binding.gyp -path '*/node_modules/*/binding.gyp' \
  -not -path '*/better-sqlite3/*' -not -path '*/@serialport/bindings-cpp/*' -not -path '*/unix-dgram/*' \
  -not -path '*/bluetooth-hci-socket/*' -not -path '*/@pokusew/pcsclite/*' -not -path '*/bleno/*' \
  -not -path '*/i2c-bus/*' | sort)

# nfc-pcsc's binding needs the board's libpcsclite1 by its soname.
pcsc_node="$work/deps/node_modules/@pokusew/pcsclite/build/Release/pcsclite.node"
readelf -d "$pcsc_node" | grep -q 'NEEDED.*\[libpcsclite\.so\.1\]' ||
  { echo "release: $pcsc_node does not name libpcsclite.so.1 (readelf -d)" >&2; exit 1; }
if [ "$arch" = arm64 ]; then # every PC/SC function it calls is one the real library defines
  undefined="$(comm -23 \
    <(readelf --dyn-syms -W "$pcsc_node" | awk '$7 == "UND" && $8 ~ /^(SCard|pcsc_)/ { sub(/@.*/, "", $8); print $8 }' | sort -u) \
    <(readelf --dyn-syms -W "$pcsc_lib/libpcsclite.so.1" | awk '$7 != "UND" { sub(/@.*/, "", $8); print $8 }' | sort -u))"
  [ -z "$undefined" ] ||
    { echo "release: pcsclite.node calls functions libpcsclite1:arm64 does not define: $undefined" >&2; exit 1; }
fi
# --- the unit's release tree --------------------------------------------------------------------------------
tree_base() { # dir flavour
  local dir="$1"
  mkdir -p "$dir/dist/src/cli" "$dir/config"
  node -e '
    const p = require(process.argv[1]);
    const out = { name: p.name, version: p.version, description: p.description, license: p.license,
      type: "module", private: true, engines: p.engines, bin: { vendd: "dist/src/cli/main.js" } };
    require("fs").writeFileSync(process.argv[2], JSON.stringify(out, null, 2) + "\n");' \
    "$repo/package.json" "$dir/package.json"
  cp -r "$repo/boards" "$repo/systemd" "$dir/"
  rm -f "$dir/boards/README.md"
  cp "$repo/config/example.yaml" "$dir/config/"
}
unit_modules=(better-sqlite3 serialport @serialport/bindings-cpp unix-dgram @abandonware/bleno nfc-pcsc johnny-five qrcode-terminal i2c-bus)
fleet_modules=(better-sqlite3 sodium-native uplot qrcode-terminal unix-dgram)

unit="$work/unit"
step "bundling the unit's command (esbuild)"
tree_base "$unit"
node "$repo/dist/scripts/releaseBundle.js" unit "$unit/dist/src/cli/main.js"
node "$repo/dist/scripts/releaseModules.js" "$work/deps/node_modules" "$unit/node_modules" "linux-$npm_cpu" "${unit_modules[@]}" >/dev/null

fleet="$work/fleet"
step "bundling the fleet server's command (esbuild)"
tree_base "$fleet"
cp "$repo/config/fleet.example.yaml" "$repo/config/fleet.yaml" "$fleet/config/"
node "$repo/dist/scripts/releaseBundle.js" fleet "$fleet/dist/src/cli/main.js"
node "$repo/dist/scripts/releaseModules.js" "$work/deps/node_modules" "$fleet/node_modules" "linux-$npm_cpu" "${fleet_modules[@]}" >/dev/null

# Prebuilt binaries come with symbols; the Bare runtime's copies are not for Node.
strip_tool="$([ "$arch" = arm64 ] && echo "$gnu-strip" || echo strip)"
find "$unit" "$fleet" -name '*.bare' -delete
find "$unit" "$fleet" -name '*.node' -exec "$strip_tool" --strip-unneeded {} +
# Nothing built for another CPU may be in a release.
while IFS= read -r f; do
  if ! file -b "$f" | grep -q "$machine"; then echo "release: $f is not built for $arch: $(file -b "$f")" >&2; exit 1; fi
done < <(find "$unit" "$fleet" -name '*.node')
# No module may need a C library newer than bookworm's (Raspberry Pi OS 12).
newest_glibc="$(find "$unit" "$fleet" -name '*.node' -exec readelf -V --wide {} + |
  grep -o 'GLIBC_2\.[0-9]*' | sort -uV | tail -1)"
if [ "$(printf '%s\nGLIBC_2.36\n' "$newest_glibc" | sort -V | tail -1)" != GLIBC_2.36 ]; then
  echo "release: the native modules need $newest_glibc, newer than bookworm's 2.36" >&2
  exit 1
fi
step "native modules checked; newest C library symbol $newest_glibc (bookworm: 2.36)"

# --- outputs -------------------------------------------------------------------------------------------------
tarball="$out/vendd-$version-linux-$arch.tar.gz"
step "writing $(basename "$tarball")"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@${SOURCE_DATE_EPOCH:-0}" -C "$unit" -czf "$tarball.tmp" .
mv "$tarball.tmp" "$tarball"
bash "$repo/scripts/debian.sh" unit "$unit" "$arch" "$version" "$out"
bash "$repo/scripts/debian.sh" fleet "$fleet" "$arch" "$version" "$out"

step "done"
size() { du -k "$1" | cut -f1; }
printf '%-40s %8s KiB\n' "$(basename "$tarball")" "$(size "$tarball")"
for deb in "$out/vendd_${version}_$arch.deb" "$out/vendd-fleet_${version}_$arch.deb"; do
  printf '%-40s %8s KiB (installed %s KiB)\n' "$(basename "$deb")" "$(size "$deb")" \
    "$(dpkg-deb -f "$deb" Installed-Size)"
done
printf '%-40s %8s KiB (node_modules %s KiB)\n' "unit release tree" "$(du -sk "$unit" | cut -f1)" \
  "$(du -sk "$unit/node_modules" | cut -f1)"
