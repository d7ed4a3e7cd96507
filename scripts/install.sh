#!/usr/bin/env bash
# Installs a built vendd (run `npm ci` first, on the same architecture) on a unit:
#   sudo scripts/install.sh [PREFIX]        default PREFIX=/opt/vendd
# Copies the built app, creates the service user, installs the systemd unit and an example config.
# It never overwrites an existing /etc/vendd/config.yaml or secrets file.
set -euo pipefail
prefix="${1:-/opt/vendd}"
src="$(cd "$(dirname "$0")/.." && pwd)"

if [ "$(id -u)" != "0" ]; then echo "run as root" >&2; exit 1; fi
[ -f "$src/dist/src/cli/main.js" ] || { echo "not built: run 'npm ci' in $src first" >&2; exit 1; }

id vendd >/dev/null 2>&1 || useradd --system --home /var/lib/vendd --shell /usr/sbin/nologin --groups dialout vendd
install -d -m 0755 "$prefix"
cp -a "$src/dist" "$src/node_modules" "$src/package.json" "$src/boards" "$src/README.md" "$prefix/"
install -d -m 0755 "$prefix/config" && cp -a "$src/config/example.yaml" "$src/config/README.md" "$prefix/config/"
install -d -m 0750 -g vendd /etc/vendd
[ -f /etc/vendd/config.yaml ] || install -m 0640 -g vendd "$src/config/example.yaml" /etc/vendd/config.yaml
[ -f /etc/vendd/secrets.yaml ] || install -m 0600 /dev/null /etc/vendd/secrets.yaml
install -m 0644 "$src/systemd/vendd.service" /etc/systemd/system/vendd.service
systemctl daemon-reload
echo "installed in $prefix. Edit /etc/vendd/config.yaml and /etc/vendd/secrets.yaml, then:"
echo "  $prefix/dist/src/cli/main.js config validate /etc/vendd/config.yaml --secrets /etc/vendd/secrets.yaml"
echo "  systemctl enable --now vendd"
