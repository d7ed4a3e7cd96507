/**
 * An alert's life, as a pure function: from the open alerts and the conditions that hold now, what to do.
 *
 * - a condition with no open alert for its (unit, rule) opens one (one message);
 * - a condition with an open alert keeps it open (its detail updated, no message), and sends it again when
 *   it is unacknowledged and `renotifyMs` has passed since the last message;
 * - an open alert whose condition has been clear for `holdOffMs` (since the last evaluation it held in) is
 *   resolved (one message). A condition that comes back within the hold-off never closed its alert, so a
 *   flapping unit makes one alert, not one per flap.
 */
import { durationWords } from "./duration.js";
import type { Finding } from "./rules.js";
import type { AlertRule } from "./schema.js";

export interface OpenAlert {
  id: string;
  unitId: string;
  rule: AlertRule;
  detail: string;
  lastTrueAt: number;
  lastNotifiedAt: number;
  ackedAt: number | null;
  /** Its last message was kept back by a silence (issue 42). */
  silenced?: boolean;
}

export type LifeAction =
  | { kind: "open"; unitId: string; rule: AlertRule; detail: string }
  | { kind: "hold"; id: string; detail: string; renotify: boolean }
  | { kind: "resolve"; id: string; detail: string };

export const keyOf = (unitId: string, rule: string): string => `${rule}\u0000${unitId}`;

export function planLife(
  open: readonly OpenAlert[],
  findings: readonly Finding[],
  now: number,
  holdOffMs: number,
  renotifyMs: number,
): LifeAction[] {
  const byKey = new Map(open.map((a) => [keyOf(a.unitId, a.rule), a]));
  const seen = new Set<string>();
  const out: LifeAction[] = [];
  for (const f of findings) {
    const k = keyOf(f.unitId, f.rule);
    if (seen.has(k)) continue;
    seen.add(k);
    const a = byKey.get(k);
    if (a === undefined) {
      out.push({ kind: "open", unitId: f.unitId, rule: f.rule, detail: f.detail });
      continue;
    }
    const renotify = a.ackedAt === null && renotifyMs > 0 && now - a.lastNotifiedAt >= renotifyMs;
    out.push({ kind: "hold", id: a.id, detail: f.detail, renotify });
  }
  for (const a of open) {
    if (seen.has(keyOf(a.unitId, a.rule))) continue;
    if (now - a.lastTrueAt >= holdOffMs)
      out.push({
        kind: "resolve",
        id: a.id,
        detail: `clear for ${durationWords(now - a.lastTrueAt)}`,
      });
  }
  return out;
}
