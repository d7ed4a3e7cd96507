/**
 * The times of a silence or maintenance window as people write them (issue 42), on the CLI, the API and the
 * dashboard's form alike: an instant always names its zone (`2026-12-03T22:00+01:00`, `…Z`), and a span is
 * a duration (`90m`, `1.5h`, `2d`, `45s`). Anything else is refused with what to write instead.
 */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;
const SPAN = /^(\d+(?:\.\d+)?)\s*(s|m|min|h|d)$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
/** The longest silence or window: a year. */
export const MAX_SILENCE_MS = 366 * 86_400_000;

export type Parsed = { ok: true; ms: number } | { ok: false; problem: string };

/** An instant with its zone, as epoch ms. */
export function parseInstant(name: string, text: string): Parsed {
  const t = text.trim();
  const m = INSTANT.exec(t);
  const ms = m === null ? Number.NaN : Date.parse(t);
  // Date.parse rolls an impossible date over (31 February): the parsed instant must keep the written fields.
  const month = m === null ? -1 : Number(m[2]);
  const day = m === null ? -1 : Number(m[3]);
  const zone = m?.[7] ?? "Z";
  const offset =
    zone === "Z"
      ? 0
      : (zone.startsWith("-") ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4)));
  const local = new Date(ms + offset * 60_000);
  if (m === null || Number.isNaN(ms) || local.getUTCMonth() + 1 !== month || local.getUTCDate() !== day)
    return {
      ok: false,
      problem: `${name} ${JSON.stringify(t.slice(0, 40))} is not a time with its zone: write e.g. 2026-12-03T22:00+01:00 or 2026-12-03T21:00Z`,
    };
  return { ok: true, ms };
}

/** A duration such as `90m`, `1.5h`, `2d`, as ms (more than 0, at most a year). */
export function parseSpan(name: string, text: string): Parsed {
  const m = SPAN.exec(text.trim());
  const ms = m === null ? Number.NaN : Math.round(Number(m[1]) * (UNIT_MS[m[2] ?? ""] ?? Number.NaN));
  if (m === null || !Number.isFinite(ms) || ms <= 0 || ms > MAX_SILENCE_MS)
    return {
      ok: false,
      problem: `${name} ${JSON.stringify(text.trim().slice(0, 40))} is not a duration: write e.g. 45s, 90m, 1.5h or 2d (at most 366d)`,
    };
  return { ok: true, ms };
}
