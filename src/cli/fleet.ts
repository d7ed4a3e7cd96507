/**
 * `vendd fleet <sub>`: the fleet server's subcommands (serve, units, approve, revoke, bundle upload). The
 * unit-side subcommands (enroll, …) are added to this dispatcher by their own module.
 */
import { printable } from "../core/printable.js";
import { FLEET_SERVER_USAGE } from "./fleetOptions.js";

export async function fleetCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case "serve":
      return (await import("./fleetServe.js")).fleetServeCommand(rest);
    case "units":
      return (await import("./fleetAdmin.js")).fleetUnitsCommand(rest);
    case "approve":
      return (await import("./fleetAdmin.js")).fleetApproveCommand(rest);
    case "revoke":
      return (await import("./fleetAdmin.js")).fleetRevokeCommand(rest);
    case "bundle":
      return (await import("./fleetAdmin.js")).fleetBundleCommand(rest);
    case "--help":
    case "-h":
    case "help":
      process.stdout.write(FLEET_SERVER_USAGE);
      return 0;
    default:
      process.stderr.write(
        `vendd fleet: ${sub === undefined ? "expected a subcommand" : `unknown subcommand '${printable(sub, 64)}'`}\n${FLEET_SERVER_USAGE}`,
      );
      return 2;
  }
}
