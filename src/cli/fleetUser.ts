/**
 * `vendd fleet user add NAME --role viewer|manager [--db FILE|URL] [--password-file FILE]`,
 * `vendd fleet user list [--db FILE|URL] [--json]`, `vendd fleet user remove NAME [--db FILE|URL]`:
 * the dashboard's accounts. The password comes from the first line of --password-file, or from a prompt
 * (no echo) or standard input, never from argv. Removing a user ends their sessions.
 */
import { parseArgs } from "node:util";
import { printable } from "../core/printable.js";
import { FleetConfigError, fleetConfigDb } from "../fleet/config.js";
import { openFleetDb } from "../fleet/database.js";
import { isPostgresUrl, redactUrl } from "../fleet/db/open.js";
import { AccountError, addUser, listUsers, ROLES, type Role, removeUser } from "../fleet/web/accounts.js";
import { argsProblem } from "./cliArgs.js";
import { renderCommandUsage } from "./commandTable.js";
import { FLEET_COMMANDS, FLEET_USER_OPTIONS } from "./fleetCommands.js";
import { readPassphrase } from "./keys.js";

export const FLEET_USER_USAGE = `${renderCommandUsage(FLEET_COMMANDS.filter((c) => c.words.startsWith("fleet user ")))}
Dashboard accounts. A viewer sees every page; a manager also approves and revokes units. The password
(at least 10 characters) is read from --password-file (first line) or prompted for (or read from standard
input), never from the command line. --db: the fleet's SQLite file (default ./fleet.db, or $VENDD_FLEET_DB)
or a postgres:// URL; --config: the database the fleet config names.
`;

/** The fleet database: --db, else $VENDD_FLEET_DB, else ./fleet.db (as `vendd fleet serve`). */
export function fleetDbTarget(db: string | undefined): string {
  return db ?? process.env.VENDD_FLEET_DB ?? "./fleet.db";
}

export async function fleetUserCommand(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    process.stderr.write(`vendd fleet user: ${argsProblem(err)}\n${FLEET_USER_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(FLEET_USER_USAGE);
    return 0;
  }
  const [action, name, ...extra] = positionals;
  const needsName = action === "add" || action === "remove";
  if (
    (action !== "add" && action !== "list" && action !== "remove") ||
    (needsName && name === undefined) ||
    (!needsName && name !== undefined) ||
    extra.length > 0
  ) {
    process.stderr.write(FLEET_USER_USAGE);
    return 2;
  }
  let role: Role | undefined;
  if (action === "add") {
    const r = values.role;
    if (r === undefined || !ROLES.includes(r as Role)) {
      process.stderr.write(`vendd fleet user add: --role viewer|manager is required\n`);
      return 2;
    }
    role = r as Role;
  }
  let target = fleetDbTarget(values.db);
  if (values.db === undefined && values.config !== undefined) {
    // The database the fleet config names (--db wins, as for every fleet admin command).
    try {
      target = fleetConfigDb(values.config) ?? target;
    } catch (e) {
      if (!(e instanceof FleetConfigError)) throw e;
      process.stderr.write(`vendd fleet user: ${e.message}\n`);
      return 2;
    }
  }
  const where = isPostgresUrl(target) ? redactUrl(target) : target;
  let password = "";
  if (action === "add") {
    try {
      password = await readPassphrase(values["password-file"], `Password for ${name ?? ""}: `, true);
    } catch (err) {
      process.stderr.write(`vendd fleet user add: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    }
  }
  let db: Awaited<ReturnType<typeof openFleetDb>>;
  try {
    db = await openFleetDb(target, { create: false });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    process.stderr.write(`vendd fleet user: ${isPostgresUrl(target) ? redact(msg, target) : msg}\n`);
    return 1;
  }
  try {
    if (action === "add" && name !== undefined && role !== undefined) {
      await addUser(db.db, name, password, role, Date.now());
      process.stdout.write(`user ${name} added (${role}) in ${where}\n`);
      return 0;
    }
    if (action === "remove" && name !== undefined) {
      if (!(await removeUser(db.db, name))) {
        process.stderr.write(`vendd fleet user remove: no user ${printable(name, 64)}\n`);
        return 1;
      }
      process.stdout.write(`user ${name} removed; their sessions ended\n`);
      return 0;
    }
    const users = await listUsers(db.db);
    if (values.json === true) {
      process.stdout.write(
        `${JSON.stringify(users.map((u) => ({ ...u, created_at: new Date(u.created_at).toISOString() })))}\n`,
      );
    } else if (users.length === 0) {
      process.stdout.write("no users (add one: vendd fleet user add NAME --role manager)\n");
    } else {
      for (const u of users)
        process.stdout.write(
          `${u.username.padEnd(24)} ${u.role.padEnd(8)} ${new Date(u.created_at).toISOString()}\n`,
        );
    }
    return 0;
  } catch (err) {
    if (err instanceof AccountError) {
      process.stderr.write(`vendd fleet user ${action}: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await db.close();
  }
}

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: FLEET_USER_OPTIONS, allowPositionals: true, strict: true });
}

/** A database error may quote the URL: never print its password. */
function redact(message: string, url: string): string {
  try {
    const password = new URL(url).password;
    return password === ""
      ? message
      : message.split(decodeURIComponent(password)).join("***").split(password).join("***");
  } catch {
    return message;
  }
}
