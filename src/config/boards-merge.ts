import type { ConfigIssue } from "./issues.js";
import { isRecord } from "./rules.js";

/**
 * Deep-merges `over` (the config as written) onto `base` (the board profile's values): mappings merge key
 * by key, anything else in `over` wins, including `null` and lists (a list replaces the board's list).
 * A key absent from `over` keeps the board's value. Neither argument is modified.
 */
export function mergeUnder(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  if (!isRecord(base) || !isRecord(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = mergeUnder(base[key], value);
  return out;
}

/**
 * Adds "(value from board X)" to the issues whose path the config does not set but the board does, so an
 * operator knows to override it in the config rather than look for it there. Paths stay the config's own.
 */
export function annotateIssues(
  issues: readonly ConfigIssue[],
  raw: unknown,
  board: { name: string; values: Record<string, unknown> },
): ConfigIssue[] {
  return issues.map((issue) =>
    !has(raw, issue.path) && has(board.values, issue.path)
      ? { ...issue, message: `${issue.message} (value from board ${board.name})` }
      : issue,
  );
}

/** Whether a dotted path (`a.b[2].c`) names a value that is present in `root`. */
function has(root: unknown, path: string): boolean {
  let cur: unknown = root;
  for (const part of path.split(/\.|(?=\[)/)) {
    if (part === "") return false;
    const index = /^\[(\d+)\]$/.exec(part);
    if (index) {
      if (!Array.isArray(cur)) return false;
      cur = cur[Number(index[1])];
    } else {
      if (!isRecord(cur) || !(part in cur)) return false;
      cur = cur[part];
    }
    if (cur === undefined) return false;
  }
  return true;
}
