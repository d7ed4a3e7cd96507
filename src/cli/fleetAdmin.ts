/**
 * The fleet's administrative subcommands, run against the fleet database directly (the server may be
 * running: SQLite WAL and PostgreSQL both allow it): `vendd fleet units`, `approve UNIT`, `revoke UNIT`,
 * `bundle upload FILE`.
 */
import { readFileSync } from "node:fs";
import { systemClock } from "../core/clock.js";
import { createLogger } from "../core/log.js";
import { printable } from "../core/printable.js";
import { BundleUploadError, storeBundle } from "../fleet/bundles/store.js";
import { FleetConfigError, fleetConfigBundleKeys, fleetConfigDb } from "../fleet/config.js";
import type { FleetContext } from "../fleet/context.js";
import { openFleetDb } from "../fleet/database.js";
import { type FleetDb, FleetDbError, isPostgresUrl, redactUrl } from "../fleet/db/open.js";
import { approveUnit, configShown, listUnits, releaseShown, revokeUnit } from "../fleet/units/index.js";
import { type PublicKey, parsePublicKey } from "../update/minisign.js";
import {
  FLEET_SERVER_USAGE,
  type FleetArgs,
  FleetUsageError,
  fleetCommandUsage,
  parseFleetArgs,
} from "./fleetOptions.js";
import { formatColumns } from "./table.js";

type Action = (ctx: FleetContext, args: FleetArgs) => Promise<number>;

async function withDb(name: string, argv: string[], positionals: number, action: Action): Promise<number> {
  let args: FleetArgs;
  try {
    args = parseFleetArgs(argv);
    if (args.help) {
      process.stdout.write(FLEET_SERVER_USAGE);
      return 0;
    }
    if (args.config !== undefined) {
      // Only the database is taken from the fleet config here (--db or $VENDD_FLEET_DB win).
      try {
        const db = fleetConfigDb(args.config);
        if (!args.dbGiven && db !== undefined) args = { ...args, db };
      } catch (e) {
        if (e instanceof FleetConfigError) throw new FleetUsageError(e.message);
        throw e;
      }
    }
    if (args.positionals.length !== positionals)
      throw new FleetUsageError(
        positionals === 0
          ? `unexpected ${printable(args.positionals.join(" "), 64)}`
          : `expected ${positionals === 1 ? "one argument" : `${positionals} arguments`}`,
      );
  } catch (err) {
    if (err instanceof FleetUsageError) {
      process.stderr.write(`vendd fleet ${name}: ${err.message}\n${fleetCommandUsage(name)}`);
      return 2;
    }
    throw err;
  }
  let fdb: FleetDb;
  try {
    fdb = await openFleetDb(args.db, { create: name === "init" });
  } catch (err) {
    if (!(err instanceof FleetDbError)) throw err;
    process.stderr.write(`vendd fleet ${name}: ${err.message}\n`);
    return 1;
  }
  const ctx: FleetContext = {
    db: fdb.db,
    dialect: fdb.dialect,
    clock: systemClock,
    logger: createLogger({ level: "silent" }),
    timeZone: "UTC",
  };
  try {
    return await action(ctx, args);
  } finally {
    await fdb.close();
  }
}

const when = (ms: number | null): string => (ms === null ? "never" : new Date(ms).toISOString());

export function fleetUnitsCommand(argv: string[]): Promise<number> {
  return withDb("units", argv, 0, async (ctx, args) => {
    // The dashboard's own list (fleet/units/store.ts): the same backlog (what the fleet does not hold yet),
    // the same versions.
    const list = await listUnits(ctx);
    const units = list.map((u) => ({
      id: u.id,
      label: u.label,
      status: u.status,
      fingerprint: u.fingerprint,
      committed_seq: u.committedSeq,
      last_seen_at: u.lastSeenAt,
      config_version: u.configVersion,
      release_version: u.releaseVersion,
      vendd_version: u.venddVersion,
      backlog_events: u.backlogEvents,
      unresolved: u.unresolved,
    }));
    if (args.json) {
      process.stdout.write(`${JSON.stringify({ units }, null, 2)}\n`);
      return 0;
    }
    if (units.length === 0) {
      process.stdout.write("no units enrolled\n");
      return 0;
    }
    process.stdout.write(
      formatColumns(
        ["UNIT", "STATUS", "FINGERPRINT", "SEQ", "LAST SEEN", "CONFIG", "RELEASE", "BACKLOG", "LABEL"],
        list.map((u) => [
          printable(u.id, 64),
          u.status,
          u.fingerprint,
          String(u.committedSeq),
          when(u.lastSeenAt),
          printable(configShown(u) ?? "-", 32),
          printable(releaseShown(u) ?? "-", 40),
          String(u.backlogEvents),
          printable(u.label, 200),
        ]),
        { flex: 8, right: [3, 7], width: 160 },
      ),
    );
    return 0;
  });
}

