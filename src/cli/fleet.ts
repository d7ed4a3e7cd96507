/**
 * `vendd fleet …`: the fleet server's commands. This dispatcher holds the dashboard's account commands
 * (`fleet user`); the server's own subcommands (serve, approve, revoke, bundle) join it here.
 */
import { FLEET_USER_USAGE, fleetUserCommand } from "./fleetUser.js";

const USAGE = `usage: vendd fleet <subcommand> [options]

subcommands:
${FLEET_USER_USAGE.replace(/^usage: /, "       ")}`;

export async function fleetCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (sub === "user") return fleetUserCommand(rest);
  process.stderr.write(USAGE);
  return 2;
}
