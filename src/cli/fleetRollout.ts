/**
 * `vendd fleet rollout create|status|pause|resume|abort|update-unit` and `vendd fleet group
 * add|remove|list` (issue 41), run against the fleet database directly (the server may be running; every
 * change is one transaction). Exit 0; 1 when refused or the database cannot be opened; 2 for a usage error.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { systemClock } from "../core/clock.js";
import { createLogger } from "../core/log.js";
import { printable } from "../core/printable.js";
import { listBundles } from "../fleet/bundles/listStore.js";
import { BundleUploadError, storeBundle } from "../fleet/bundles/store.js";
import { FleetConfigError, fleetConfigBundleKeys, fleetConfigDb } from "../fleet/config.js";
import type { FleetContext } from "../fleet/context.js";
import { openFleetDb } from "../fleet/database.js";
import { isPostgresUrl, redactUrl } from "../fleet/db/open.js";
import {
  addToGroup,
  groupNameProblem,
  listGroups,
  removeFromGroup,
  unknownUnits,
} from "../fleet/groups/index.js";
import {
  changeRollout,
  createRollout,
  parsePhaseSize,
  RolloutError,
  rolloutStatus,
  shownState,
  updateUnitNow,
} from "../fleet/rollouts/index.js";
import { listValues, setFleetValue, unsetFleetValue, ValueRefused } from "../fleet/values/index.js";
import { parsePublicKey } from "../update/minisign.js";
import { renderCommandUsage } from "./commandTable.js";
import {
  FLEET_COMMANDS,
  FLEET_GROUP_OPTIONS,
  FLEET_ROLLOUT_OPTIONS,
  FLEET_VALUES_OPTIONS,
} from "./fleetCommands.js";
import { fleetDbTarget } from "./fleetUser.js";
import { formatColumns } from "./table.js";

const usageOf = (prefix: string) =>
  `${renderCommandUsage(FLEET_COMMANDS.filter((c) => c.words.startsWith(prefix)))}--db: the fleet's SQLite file (default ./fleet.db, or $VENDD_FLEET_DB) or a postgres:// URL; --config: take the database (and bundleKeys) from the fleet config. See docs/fleet-managers.md, Rollouts.
`;

class Refused extends Error {}
class Usage extends Error {}

async function withFleet(
  name: string,
  db: string | undefined,
  config: string | undefined,
  action: (ctx: FleetContext) => Promise<number>,
): Promise<number> {
  let target = fleetDbTarget(db);
  if (db === undefined && config !== undefined) {
    try {
      target = fleetConfigDb(config) ?? target;
    } catch (e) {
      if (!(e instanceof FleetConfigError)) throw e;
      process.stderr.write(`vendd fleet ${name}: ${e.message}\n`);
      return 2;
    }
  }
  let fdb: Awaited<ReturnType<typeof openFleetDb>>;
  try {
    fdb = await openFleetDb(target, { create: false });
  } catch {
    process.stderr.write(
      `vendd fleet ${name}: cannot open the fleet database ${isPostgresUrl(target) ? redactUrl(target) : target}\n`,
    );
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
    return await action(ctx);
  } catch (e) {
    if (e instanceof RolloutError || e instanceof BundleUploadError) {
      process.stderr.write(`vendd fleet ${name}: refused (${e.code}): ${e.message}\n`);
      return 1;
    }
    if (e instanceof Refused || e instanceof ValueRefused) {
      process.stderr.write(`vendd fleet ${name}: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    await fdb.close();
  }
}

export async function fleetRolloutCommand(argv: string[]): Promise<number> {
  const usage = usageOf("fleet rollout");
  let p: ReturnType<typeof parseArgs<{ options: typeof FLEET_ROLLOUT_OPTIONS; allowPositionals: true }>>;
  try {
    p = parseArgs({ args: argv, options: FLEET_ROLLOUT_OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    process.stderr.write(
      `vendd fleet rollout: ${err instanceof Error ? err.message : String(err)}\n${usage}`,
    );
    return 2;
  }
  const v = p.values;
  if (v.help === true) {
    process.stdout.write(usage);
    return 0;
  }
  const [action, ...args] = p.positionals;
  const by = v.by ?? process.env.USER ?? "cli";
  const want = (n: number, what: string) => {
    if (args.length !== n) throw new Usage(`${action} takes ${what}`);
  };
  try {
    switch (action) {
      case "create": {
        want(0, "no argument (the bundle is --bundle FILE)");
        if (v.bundle === undefined) throw new Usage("create needs --bundle FILE (a signed bundle)");
        const targets = { all: v.all === true, groups: v.group ?? [], units: v.unit ?? [] };
        if (!targets.all && targets.groups.length === 0 && targets.units.length === 0)
          throw new Usage("create needs targets: --all, --group NAME or --unit ID");
        const canary = parsePhaseSize(v.canary ?? "1");
        const wave = parsePhaseSize(v.wave ?? "25%");
        if (canary === null)
          throw new Usage(`--canary ${printable(v.canary ?? "", 20)}: a count (3) or a share (10%)`);
        if (wave === null)
          throw new Usage(`--wave ${printable(v.wave ?? "", 20)}: a count (3) or a share (25%)`);
        const max = Number(v["max-failures"] ?? "0");
        if (!Number.isInteger(max) || max < 0 || max > 100)
          throw new Usage("--max-failures takes a whole percentage, 0-100");
        const bundleFile = v.bundle;
        return await withFleet("rollout create", v.db, v.config, async (ctx) => {
          const keyFiles =
            (v["bundle-key"] ?? []).length > 0 || v.config === undefined
              ? (v["bundle-key"] ?? [])
              : fleetConfigBundleKeys(v.config);
          const keys = keyFiles.map((k) => parsePublicKey(readFileSync(k, "utf8")));
          const bytes = readFileSync(bundleFile);
          // The bundle and its rollout in one transaction: no unit is offered it before its rollout exists.
          const made = await ctx.db.transaction().execute(async (trx) => {
            const stored = await storeBundle({ ...ctx, db: trx }, bytes, by, keys);
            return createRollout(
              ctx,
              { bundleId: stored.id, targets, canary, wave, maxFailurePct: max, by },
              trx,
            );
          });
          process.stdout.write(
            v.json === true
              ? `${JSON.stringify(made)}\n`
              : `rollout of ${made.bundleId} created: ${made.units} units in ${made.phases} phases (canary first); watch it with vendd fleet rollout status ${made.bundleId}\n`,
          );
          return 0;
        });
      }
      case "status": {
        want(1, "BUNDLE");
        const id = args[0] ?? "";
        return await withFleet("rollout status", v.db, v.config, async (ctx) => {
          const r = await rolloutStatus(ctx, id);
          if (r === null) return await directStatus(ctx, id, v.json === true);
          if (v.json === true) {
            const units = r.units.map((u) => ({ ...u, state: shownState(u.state) }));
            process.stdout.write(`${JSON.stringify({ ...r, units })}\n`);
            return 0;
          }
          const counts = new Map<string, number>();
          for (const u of r.units)
            counts.set(shownState(u.state), (counts.get(shownState(u.state)) ?? 0) + 1);
          process.stdout.write(
            `rollout of ${r.bundleId} (${r.kind} ${r.version}): ${r.state}${r.reason === "" ? "" : ` (${printable(r.reason, 300)})`}; phase ${r.currentPhase} of ${r.phases - 1}; ${[...counts].map(([s, n]) => `${n} ${s}`).join(", ")}\n`,
          );
          process.stdout.write(
            formatColumns(
              ["UNIT", "PHASE", "STATE", "REASON"],
              r.units.map((u) => [
                printable(u.unitId, 64),
                u.phase === null ? "-" : u.phase === -1 ? "now" : String(u.phase),
                shownState(u.state),
                printable(u.reason, 300),
              ]),
              { flex: 3, width: 140 },
            ),
          );
          return 0;
        });
      }
      case "pause":
      case "resume":
      case "abort": {
        want(1, "BUNDLE");
        const id = args[0] ?? "";
        return await withFleet(`rollout ${action}`, v.db, v.config, async (ctx) => {
          const state = await changeRollout(ctx, id, action, by);
          process.stdout.write(`rollout of ${printable(id, 128)}: ${state}\n`);
          return 0;
        });
      }
      case "update-unit": {
        want(2, "BUNDLE UNIT");
        const [id = "", unit = ""] = args;
        return await withFleet("rollout update-unit", v.db, v.config, async (ctx) => {
          await updateUnitNow(ctx, id, unit);
          process.stdout.write(
            `unit ${printable(unit, 64)} is offered ${printable(id, 128)} at its next heartbeat\n`,
          );
          return 0;
        });
      }
      default:
        throw new Usage(`expected create, status, pause, resume, abort or update-unit`);
    }
  } catch (e) {
    if (e instanceof Usage) {
      process.stderr.write(`vendd fleet rollout: ${e.message}\n${usage}`);
      return 2;
    }
    throw e;
  }
}

export async function fleetGroupCommand(argv: string[]): Promise<number> {
  const usage = usageOf("fleet group");
  let p: ReturnType<typeof parseArgs<{ options: typeof FLEET_GROUP_OPTIONS; allowPositionals: true }>>;
  try {
    p = parseArgs({ args: argv, options: FLEET_GROUP_OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    process.stderr.write(`vendd fleet group: ${err instanceof Error ? err.message : String(err)}\n${usage}`);
    return 2;
  }
  const v = p.values;
  if (v.help === true) {
    process.stdout.write(usage);
    return 0;
  }
  const [action, name, ...units] = p.positionals;
  if (action === "list") {
    return withFleet("group list", v.db, v.config, async (ctx) => {
      const groups = await listGroups(ctx.db);
      if (v.json === true) process.stdout.write(`${JSON.stringify({ groups })}\n`);
      else if (groups.length === 0) process.stdout.write("no groups\n");
      else for (const g of groups) process.stdout.write(`${g.name}: ${g.units.join(", ")}\n`);
      return 0;
    });
  }
  if ((action !== "add" && action !== "remove") || name === undefined || units.length === 0) {
    process.stderr.write(
      `vendd fleet group: expected add NAME UNIT..., remove NAME UNIT... or list\n${usage}`,
    );
    return 2;
  }
  const problem = groupNameProblem(name);
  if (problem !== null) {
    process.stderr.write(`vendd fleet group ${action}: ${problem}; nothing changed\n`);
    return 2;
  }
  return withFleet(`group ${action}`, v.db, v.config, async (ctx) => {
    if (action === "add") {
      const unknown = await unknownUnits(ctx.db, units);
      if (unknown.length > 0)
        throw new Refused(
          `no unit ${unknown.map((u) => printable(u, 64)).join(", ")} is enrolled (vendd fleet units lists them); nothing changed`,
        );
    }
    const n =
      action === "add" ? await addToGroup(ctx.db, name, units) : await removeFromGroup(ctx.db, name, units);
    const line = { group: name, [action === "add" ? "added" : "removed"]: n };
    process.stdout.write(
      v.json === true
        ? `${JSON.stringify(line)}\n`
        : `group ${name}: ${n} unit(s) ${action === "add" ? "added" : "removed"}\n`,
    );
    return 0;
  });
}

/** `vendd fleet values set|unset|list` (issue 41): the values the fleet holds for a unit or a group. */
export async function fleetValuesCommand(argv: string[]): Promise<number> {
  const usage = usageOf("fleet values");
  let p: ReturnType<typeof parseArgs<{ options: typeof FLEET_VALUES_OPTIONS; allowPositionals: true }>>;
  try {
    p = parseArgs({ args: argv, options: FLEET_VALUES_OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    process.stderr.write(`vendd fleet values: ${err instanceof Error ? err.message : String(err)}\n${usage}`);
    return 2;
  }
  const v = p.values;
  if (v.help === true) {
    process.stdout.write(usage);
    return 0;
  }
  const [action, key, value, ...extra] = p.positionals;
  const bad = (m: string) => {
    process.stderr.write(`vendd fleet values: ${m}\n${usage}`);
    return 2;
  };
  if (v.unit !== undefined && v.group !== undefined) return bad("--unit or --group, not both");
  const target =
    v.unit !== undefined
      ? { scope: "unit" as const, target: v.unit }
      : v.group !== undefined
        ? { scope: "group" as const, target: v.group }
        : null;
  if (action === "list") {
    return withFleet("values list", v.db, v.config, async (ctx) => {
      const rows = await listValues(ctx.db, target ?? {});
      if (v.json === true) process.stdout.write(`${JSON.stringify({ values: rows })}\n`);
      else if (rows.length === 0) process.stdout.write("no values\n");
      else
        for (const r of rows)
          process.stdout.write(
            `${r.scope === "unit" ? "unit" : "group"}:${r.target} ${r.key} = ${JSON.stringify(r.value)}\n`,
          );
      return 0;
    });
  }
  if (target === null) return bad("name the unit (--unit ID) or the group (--group NAME)");
  const by = v.by ?? process.env.USER ?? "cli";
  if (action === "set") {
    if (key === undefined || value === undefined || extra.length > 0) return bad("expected set KEY VALUE");
    return withFleet("values set", v.db, v.config, async (ctx) => {
      const stored = await setFleetValue(ctx, target.scope, target.target, key, value, by);
      process.stdout.write(`${target.scope} ${target.target}: ${key} = ${JSON.stringify(stored)}\n`);
      return 0;
    });
  }
  if (action === "unset") {
    if (key === undefined || value !== undefined) return bad("expected unset KEY");
    return withFleet("values unset", v.db, v.config, async (ctx) => {
      const removed = await unsetFleetValue(ctx, target.scope, target.target, key, by);
      process.stdout.write(
        removed
          ? `${target.scope} ${target.target}: ${key} unset\n`
          : `${target.scope} ${target.target}: no value for ${key}\n`,
      );
      return 0;
    });
  }
  return bad("expected set KEY VALUE, unset KEY or list");
}

/**
 * `rollout status` of a bundle uploaded without a rollout: it is offered to the units its targets name, and
 * each unit's steps are shown the same way (its state and reason: a refusal says why).
 */
async function directStatus(ctx: FleetContext, id: string, json: boolean): Promise<number> {
  const b = (await listBundles(ctx)).find((x) => x.id === id);
  if (b === undefined) throw new Refused(`no bundle and no rollout ${printable(id, 128)}`);
  const units = b.rollouts.map((u) => ({
    unitId: u.unitId,
    phase: null,
    state: shownState(u.state),
    reason: u.reason,
    updatedAt: u.updatedAt,
  }));
  const reason = `no rollout: offered to the units its targets name (${b.targets.join(", ")})`;
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ bundleId: b.id, kind: b.kind, version: b.version, state: "direct", reason, units })}\n`,
    );
    return 0;
  }
  const counts = new Map<string, number>();
  for (const u of units) counts.set(u.state, (counts.get(u.state) ?? 0) + 1);
  process.stdout.write(
    `bundle ${b.id} (${b.kind} ${b.version}): ${printable(reason, 300)}; ${[...counts].map(([st, n]) => `${n} ${st}`).join(", ") || "no unit reported yet"}\n`,
  );
  process.stdout.write(
    formatColumns(
      ["UNIT", "PHASE", "STATE", "REASON"],
      units.map((u) => [printable(u.unitId, 64), "-", u.state, printable(u.reason, 300)]),
      { flex: 3, width: 140 },
    ),
  );
  return 0;
}