function decision(name: "approve" | "revoke"): (argv: string[]) => Promise<number> {
  return (argv) =>
    withDb(name, argv, 1, async (ctx, args) => {
      const unitId = args.positionals[0] ?? "";
      const r = await (name === "approve" ? approveUnit : revokeUnit)(ctx, unitId, args.by);
      const shown = printable(unitId, 64);
      if (r === "notFound") {
        process.stderr.write(`vendd fleet ${name}: no unit ${shown} is enrolled\n`);
        return 1;
      }
      if (r === "alreadyRevoked") {
        if (name === "revoke") {
          // What was asked is true: nothing to do, and a script that revokes twice must not fail.
          process.stdout.write(`unit ${shown} was already revoked; nothing changed\n`);
          return 0;
        }
        process.stderr.write(
          `vendd fleet approve: unit ${shown} is revoked and cannot be approved again; it must enrol anew with a new key (vendd fleet enroll on the unit)\n`,
        );
        return 1;
      }
      process.stdout.write(
        `unit ${shown} ${name === "approve" ? "approved" : "revoked"} by ${printable(args.by, 64)}\n`,
      );
      return 0;
    });
}

/** `vendd fleet init`: creates (and migrates) the fleet database; the admin commands never create one. */
export function fleetInitCommand(argv: string[]): Promise<number> {
  return withDb("init", argv, 0, async (_ctx, args) => {
    const where = isPostgresUrl(args.db) ? redactUrl(args.db) : args.db;
    process.stdout.write(`fleet database ready: ${where}\n`);
    return 0;
  });
}

export const fleetApproveCommand = decision("approve");
export const fleetRevokeCommand = decision("revoke");

/** `vendd fleet bundle upload FILE`. */
export function fleetBundleCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action !== "upload" || argv.includes("--help") || argv.includes("-h")) {
    if (argv.includes("--help") || argv.includes("-h")) {
      process.stdout.write(FLEET_SERVER_USAGE);
      return Promise.resolve(0);
    }
    process.stderr.write(`vendd fleet bundle: expected \`upload FILE\`\n${FLEET_SERVER_USAGE}`);
    return Promise.resolve(2);
  }
  return withDb("bundle upload", rest, 1, async (ctx, args) => {
    const file = args.positionals[0] ?? "";
    try {
      // The fleet's bundle keys: --bundle-key, else the fleet config's bundleKeys (--config FILE).
      let keys: PublicKey[];
      const fromFlags = args.bundleKeys.length > 0 || args.config === undefined;
      const setting = fromFlags ? "--bundle-key" : `bundleKeys of ${printable(args.config ?? "", 200)}`;
      try {
        const files = fromFlags ? args.bundleKeys : fleetConfigBundleKeys(args.config ?? "");
        keys = files.map((k) => parsePublicKey(readFileSync(k, "utf8")));
      } catch (err) {
        process.stderr.write(
          `vendd fleet bundle upload: ${setting}: ${err instanceof Error ? err.message : "unreadable"}\n`,
        );
        return 2;
      }
      if (keys.length === 0)
        process.stderr.write(
          "vendd fleet bundle upload: warning: no bundle keys (--bundle-key FILE, or bundleKeys in the fleet config --config FILE): the signature is not checked and the bundle is stored unverified\n",
        );
      const b = await storeBundle(ctx, readFileSync(file), args.by, keys);
      const line = {
        id: b.id,
        kind: b.kind,
        version: b.version,
        targets: b.targets,
        sha256: b.sha256,
        size: b.size,
        created: b.created,
        verified: b.verified,
      };
      process.stdout.write(
        args.json
          ? `${JSON.stringify(line)}\n`
          : `${b.created ? "stored" : "already stored"}${b.verified ? "" : " UNVERIFIED"}: bundle ${b.id} (${b.kind} ${b.version}) for ${b.targets.join(", ")}, sha256 ${b.sha256}\n`,
      );
      return 0;
    } catch (err) {
      if (err instanceof BundleUploadError) {
        process.stderr.write(`vendd fleet bundle upload: refused (${err.code}): ${err.message}\n`);
        return 1;
      }
      throw err;
    }
  });
}
