/**
 * `vendd fleet <sub>`: the fleet commands (issues 16-18): the server and its administration, the
 * dashboard's accounts, reconciliation, and the unit's enrolment. Each subcommand lives in its own module, loaded only
 * when used; add a line to SUBCOMMANDS (and its rows to fleetCommands.ts) for a new one.
 */
import { printable } from "../core/printable.js";
import type { Command } from "./main.js";

const SUBCOMMANDS: Readonly<Record<string, { usage: string; load: () => Promise<Command> }>> = {
  serve: {
    usage:
      "vendd fleet serve [--db FILE|URL] [--listen HOST:PORT] [--time-zone TZ] [--bundle-key FILE]... [--log-level LEVEL]",
    load: async () => (await import("./fleetServe.js")).fleetServeCommand,
  },
  init: {
    usage: "vendd fleet init [--db FILE|URL] [--config FILE]",
    load: async () => (await import("./fleetAdmin.js")).fleetInitCommand,
  },
  units: {
    usage: "vendd fleet units [--db FILE|URL] [--json]",
    load: async () => (await import("./fleetAdmin.js")).fleetUnitsCommand,
  },
  approve: {
    usage: "vendd fleet approve UNIT [--db FILE|URL] [--by NAME]",
    load: async () => (await import("./fleetAdmin.js")).fleetApproveCommand,
  },
  revoke: {
    usage: "vendd fleet revoke UNIT [--db FILE|URL] [--by NAME]",
    load: async () => (await import("./fleetAdmin.js")).fleetRevokeCommand,
  },
  bundle: {
    usage: "vendd fleet bundle upload FILE [--db FILE|URL] [--bundle-key FILE]... [--by NAME]",
    load: async () => (await import("./fleetAdmin.js")).fleetBundleCommand,
  },
  enroll: {
    usage: "vendd fleet enroll [--config FILE] [--key FILE] [--url URL] [--label TEXT] [--json]",
    load: async () => (await import("./fleetEnroll.js")).fleetEnrollCommand,
  },
  reconcile: {
    usage:
      "vendd fleet reconcile --from DATE --to DATE [--format table|csv|json] [--db FILE|URL] [--reporting FILE]",
    load: async () => (await import("./fleetReconcile.js")).fleetReconcileCommand,
  },
  alerts: {
    usage: "vendd fleet alerts [--open] [--json] [--config FILE] [--db FILE|URL]",
    load: async () => (await import("./fleetAlerts.js")).fleetAlertsCommand,
  },
  backup: {
    usage: "vendd fleet backup --out FILE [--db FILE] [--config FILE]",
    load: async () => (await import("./fleetBackup.js")).fleetBackupCommand,
  },
  user: {
    usage:
      "vendd fleet user add NAME --role viewer|manager [--db FILE|URL] [--password-file FILE]\n" +
      "  vendd fleet user list [--db FILE|URL] [--json]\n" +
      "  vendd fleet user remove NAME [--db FILE|URL]",
    load: async () => (await import("./fleetUser.js")).fleetUserCommand,
  },
};

function usage(): string {
  return `usage:\n${Object.values(SUBCOMMANDS)
    .map((s) => `  ${s.usage}\n`)
    .join("")}`;
}

export async function fleetCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    process.stdout.write(usage());
    return sub === undefined ? 2 : 0;
  }
  const entry = SUBCOMMANDS[sub];
  if (entry === undefined) {
    process.stderr.write(`vendd fleet: unknown subcommand '${printable(sub, 64)}'\n${usage()}`);
    return 2;
  }
  return (await entry.load())(rest);
}
