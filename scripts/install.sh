#!/usr/bin/env bash
# Installs a built vendd on a unit (README.md, "Installing on a unit"). Build first, on the unit or on a
# machine of the same architecture: `npm ci` (it builds dist/ and the native modules), then optionally
# `npm prune --omit=dev`.
#   sudo scripts/install.sh [PREFIX]        default PREFIX=/opt/vendd
# Copies the built app, creates the service user, installs the systemd unit, the `vendd` command and an
# example config. It never overwrites an existing /etc/vendd/config.yaml or /etc/vendd/secrets.yaml.
set -euo pipefail
prefix="${1:-/opt/vendd}"
src="$(cd "$(dirname "$0")/.." && pwd)"

if [ "$(id -u)" != "0" ]; then echo "run as root" >&2; exit 1; fi
[ -f "$src/dist/src/cli/main.js" ] || { echo "not built: run 'npm ci' in $src first" >&2; exit 1; }
node="$(command -v node || true)"
major="$([ -n "$node" ] && "$node" -p 'process.versions.node.split(".")[0]' || echo 0)"
if [ "$major" -lt 20 ]; then
  echo "Node.js 20 or later is needed (found: ${node:-none} ${major}); see README.md, Installing on a unit" >&2
  exit 1
fi

id vendd >/dev/null 2>&1 || useradd --system --home /var/lib/vendd --shell /usr/sbin/nologin --groups dialout vendd
install -d -m 0755 "$prefix"
cp -a "$src/dist" "$src/node_modules" "$src/package.json" "$src/boards" "$src/README.md" "$prefix/"
install -d -m 0755 "$prefix/config" && cp -a "$src/config/example.yaml" "$src/config/README.md" "$prefix/config/"
install -d -m 0750 -g vendd /etc/vendd
[ -f /etc/vendd/config.yaml ] || install -m 0640 -g vendd "$src/config/example.yaml" /etc/vendd/config.yaml
[ -f /etc/vendd/secrets.yaml ] || install -m 0600 /dev/null /etc/vendd/secrets.yaml
# The unit file names /usr/bin/node and /opt/vendd: point it at this node and this prefix.
sed -e "s#/usr/bin/node#$node#g" -e "s#/opt/vendd#$prefix#g" "$src/systemd/vendd.service" >/etc/systemd/system/vendd.service
chmod 0644 /etc/systemd/system/vendd.service
printf '#!/bin/sh\nexec %s %s/dist/src/cli/main.js "$@"\n' "$node" "$prefix" >/usr/local/bin/vendd
chmod 0755 /usr/local/bin/vendd
systemctl daemon-reload
echo "installed in $prefix ($("$node" --version)); the command is /usr/local/bin/vendd."
echo "Edit /etc/vendd/config.yaml and /etc/vendd/secrets.yaml, then:"
echo "  vendd config validate /etc/vendd/config.yaml --secrets /etc/vendd/secrets.yaml"
echo "  vendd doctor --secrets /etc/vendd/secrets.yaml"
echo "  systemctl enable --now vendd"
