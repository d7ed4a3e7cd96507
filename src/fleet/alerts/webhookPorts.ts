/**
 * The ports Node's fetch never calls: undici's list of "bad ports" (the Fetch standard's port blocking,
 * https://fetch.spec.whatwg.org/#port-blocking), read from the kept `undici` package rather than copied, so
 * the config refuses a webhook URL on one of them (fetch would fail every delivery with "bad port") and a
 * delivery error can say why.
 */
import { createRequire } from "node:module";
import { z } from "zod";

const Constants = z.object({ badPorts: z.array(z.string().regex(/^\d+$/)).min(1) });

/** The blocked ports, as numbers. */
export const BLOCKED_PORTS: ReadonlySet<number> = new Set(
  Constants.parse(createRequire(import.meta.url)("undici/lib/web/fetch/constants.js")).badPorts.map(Number),
);

/** The explicit port of an http(s) URL when Node's fetch refuses it, else null. */
export function blockedPortOf(url: string): number | null {
  let port: string;
  try {
    port = new URL(url).port;
  } catch {
    return null;
  }
  return port !== "" && BLOCKED_PORTS.has(Number(port)) ? Number(port) : null;
}

export function blockedPortWhy(port: number): string {
  return `port ${port} is on the Fetch standard's list of blocked ("bad") ports, which Node's fetch never calls; use another port`;
}
