/**
 * Issue 41: the spool of a bundle's steps on the unit, between the processes that know them and the one
 * that sends them. The root applier has no network (vendd-bundle.service: PrivateNetwork=yes), so it
 * writes each step (verified, applied, healthy, committed, refused, rolled back) as one small file in
 * `<updates.inbox>/steps/` the moment it happens; the daemon, which holds the unit key and talks to the
 * fleet, adds its own `fetched`, sends them in order (POST /api/unit/v1/steps) and removes each once the
 * fleet acknowledged it, retrying with its backoff until then. The directory is the daemon's (the inbox is
 * owned by its user), so it may remove the applier's files; `steps` has no dot, so `vendd-bundle.path`'s
 * `inbox/*.*` never matches it, and the applier's inbox scan reads only files. A step file carries no secret.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import { writeFileAtomic } from "../core/atomicFile.js";
import { BundleStep, type StepReport } from "../core/fleetWire.js";

/** The spool's directory under the inbox. */
export const STEP_SPOOL = "steps";

/** A step without the unit id (the daemon adds its own). */
export type SpooledStep = Omit<StepReport, "unitId">;

const Spooled = z.strictObject({
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  step: BundleStep,
  reason: z.string().max(500),
  at: z.number().int().nonnegative(),
});

let written = 0;

/** Writes one step into `<inbox>/steps/` (created when missing), atomically; never throws (logged by caller). */
export function spoolStep(inbox: string, s: SpooledStep): string {
  const dir = join(inbox, STEP_SPOOL);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  written += 1;
  const name = `${String(s.at).padStart(15, "0")}-${process.pid}-${written}-${s.step}.json`;
  const reason = s.reason.length > 500 ? `${s.reason.slice(0, 497)}...` : s.reason;
  writeFileAtomic(join(dir, name), `${JSON.stringify({ ...s, reason })}\n`, { mode: 0o644 });
  return name;
}

/** The spooled steps in the order they were written; a malformed file is removed (it can never be sent). */
export function spooledSteps(inbox: string): { name: string; step: SpooledStep }[] {
  const dir = join(inbox, STEP_SPOOL);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json") && !n.startsWith("."));
  } catch {
    return [];
  }
  const out: { name: string; step: SpooledStep }[] = [];
  for (const name of names.sort()) {
    let parsed: SpooledStep | null = null;
    try {
      const r = Spooled.safeParse(JSON.parse(readFileSync(join(dir, name), "utf8")));
      if (r.success) parsed = r.data;
    } catch {
      parsed = null;
    }
    if (parsed === null) rmSync(join(dir, name), { force: true });
    else out.push({ name, step: parsed });
  }
  return out;
}

/** Removes a step the fleet acknowledged. */
export function dropSpooledStep(inbox: string, name: string): void {
  rmSync(join(inbox, STEP_SPOOL, name), { force: true });
}
