/**
 * `vendd journal export [--config FILE | --journal PATH] [--from DATE] [--to DATE] [--out FILE]` (issue 17):
 * the journal's finished sessions as JSON lines of fleetWire `SessionData`, read-only (safe while vendd runs).
 * Days are local calendar days (the process's time zone), both included. With `--dex` (issue 42): the
 * journal's DEX reads instead, one JSON line each (journal/dexExport.ts).
 */

import { existsSync } from "node:fs";
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfig } from "../config/load.js";
import { writeFileAtomic } from "../core/atomicFile.js";
import { dayRefusal } from "../core/days.js";
import { dayStart, nextDay } from "../fleet/reconcile/run.js";
import { exportDexReads } from "../journal/dexExport.js";
import { exportSessions } from "../journal/export.js";
import { describeRefusal } from "../journal/problems.js";
import type { CliIo } from "./command.js";

export interface ExportValues {
  config?: string;
  journal?: string;
  from?: string;
  to?: string;
  out?: string;
  dex?: boolean;
}

/** The process's time zone (local days). */
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** Journal path and currency from `--journal` or the config; null after printing why not. */
export function journalSource(
  values: { config?: string; journal?: string },
  out: CliIo,
  who: string,
): { path: string; currency: string | null; unitId: string | null } | null {
  // Without a config the journal itself says its unit and currency (journal/export.ts journalIdentity).
  if (values.journal !== undefined && values.config === undefined)
    return { path: values.journal, currency: null, unitId: null };
  const file = values.config ?? DEFAULT_CONFIG_FILE;
  try {
    const { config } = loadConfig(file, { env: out.env, requireSecrets: false });
    return { path: values.journal ?? config.journal.path, currency: config.currency, unitId: config.unit.id };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    out.stderr.write(`${who}: invalid configuration ${file}:\n${err.message}\n`);
    return null;
  }
}

export function journalExportCommand(values: ExportValues, out: CliIo): number {
  for (const [name, d] of [
    ["--from", values.from],
    ["--to", values.to],
  ] as const) {
    const refusal = d === undefined ? null : dayRefusal(name, d);
    if (refusal !== null) {
      out.stderr.write(`vendd journal export: ${refusal}\n`);
      return 2;
    }
  }
  if (values.from !== undefined && values.to !== undefined && values.to < values.from) {
    out.stderr.write(`vendd journal export: --to ${values.to} is before --from ${values.from}\n`);
    return 2;
  }
  const src = journalSource(values, out, "vendd journal export");
  if (src === null) return 1;
  if (!existsSync(src.path)) {
    out.stderr.write(`vendd journal export: no journal at ${src.path}\n`);
    return 1;
  }
  const tz = localZone();
  try {
    if (values.dex === true) {
      const reads = exportDexReads(src.path, {
        ...(values.from === undefined ? {} : { from: dayStart(values.from, tz) }),
        ...(values.to === undefined ? {} : { to: dayStart(nextDay(values.to), tz) }),
      });
      const text = reads.map((r) => `${JSON.stringify(r)}\n`).join("");
      if (values.out === undefined) out.stdout.write(text);
      else {
        writeFileAtomic(values.out, text);
        out.stderr.write(`vendd journal export: ${reads.length} DEX read(s) written to ${values.out}\n`);
      }
      return 0;
    }
    const r = exportSessions(src.path, {
      currency: src.currency,
      ...(values.from === undefined ? {} : { from: dayStart(values.from, tz) }),
      ...(values.to === undefined ? {} : { to: dayStart(nextDay(values.to), tz) }),
    });
    const text = r.sessions.map((s) => `${JSON.stringify(s)}\n`).join("");
    if (values.out === undefined) out.stdout.write(text);
    else writeFileAtomic(values.out, text);
    for (const s of r.skipped)
      out.stderr.write(`vendd journal export: session ${s.orderId} left out (${s.why})\n`);
    if (values.out !== undefined)
      out.stderr.write(`vendd journal export: ${r.sessions.length} session(s) written to ${values.out}\n`);
    return 0;
  } catch (err) {
    const refusal = describeRefusal(err);
    if (refusal === null) throw err;
    out.stderr.write(`vendd journal export: ${refusal}`);
    return 1;
  }
}
