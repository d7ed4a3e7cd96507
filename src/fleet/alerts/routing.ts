/**
 * Routing and silences as pure functions (issue 42): which receivers a change goes to, and which silence
 * or maintenance window (if any) keeps it from being sent. A receiver is a delivery channel: `mail` (the
 * `mail.to` list), `mail:<address>` (an address a route names) or `webhook:<name>`.
 *
 * - No routes configured: every change goes to `mail` and every webhook (as before routing existed).
 * - Routes configured: every route whose lists all match (rule, severity, one of the unit's groups, the
 *   unit's company) adds its receivers, each receiver once. A change no route matches goes to the
 *   default receivers: `mail.to` and the webhooks no route names.
 */
import type { AlertRule } from "./schema.js";
import { type AlertSettings, DEFAULT_SEVERITY, type Severity } from "./settings.js";

/** What routes and silences know of a unit: its groups, and its company's id, name and organisation number. */
export interface UnitScope {
  groups: readonly string[];
  company: readonly string[];
}

export const NO_SCOPE: UnitScope = { groups: [], company: [] };

export interface Silence {
  id: string;
  kind: "silence" | "maintenance";
  unitId: string | null;
  group: string | null;
  rule: AlertRule | null;
  startsAt: number;
  endsAt: number;
  createdBy: string;
  reason: string;
  createdAt: number;
  updatedBy: string | null;
  updatedAt: number | null;
}

export function severityOf(s: Pick<AlertSettings, "severities">, rule: AlertRule): Severity {
  return s.severities[rule] ?? DEFAULT_SEVERITY[rule];
}

const any = <T>(want: readonly T[] | undefined, have: readonly T[]): boolean =>
  want === undefined || want.some((w) => have.includes(w));

/** The channels a change of `rule` at a unit with `scope` is delivered to (sorted, each once). */
export function receiversOf(
  s: Pick<AlertSettings, "mail" | "webhooks" | "routes" | "severities">,
  rule: AlertRule,
  scope: UnitScope,
): string[] {
  const defaults = (routed: ReadonlySet<string>) => [
    ...(s.mail === undefined ? [] : ["mail"]),
    ...s.webhooks.filter((w) => !routed.has(w.name)).map((w) => `webhook:${w.name}`),
  ];
  if (s.routes.length === 0) return defaults(new Set());
  const severity = severityOf(s, rule);
  const out = new Set<string>();
  for (const r of s.routes) {
    const hit =
      any(r.rules, [rule]) &&
      any(r.severities, [severity]) &&
      any(r.groups, scope.groups) &&
      any(r.companies, scope.company);
    if (!hit) continue;
    if (s.mail !== undefined) for (const m of r.mail ?? []) out.add(`mail:${m}`);
    for (const w of r.webhooks ?? []) out.add(`webhook:${w}`);
  }
  if (out.size > 0) return [...out].sort();
  return defaults(new Set(s.routes.flatMap((r) => r.webhooks ?? [])));
}

/** Whether `x` matches a change of `rule` at `unitId` (with `scope`) at `now`: every matcher it has holds. */
export function silences(
  x: Silence,
  unitId: string,
  rule: AlertRule,
  scope: UnitScope,
  now: number,
): boolean {
  return (
    x.startsAt <= now &&
    now < x.endsAt &&
    (x.unitId === null || x.unitId === unitId) &&
    (x.group === null || scope.groups.includes(x.group)) &&
    (x.rule === null || x.rule === rule)
  );
}

/** The first of `all` that silences the change, else null. */
export function silenceFor(
  all: readonly Silence[],
  unitId: string,
  rule: AlertRule,
  scope: UnitScope,
  now: number,
): Silence | null {
  return all.find((x) => silences(x, unitId, rule, scope, now)) ?? null;
}

/** `active`, `upcoming` (a maintenance window not yet begun) or `expired`, at `now`. */
export function silenceState(
  x: Pick<Silence, "startsAt" | "endsAt">,
  now: number,
): "active" | "upcoming" | "expired" {
  if (now >= x.endsAt) return "expired";
  return now < x.startsAt ? "upcoming" : "active";
}
