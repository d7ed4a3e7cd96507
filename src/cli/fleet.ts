/**
 * `vendd fleet <sub>`: the fleet commands (issues 16-18): the server and its administration, the
 * dashboard's accounts, reconciliation, and the unit's enrolment. Each subcommand lives in its own module, loaded only
 * when used; add a line to SUBCOMMANDS (and its rows to fleetCommands.ts) for a new one.
 */
import { printable } from "../core/printable.js";
import type { Command } from "./command.js";
import { renderCommandUsage } from "./commandTable.js";
import { FLEET_COMMANDS } from "./fleetCommands.js";

const SUBCOMMANDS: Readonly<Record<string, { load: () => Promise<Command> }>> = {
  serve: {
    load: async () => (await import("./fleetServe.js")).fleetServeCommand,
  },
  init: {
    load: async () => (await import("./fleetAdmin.js")).fleetInitCommand,
  },
  doctor: {
    load: async () => (await import("./fleetDoctor.js")).fleetDoctorCommand,
  },
  invoice: {
    load: async () => (await import("./fleetInvoice.js")).fleetInvoiceCommand,
  },
  units: {
    load: async () => (await import("./fleetAdmin.js")).fleetUnitsCommand,
  },
  approve: {
    load: async () => (await import("./fleetAdmin.js")).fleetApproveCommand,
  },
  revoke: {
    load: async () => (await import("./fleetAdmin.js")).fleetRevokeCommand,
  },
  bundle: {
    load: async () => (await import("./fleetAdmin.js")).fleetBundleCommand,
  },
  enroll: {
    load: async () => (await import("./fleetEnroll.js")).fleetEnrollCommand,
  },
  reconcile: {
    load: async () => (await import("./fleetReconcile.js")).fleetReconcileCommand,
  },
  alerts: {
    load: async () => (await import("./fleetAlerts.js")).fleetAlertsCommand,
  },
  "dex-g85": {
    load: async () => (await import("./fleetDexG85.js")).fleetDexG85Command,
  },
  backup: {
    load: async () => (await import("./fleetBackup.js")).fleetBackupCommand,
  },
  rollout: {
    load: async () => (await import("./fleetRollout.js")).fleetRolloutCommand,
  },
  group: {
    load: async () => (await import("./fleetRollout.js")).fleetGroupCommand,
  },
  values: {
    load: async () => (await import("./fleetRollout.js")).fleetValuesCommand,
  },
  user: {
    load: async () => (await import("./fleetUser.js")).fleetUserCommand,
  },
};

/** Every fleet command's synopsis, rendered from the option tables (src/cli/fleetCommands.ts). */
function usage(): string {
  return renderCommandUsage(FLEET_COMMANDS);
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
