#!/usr/bin/env bash
# Installs a built vendd on a unit (Raspberry Pi OS / Debian; README.md, "Installing on a unit"). Build first,
# on the unit or on a machine of the same architecture: `npm ci` (it builds dist/ and the native modules),
# then optionally `npm prune --omit=dev`.
#
#   sudo scripts/install.sh                     install (or bring an installation up to date)
#   sudo scripts/install.sh --uninstall         remove the app, units and command; keep config, journal, user
#   sudo scripts/install.sh --uninstall --purge also remove /etc/vendd, /var/lib/vendd (journal!), the user
#   scripts/install.sh --root DIR [...]         dry run into DIR (made when missing): no apt-get, no useradd, no systemctl; the
#                                               user and group are written into DIR/etc/passwd and DIR/etc/group
#                                               (ownership is set only when run as root)
#   --source DIR                                the built checkout to install (default: this script's checkout)
#
# What it does (each step only if needed, so a second run changes nothing and says so):
#   - system packages procps (ExecReload's /bin/kill) and ca-certificates;
#   - the system user `vendd`, in group `dialout` (serial ports);
#   - /etc/vendd 0750 root:vendd with config.yaml (0640 root:vendd, from config/example.yaml) and secrets.yaml
#     (0600 root, read by systemd as a credential), never overwriting existing ones;
#   - /var/lib/vendd 0700 vendd (journal), its inbox/ and inbox/local/ 0700 vendd (bundles, console configs);
#   - the built app as release /opt/vendd/releases/<version> and the symlink /opt/vendd/current -> it (the
#     unit files run /opt/vendd/current; release bundles add releases and swap that symlink);
#   - every unit of systemd/ in /etc/systemd/system (pointed at this machine's node), and, when the release's
#     unix-dgram module does not load, the drop-in vendd.service.d/notify-access.conf with NotifyAccess=all
#     (the daemon then notifies through systemd-notify, a child process); removed again once it loads;
#   - the `vendd` command in /usr/local/bin; `systemctl daemon-reload`. It starts and enables nothing.
set -euo pipefail

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

R=""
src="$(cd "$(dirname "$0")/.." && pwd)"
mode=install
purge=0
while [ $# -gt 0 ]; do
  case "$1" in
    --root) [ $# -ge 2 ] || usage; R="$2"; shift 2 ;;
    --source) [ $# -ge 2 ] || usage; src="$(cd "$2" && pwd)"; shift 2 ;;
    --uninstall) mode=uninstall; shift ;;
    --purge) purge=1; shift ;;
    -h|--help) usage ;;
    *) echo "install.sh: unknown argument: $1" >&2; usage ;;
  esac
done
[ "$purge" = 0 ] || [ "$mode" = uninstall ] || { echo "install.sh: --purge goes with --uninstall" >&2; exit 2; }
if [ -n "$R" ]; then # made when missing, like the directories inside it
  mkdir -p -- "$R" || { echo "install.sh: --root $R cannot be made" >&2; exit 1; }
  R="$(cd "$R" && pwd)"
fi
[ -z "$R" ] || [ "$R" != / ] || { echo "install.sh: --root / is a real install: leave --root out" >&2; exit 2; }

dry=0
[ -z "$R" ] || dry=1
euid="$(id -u)"
if [ "$dry" = 0 ] && [ "$euid" != 0 ]; then echo "install.sh: run as root (or use --root DIR for a dry run)" >&2; exit 1; fi
# Ownership can be set by root only; a dry run by another user records modes and contents only.
can_chown=0
[ "$euid" != 0 ] || can_chown=1

changes=0
change() { changes=$((changes + 1)); echo "  $*"; }

# --- users and groups ---------------------------------------------------------------------------------------
# In a dry run they live in $R/etc/passwd and $R/etc/group, with ids picked like useradd --system does.

free_id() { # file: the highest id below 1000 not used in the third field of $1
  local id=999
  while cut -d: -f3 "$1" | grep -qx "$id"; do id=$((id - 1)); done
  echo "$id"
}

