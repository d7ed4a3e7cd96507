/**
 * `vendd fleet dex-g85 --unit ID --by NAME --reason TEXT [--db FILE|URL]` (issue 42): a manager marks a unit's
 * vending machine as one whose EVA-DTS G85 check is always wrong (some firmware writes it wrongly). The
 * three-way report then uses that machine's unverified reads and says so in each row it affects;
 * `--clear` removes the mark. Exit 0 done; 1 the database cannot be opened or the unit is unknown; 2 usage.
 */
import { parseArgs } from "node:util";
import { printable } from "../core/printable.js";
import { openFleetDb } from "../fleet/database.js";
import { isPostgresUrl, redactUrl } from "../fleet/db/open.js";
import { setG85Mark, unitExists } from "../fleet/dex/store.js";
import { renderCommandUsage } from "./commandTable.js";
import { FLEET_COMMANDS, FLEET_DEX_G85_OPTIONS } from "./fleetCommands.js";
import { fleetDbTarget } from "./fleetUser.js";

const USAGE = `${renderCommandUsage(FLEET_COMMANDS.filter((c) => c.words === "fleet dex-g85"))}
Marks the unit's machine as one whose G85 check is always wrong, with who and why (both required), or
--clear removes the mark. Without a mark, a read whose G85 fails is kept but unverified: the DEX report
never turns its counters into a difference. --db: the fleet's SQLite file (default ./fleet.db, or
$VENDD_FLEET_DB) or a postgres:// URL. See docs/dex.md.
`;

export async function fleetDexG85Command(argv: string[]): Promise<number> {
  let values: { unit?: string; by?: string; reason?: string; clear?: boolean; db?: string; help?: boolean };
  try {
    values = parseArgs({
      args: argv,
      options: FLEET_DEX_G85_OPTIONS,
      allowPositionals: false,
      strict: true,
    }).values;
  } catch (err) {
    process.stderr.write(
      `vendd fleet dex-g85: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`,
    );
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { unit, by, reason } = values;
  const clear = values.clear === true;
  const text = (v: string | undefined) => v !== undefined && v.trim() !== "" && v.length <= 200;
  if (unit === undefined || (!clear && (!text(by) || !text(reason)))) {
    process.stderr.write(
      `vendd fleet dex-g85: --unit, and to mark: --by NAME and --reason TEXT (1-200 characters each); or --clear\n${USAGE}`,
    );
    return 2;
  }
  const target = fleetDbTarget(values.db);
  const where = isPostgresUrl(target) ? redactUrl(target) : target;
  let fdb: Awaited<ReturnType<typeof openFleetDb>>;
  try {
    fdb = await openFleetDb(target, { create: false });
  } catch {
    process.stderr.write(`vendd fleet dex-g85: cannot open the fleet database ${where} (--db FILE|URL)\n`);
    return 1;
  }
  try {
    if (!(await unitExists(fdb.db, unit))) {
      process.stderr.write(
        `vendd fleet dex-g85: no unit '${printable(unit, 64)}' in the fleet (vendd fleet units lists them)\n`,
      );
      return 1;
    }
    await setG85Mark(
      fdb.db,
      unit,
      clear ? null : { by: (by ?? "").trim(), reason: (reason ?? "").trim(), at: Date.now() },
    );
    process.stdout.write(
      clear
        ? `unit ${unit}: G85 mark removed; its reads with a bad G85 are unverified again\n`
        : `unit ${unit}: G85 marked as always wrong; its reads are used, and the DEX report says so\n`,
    );
    return 0;
  } finally {
    await fdb.close();
  }
}
