/** The JSON API's body writer: amounts are integer minor units, BigInt past 2^53, written exactly. */

/** JSON with every BigInt written as a plain integer (exact past 2^53). */
export function exactJson(value: unknown): string {
  const marked = JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `\u0000big:${v}` : v));
  return marked.replace(/"\\u0000big:(-?\d+)"/g, "$1");
}