ensure_root_file() {
  if [ ! -e "$R/etc/$1" ]; then
    mkdir -p "$R/etc"
    install -m 0644 /dev/null "$R/etc/$1"
    change "created /etc/$1"
  fi
}

ensure_user() {
  if [ "$dry" = 0 ]; then
    if ! id vendd >/dev/null 2>&1; then
      useradd --system --user-group --home-dir /var/lib/vendd --no-create-home --shell /usr/sbin/nologin \
        --comment "vendd payment unit" vendd
      change "created the system user vendd"
    fi
    if ! id -nG vendd | tr ' ' '\n' | grep -qx dialout; then
      usermod -aG dialout vendd
      change "added vendd to group dialout"
    fi
    return
  fi
  ensure_root_file passwd
  ensure_root_file group
  if ! grep -q '^dialout:' "$R/etc/group"; then
    echo "dialout:x:20:" >>"$R/etc/group"
    change "created group dialout in /etc/group"
  fi
  if ! grep -q '^vendd:' "$R/etc/group"; then
    echo "vendd:x:$(free_id "$R/etc/group"):" >>"$R/etc/group"
    change "created group vendd in /etc/group"
  fi
  if ! grep -q '^vendd:' "$R/etc/passwd"; then
    local gid
    gid="$(grep '^vendd:' "$R/etc/group" | cut -d: -f3)"
    echo "vendd:x:$(free_id "$R/etc/passwd"):$gid:vendd payment unit:/var/lib/vendd:/usr/sbin/nologin" >>"$R/etc/passwd"
    change "created user vendd in /etc/passwd"
  fi
  local members
  members="$(grep '^dialout:' "$R/etc/group" | cut -d: -f4)"
  if ! echo "$members" | tr ',' '\n' | grep -qx vendd; then
    sed -i -e "s/^dialout:\([^:]*\):\([^:]*\):\(.*\)\$/dialout:\1:\2:\3${members:+,}vendd/" "$R/etc/group"
    change "added vendd to group dialout in /etc/group"
  fi
}

remove_user() {
  if [ "$dry" = 0 ]; then
    if id vendd >/dev/null 2>&1; then userdel vendd; change "removed the system user vendd"; fi
    if getent group vendd >/dev/null 2>&1; then groupdel vendd; change "removed group vendd"; fi
    return
  fi
  if [ -e "$R/etc/passwd" ] && grep -q '^vendd:' "$R/etc/passwd"; then
    sed -i '/^vendd:/d' "$R/etc/passwd"
    change "removed user vendd from /etc/passwd"
  fi
  if [ -e "$R/etc/group" ]; then
    if grep -q '^vendd:' "$R/etc/group"; then
      sed -i '/^vendd:/d' "$R/etc/group"
      change "removed group vendd from /etc/group"
    fi
    if grep '^dialout:' "$R/etc/group" | cut -d: -f4 | tr ',' '\n' | grep -qx vendd; then
      sed -i -e '/^dialout:/{s/\([:,]\)vendd\(,\|$\)/\1/;s/,$//}' "$R/etc/group"
      change "removed vendd from group dialout in /etc/group"
    fi
  fi
}

uid_of() { # name -> numeric uid (root is 0 everywhere)
  if [ "$1" = root ]; then echo 0; elif [ "$dry" = 0 ]; then id -u "$1"; else grep "^$1:" "$R/etc/passwd" | cut -d: -f3; fi
}
gid_of() {
  if [ "$1" = root ]; then echo 0; elif [ "$dry" = 0 ]; then getent group "$1" | cut -d: -f3; else grep "^$1:" "$R/etc/group" | cut -d: -f3; fi
}

# --- files and directories ----------------------------------------------------------------------------------

# owner path user group: sets the numeric owner when it differs (and this process may).
ensure_owner() {
  [ "$can_chown" = 1 ] || return 0
  local want
  want="$(uid_of "$2"):$(gid_of "$3")"
  if [ "$(stat -c '%u:%g' "$R$1")" != "$want" ]; then
    chown -h "$want" "$R$1"
    change "owner of $1: $2:$3"
  fi
}

