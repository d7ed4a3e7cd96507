/**
 * `vendd fleet serve`: runs the fleet server until SIGTERM or SIGINT, then closes it cleanly (in-flight
 * requests finish, the database is closed). `vendd fleet serve` alone serves ./fleet.db on 127.0.0.1:8380.
 */
import { readFileSync } from "node:fs";
import { fleetServerFaultPointsFromEnv, NO_FLEET_SERVER_FAULTS } from "../core/faults.js";
import { printable } from "../core/printable.js";
import { startFleetServer } from "../fleet/server.js";
import { type PublicKey, parsePublicKey } from "../update/minisign.js";
import {
  checkTimeZone,
  FLEET_SERVER_USAGE,
  FleetUsageError,
  parseFleetArgs,
  parseListen,
} from "./fleetOptions.js";

const DEFAULT_LISTEN = "127.0.0.1:8380";

/** A minisign public key file for `--bundle-key`; FleetUsageError when unreadable or not a key. */
function readBundleKey(file: string): PublicKey {
  try {
    return parsePublicKey(readFileSync(file, "utf8"));
  } catch (err) {
    throw new FleetUsageError(
      `--bundle-key ${printable(file, 200)}: ${err instanceof Error ? err.message : "unreadable"}`,
    );
  }
}

function reportingZone(given: string | undefined, env: NodeJS.ProcessEnv): string {
  if (given !== undefined) return checkTimeZone(given);
  const tz = env.TZ;
  if (tz === undefined || tz === "") return "UTC";
  try {
    return checkTimeZone(tz);
  } catch {
    process.stderr.write(
      `vendd fleet serve: TZ=${printable(tz, 64)} is not a time zone; counting days in UTC\n`,
    );
    return "UTC";
  }
}

export async function fleetServeCommand(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parseFleetArgs>;
  let listen: { host: string; port: number };
  let timeZone: string;
  let bundleKeys: PublicKey[];
  try {
    args = parseFleetArgs(argv);
    if (args.help) {
      process.stdout.write(FLEET_SERVER_USAGE);
      return 0;
    }
    if (args.positionals.length > 0)
      throw new FleetUsageError(`unexpected ${printable(args.positionals.join(" "), 64)}`);
    bundleKeys = args.bundleKeys.map((file) => readBundleKey(file));
    listen = parseListen(args.listen ?? DEFAULT_LISTEN);
    timeZone = reportingZone(args.timeZone, process.env);
  } catch (err) {
    if (err instanceof FleetUsageError) {
      process.stderr.write(`vendd fleet serve: ${err.message}\n${FLEET_SERVER_USAGE}`);
      return 2;
    }
    throw err;
  }
  // Only the fleet's own fault points: a unit's VENDD_FAULT_POINT in the same environment arms nothing here.
  const spec = process.env.VENDD_FAULT_POINT ?? "";
  const faults = spec.startsWith("fleet.")
    ? fleetServerFaultPointsFromEnv(process.env)
    : NO_FLEET_SERVER_FAULTS;
  const server = await startFleetServer({
    db: args.db,
    host: listen.host,
    port: listen.port,
    timeZone,
    faults,
    bundleKeys,
    ...(args.logLevel === undefined ? {} : { logLevel: args.logLevel }),
  });
  return new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      server.ctx.logger.info({ signal }, "fleet server stopping");
      server.close().then(
        () => resolve(0),
        (err: unknown) => {
          process.stderr.write(`vendd fleet serve: ${err instanceof Error ? err.message : String(err)}\n`);
          resolve(1);
        },
      );
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
    // Printed once the handlers are in place: whoever reads the URL may stop the server at once.
    process.stdout.write(
      `vendd fleet: serving ${server.url} (database ${server.where}, sales days in ${timeZone})\n`,
    );
  });
}
