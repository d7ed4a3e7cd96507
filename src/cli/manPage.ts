/**
 * The manual page vendd(1), rendered from the same option tables as `vendd --help` (commands.ts), so it
 * cannot drift from what the commands parse. scripts/debian.sh renders it from the built module when it
 * builds the unit's package (docs/board.md, "Packages"): `renderManPage(VERSION, "YYYY-MM-DD")`.
 */

import { COMMANDS } from "./commands.js";
import { formatOption } from "./commandTable.js";

/** Text for a roff line: backslashes, minus signs and a leading control character escaped. */
export function roff(text: string): string {
  const escaped = text.replace(/\\/g, "\\e").replace(/-/g, "\\-");
  return /^[.']/.test(escaped) ? `\\&${escaped}` : escaped;
}

export function renderManPage(version: string, date: string): string {
  const lines: string[] = [
    `.TH VENDD 1 "${date}" "vendd ${roff(version)}" "User Commands"`,
    ".SH NAME",
    "vendd \\- payment unit for vending machines (MDB cashless, wallet payments)",
    ".SH SYNOPSIS",
    ".B vendd",
    ".I command",
    "[options]",
    ".br",
    ".B vendd",
    "\\-\\-help | \\-\\-version",
    ".SH DESCRIPTION",
    "vendd is the payment brain of a vending machine: MDB cashless over serial, wallet\\-app payments,",
    "QR/BLE/NFC check\\-in and an SQLite journal that ends every payment captured or cancelled exactly",
    "once. On a unit, systemd runs",
    ".B vendd run",
    "(vendd.service); the other commands configure, check, update and inspect it.",
    "Every command takes",
    ".BR \\-\\-help .",
    "The fleet server's commands and the payment service emulator run from the vendd\\-fleet package",
    "(vendd\\-fleet fleet serve, vendd\\-fleet emulator).",
    ".SH COMMANDS",
  ];
  for (const c of COMMANDS) {
    const options = Object.entries(c.options)
      .filter(([name]) => name !== "help" && (c.only === undefined || c.only.includes(name)))
      .map(([name, spec]) => formatOption(name, spec, c.required?.includes(name)));
    lines.push(".TP", `.B vendd ${roff(c.words)}`);
    if (options.length > 0) lines.push(roff(options.join(" ")), ".br");
    lines.push(roff(c.summary));
  }
  lines.push(
    ".SH FILES",
    ".TP",
    ".I /etc/vendd/config.yaml",
    "the unit's configuration (a conffile; every key: /usr/lib/vendd/config/example.yaml)",
    ".TP",
    ".I /etc/vendd/secrets.yaml",
    "the payment service's secrets, mode 0600, handed to the daemon as a systemd credential",
    ".TP",
    ".I /var/lib/vendd/journal.db",
    "the journal: every payment and vend; read it with",
    '.BR "vendd journal" .',
    "A purge of the package keeps a copy unless",
    ".B vendd journal settled",
    "says it may go",
    ".TP",
    ".I /opt/vendd/current",
    "the release the units run (the package's, or one a release bundle installed)",
    ".SH EXIT STATUS",
    "0 success, 1 a failure the message names, 2 a usage error;",
    ".B vendd journal settled",
    "exits 3 when the journal holds what exists nowhere else.",
    ".SH SEE ALSO",
    ".BR systemctl (1),",
    ".BR journalctl (1),",
    "/usr/share/doc/vendd/README.Debian",
  );
  return `${lines.join("\n")}\n`;
}