# mode path octal
ensure_mode() {
  if [ "$(stat -c '%a' "$R$1")" != "$(printf '%o' "$((8#$2))")" ]; then
    chmod "$2" "$R$1"
    change "mode of $1: $2"
  fi
}

# dir path mode user group
ensure_dir() {
  if [ ! -d "$R$1" ]; then
    mkdir -p "$R$1"
    change "created $1/"
  fi
  ensure_mode "$1" "$2"
  ensure_owner "$1" "$3" "$4"
}

# content path mode user group text: replaces the file (text + newline) only when its text differs
ensure_content() {
  local tmp
  tmp="$(mktemp)"
  printf '%s\n' "$5" >"$tmp"
  if [ ! -f "$R$1" ] || ! cmp -s "$tmp" "$R$1"; then
    mkdir -p "$(dirname "$R$1")"
    cp "$tmp" "$R$1.vendd-new"
    mv -f "$R$1.vendd-new" "$R$1"
    change "wrote $1"
  fi
  rm -f "$tmp"
  ensure_mode "$1" "$2"
  ensure_owner "$1" "$3" "$4"
}

# keep path mode user group source: creates the file from source only when missing (never overwrites)
ensure_initial() {
  if [ ! -e "$R$1" ]; then
    cp "$5" "$R$1"
    change "created $1"
  fi
  ensure_mode "$1" "$2"
  ensure_owner "$1" "$3" "$4"
}

remove() { # path...: removes what exists
  local p
  for p in "$@"; do
    case "$p" in /?*) ;; *) echo "install.sh: refusing to remove '$p'" >&2; exit 1 ;; esac
    if [ -e "$R$p" ] || [ -L "$R$p" ]; then
      rm -rf -- "$R$p"
      change "removed $p"
    fi
  done
}

systemd_running() { [ "$dry" = 0 ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; }

UNITS=(vendd.service vendd-bundle.path vendd-bundle.service vendd-pull.timer vendd-pull.service)
unit_files() { # the unit files of the source checkout (E's console template included)
  find -H "$src/systemd" -maxdepth 1 -type f \( -name '*.service' -o -name '*.path' -o -name '*.timer' \) | sort
}

# --- uninstall ----------------------------------------------------------------------------------------------

if [ "$mode" = uninstall ]; then
  echo "vendd: uninstalling${R:+ (dry run in $R)}"
  if systemd_running; then
    systemctl disable --now "${UNITS[@]}" >/dev/null 2>&1 || true
  fi
  shopt -s nullglob
  for f in "$R"/etc/systemd/system/*.wants/vendd*; do remove "${f#"$R"}"; done
  for f in "$R"/etc/systemd/system/vendd*.service "$R"/etc/systemd/system/vendd*.path \
    "$R"/etc/systemd/system/vendd*.timer "$R"/etc/systemd/system/vendd.service.d; do
    remove "${f#"$R"}"
  done
  shopt -u nullglob
  remove /usr/local/bin/vendd /opt/vendd
  if [ "$purge" = 1 ]; then
    remove /etc/vendd /var/lib/vendd
    remove_user
  else
    echo "  kept: /etc/vendd (config, secrets), /var/lib/vendd (the journal), the user vendd; --purge removes them"
  fi
  if systemd_running; then systemctl daemon-reload; fi
  if [ "$changes" = 0 ]; then echo "nothing to change"; else echo "$changes change(s)"; fi
  exit 0
fi

# --- install ------------------------------------------------------------------------------------------------

[ -f "$src/dist/src/cli/main.js" ] || { echo "install.sh: not built: run 'npm ci' in $src first" >&2; exit 1; }
node="$(command -v node || true)"
major="$([ -n "$node" ] && "$node" -p 'process.versions.node.split(".")[0]' || echo 0)"
if [ "$major" -lt 20 ]; then
  echo "install.sh: Node.js 20 or later is needed (found: ${node:-none} ${major}); see README.md, Installing on a unit" >&2
  exit 1
fi
# The boards vendd supports (docs/board.md): 64-bit Raspberry Pi OS on Pi Zero 2 W, 3, 4 and 5; 32-bit only
# on trixie (Debian 13), the first with a Node.js 20 for it; x86-64 for development and test machines.
SUPPORTED="vendd runs on 64-bit Raspberry Pi OS (arm64) on a Pi Zero 2 W, 3, 4 or 5, on 32-bit Raspberry Pi OS only from trixie (Debian 13), and on x86-64; see docs/board.md"
machine="${VENDD_INSTALL_MACHINE:-$(uname -m)}"
os_release="${VENDD_INSTALL_OS_RELEASE:-$R/etc/os-release}"
[ -f "$os_release" ] || os_release=/etc/os-release
os_version="$(. "$os_release" 2>/dev/null && echo "${VERSION_ID:-0}")"
case "$machine" in
  aarch64 | arm64 | x86_64 | amd64) ;;
  armv7l | armv8l | armhf)
    if [ "${os_version%%.*}" -lt 13 ] 2>/dev/null || [ -z "$os_version" ]; then
      echo "install.sh: this board runs 32-bit Debian ${os_version:-?}, which has no Node.js 20.18.1. $SUPPORTED" >&2
      exit 1
    fi
    ;;
  *)
    echo "install.sh: this board's CPU ($machine) is not supported. $SUPPORTED" >&2
    exit 1
    ;;
esac
# The build must be for this CPU: a copied node_modules from another machine fails at the first journal open.
addon="$src/node_modules/better-sqlite3/build/Release/better_sqlite3.node"
if [ -f "$addon" ] && [ -z "${VENDD_INSTALL_MACHINE:-}" ]; then
  built="$(od -An -tu2 -j18 -N2 "$addon" | tr -d ' ')"
  case "$built" in 62) built_for=x86-64 ;; 183) built_for=arm64 ;; 40) built_for=32-bit-arm ;; *) built_for="ELF machine $built" ;; esac
  case "$machine:$built_for" in
    x86_64:x86-64 | amd64:x86-64 | aarch64:arm64 | arm64:arm64 | armv7l:32-bit-arm | armv8l:32-bit-arm | armhf:32-bit-arm) ;;
    *)
      echo "install.sh: $src is built for $built_for; install the release for this board ($machine, docs/board.md)" >&2
      exit 1
      ;;
  esac
fi
version="$("$node" -p 'require(process.argv[1]).version' "$src/package.json")"
if ! [[ "$version" =~ ^[0-9A-Za-z][0-9A-Za-z.+-]*$ ]]; then
  echo "install.sh: unusable version in $src/package.json: $version" >&2
  exit 1
fi
echo "vendd $version: installing${R:+ (dry run in $R)}"

packages=(procps ca-certificates)
if [ "$dry" = 0 ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    change "installed packages: ${missing[*]}"
  fi
else
  echo "  dry run: packages not checked (${packages[*]}), users written into $R/etc"
fi

ensure_user

ensure_dir /etc/vendd 0750 root vendd
ensure_initial /etc/vendd/config.yaml 0640 root vendd "$src/config/example.yaml"
ensure_initial /etc/vendd/secrets.yaml 0600 root root /dev/null
ensure_dir /var/lib/vendd 0700 vendd vendd
ensure_dir /var/lib/vendd/inbox 0700 vendd vendd
ensure_dir /var/lib/vendd/inbox/local 0700 vendd vendd

# The release: copied under a temporary name and renamed, so a release directory is always complete.
ensure_dir /opt/vendd 0755 root root
ensure_dir /opt/vendd/releases 0755 root root
release="/opt/vendd/releases/$version"
new_release=0
if [ ! -d "$R$release" ]; then
  staging="$R/opt/vendd/releases/.$version.partial"
  rm -rf "$staging"
  mkdir "$staging"
  cp -a "$src/dist" "$src/package.json" "$src/boards" "$src/README.md" "$src/systemd" "$staging/"
  # The modules the app loads at run time and what they depend on, never the development ones (TypeScript,
  # Vitest, esbuild, Biome, the browser driver): scripts/releaseModules.ts, as a release does.
  mkdir "$staging/node_modules"
  # shellcheck disable=SC2046 # one word per package name
  "$node" "$src/dist/scripts/releaseModules.js" "$src/node_modules" "$staging/node_modules" \
    "linux-$("$node" -p process.arch)" $("$node" -e '
      const p = require(process.argv[1]);
      console.log(Object.keys({ ...p.dependencies, ...p.optionalDependencies }).join(" "));' "$src/package.json") \
    >/dev/null
  mkdir "$staging/config"
  cp -a "$src/config/example.yaml" "$src/config/README.md" "$staging/config/"
  chmod -R u+rwX,go+rX,go-w "$staging"
  [ "$can_chown" = 0 ] || chown -R 0:0 "$staging"
  mv -T "$staging" "$R$release"
  change "installed release $release"
  new_release=1
fi
ensure_mode "$release" 0755
# /opt/vendd/current: set at the first install and when this run installed a new release; otherwise left
# alone, so re-running the installer never undoes a release a bundle installed since.
current="$(readlink "$R/opt/vendd/current" 2>/dev/null || true)"
if [ -z "$current" ] || { [ "$new_release" = 1 ] && [ "$current" != "releases/$version" ]; }; then
  ln -sfn "releases/$version" "$R/opt/vendd/current.vendd-new"
  mv -T "$R/opt/vendd/current.vendd-new" "$R/opt/vendd/current"
  change "current release: $version"
fi
# The layout before releases (the app directly in /opt/vendd) is replaced by the release.
for old in dist node_modules package.json boards README.md config; do remove "/opt/vendd/$old"; done

# The units, pointed at this machine's node.
units_changed=$changes
ensure_dir /etc/systemd/system 0755 root root
while IFS= read -r f; do
  ensure_content "/etc/systemd/system/$(basename "$f")" 0644 root root "$(sed -e "s#/usr/bin/node#$node#g" "$f")"
done < <(unit_files)
# NotifyAccess: main as shipped when the release's unix-dgram loads, else the systemd-notify fallback.
dropin=/etc/systemd/system/vendd.service.d/notify-access.conf
if (cd "$R$release" && "$node" -e 'require("unix-dgram")' >/dev/null 2>&1); then
  remove "$dropin"
  if [ -d "$R/etc/systemd/system/vendd.service.d" ] && [ -z "$(ls -A "$R/etc/systemd/system/vendd.service.d")" ]; then
    rmdir "$R/etc/systemd/system/vendd.service.d"
    change "removed /etc/systemd/system/vendd.service.d/"
  fi
  notify="NotifyAccess=main (unix-dgram loads)"
else
  ensure_dir /etc/systemd/system/vendd.service.d 0755 root root
  ensure_content "$dropin" 0644 root root "$(printf '%s\n' \
    "# Written by scripts/install.sh: the unix-dgram module does not load in $release, so vendd" \
    "# notifies through systemd-notify, a child process, which needs NotifyAccess=all." \
    "[Service]" "NotifyAccess=all")"
  notify="NotifyAccess=all (unix-dgram does not load: drop-in $dropin)"
fi
units_changed=$((changes - units_changed))

ensure_dir /usr/local/bin 0755 root root
ensure_content /usr/local/bin/vendd 0755 root root \
  "$(printf '#!/bin/sh\nexec %s /opt/vendd/current/dist/src/cli/main.js "$@"' "$node")"

if [ "$units_changed" -gt 0 ] && systemd_running; then systemctl daemon-reload; fi

if [ "$changes" = 0 ]; then echo "nothing to change"; else echo "$changes change(s)"; fi
echo "release: $release ($("$node" --version)); $notify; the command is /usr/local/bin/vendd."
[ "$dry" = 0 ] || echo "Dry run: the tree is in $R; on a unit, install without --root, then:"
echo "Next: edit /etc/vendd/config.yaml and /etc/vendd/secrets.yaml (config/README.md), then:"
echo "  sudo vendd config validate /etc/vendd/config.yaml --secrets /etc/vendd/secrets.yaml"
echo "  sudo vendd doctor --secrets /etc/vendd/secrets.yaml"
echo "  sudo systemctl enable --now vendd vendd-bundle.path vendd-pull.timer"
