/**
 * The dependency rule of the source tree (README, "Architecture"), as data plus one pure check, so the rule
 * is tested against the real tree and, with made-up files, against the imports it must refuse.
 *
 * Layers, top down; a module imports only from its own directory group or from a lower layer, never from a
 * sibling group of its own layer. Only relative specifiers are followed: packages are not layers.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";

export const LAYERS: readonly (readonly string[])[] = [
  ["src/cli", "scripts"],
  ["src/daemon", "src/demo", "src/chaos", "src/doctor", "src/console", "src/fleet"],
  /**
   * The one consistency checker: a tool the demo, the chaos rig and the tests share; below them. Beside it,
   * the signed-bundle applier (`vendd bundle`, the console's `config apply`), which imports only src/config
   * and src/core (UPDATE_IMPORTS).
   */
  ["src/check", "src/update"],
  /** Validated config and the one mapping to seam options. */
  ["src/config"],
  ["src/engine"],
  ["src/journal", "src/payment", "drivers"],
  ["src/core"],
];

/**
 * The one config module that may look at the seams' option types (`import type` only): it maps the
 * validated config to them. The rest of src/config is validation and imports nothing but src/core.
 */
export const CONFIG_MAPPING: ReadonlySet<string> = new Set(["src/config/seams.ts"]);

/**
 * Modules private to their directory group: the journal's SQL row mapping and schema migrations. Other
 * groups read the journal through journal.ts (types) and sqlite.ts (the implementation).
 */
export const INTERNAL_MODULES: ReadonlySet<string> = new Set([
  "src/journal/rows.ts",
  "src/journal/migrations.ts",
]);

/** What src/update may import besides itself: validated config and core, never the journal or drivers. */
const UPDATE_IMPORTS: ReadonlySet<string> = new Set(["src/update", "src/config", "src/core"]);

/** The payment-service emulator: a test and demo counterpart, never part of the unit. */
const EMULATOR = "src/emulator";
/** Who may import the emulator: `vendd emulator`, the demo, the chaos rig and the benchmarks (and tests). */
const EMULATOR_USERS: ReadonlySet<string> = new Set(["src/cli", "src/demo", "src/chaos", "scripts"]);
/**
 * What the emulator may import beyond src/core: the older interface's request signing. The emulator must
 * verify signatures exactly as the driver makes them, so both share the one implementation rather than
 * two copies that could drift apart (pos-legacy §3).
 */
const EMULATOR_SHARED: ReadonlySet<string> = new Set(["src/payment/legacy/signing.ts"]);

/**
 * The fleet server (src/fleet, docs/developers.md "The fleet's features") is three rings:
 * - features, one folder each (FLEET_FEATURES): routes.ts, store.ts, views.ts, rules.ts, migration.ts and an
 *   index.ts, their public face;
 * - what every feature may use (FLEET_SHARED): the database layer db/, the context, the feature shape
 *   (feature.ts: what a feature's index.ts hands the composition), the dashboard shell web/;
 * - the composition, everything else in src/fleet (features.ts, database.ts, server.ts, services.ts,
 *   config.ts, jobs/, ...), which mounts the features and may import any of them.
 * A feature imports its own files, the shared rooms, and another feature only through that feature's
 * index.ts (never its store, routes or views); the shared rooms do the same; db/ imports nothing of the
 * fleet but itself; a views.ts renders HTML and imports no store.
 */
export const FLEET_FEATURES: ReadonlySet<string> = new Set([
  "alerts",
  "bundles",
  "companies",
  "dex",
  "groups",
  "ingest",
  "invoices",
  "metrics",
  "values",
  "plans",
  "reconcile",
  "rollouts",
  "sales",
  "units",
]);
export const FLEET_SHARED: readonly string[] = [
  "src/fleet/db/",
  "src/fleet/context.ts",
  "src/fleet/feature.ts",
  "src/fleet/web/",
];

/** The fleet feature folder `file` is in, or null (the shared rooms, the composition, outside the fleet). */
function fleetFeatureOf(file: string): string | null {
  const m = /^src\/fleet\/([^/]+)\//.exec(file);
  return m !== null && m[1] !== undefined && FLEET_FEATURES.has(m[1]) ? m[1] : null;
}

const isFleetShared = (file: string) =>
  FLEET_SHARED.some((s) => (s.endsWith("/") ? file.startsWith(s) : file === s));
const baseName = (file: string) => file.slice(file.lastIndexOf("/") + 1);
/** A fleet store: `store.ts`, `*Store.ts` or a file under a feature's `store/` folder. */
const isStore = (file: string) =>
  baseName(file) === "store.ts" ||
  baseName(file).endsWith("Store.ts") ||
  /^src\/fleet\/[^/]+\/store\//.test(file);

/** The fleet's own rule for an import from one src/fleet module to another, or null when it keeps to it. */
function fleetRuleBroken(from: string, to: string): string | null {
  if (from.startsWith("src/fleet/db/") && !to.startsWith("src/fleet/db/")) {
    return "src/fleet/db/ knows no feature: it imports only its own files (the composition hands it migrations)";
  }
  if (baseName(from) === "views.ts" && isStore(to)) {
    return "a fleet views.ts renders HTML only: it imports no store (its routes pass it the rows)";
  }
  const feature = fleetFeatureOf(from);
  if (feature === null && !isFleetShared(from)) return null;
  const target = fleetFeatureOf(to);
  if (target !== null) {
    if (target === feature || baseName(to) === "index.ts") return null;
    return `src/fleet/${target}/ is another feature: import it only through src/fleet/${target}/index.ts, never its store, routes or views`;
  }
  if (isFleetShared(to)) return null;
  return "a fleet feature or shared room imports only its own files, db/, context.ts, feature.ts, web/ and features' index.ts, never the composition";
}

/** One import that the rule refuses but that is tolerated for now, with the reason and who removes it. */
export interface Allowed {
  from: string;
  to: string;
  why: string;
}

/** An import statement found in a file: the resolved target path and whether it imports types only. */
export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

export interface Violation {
  from: string;
  to: string;
  rule: string;
}

/** The directory group of a repository path: `src/<dir>`, or the top-level directory. */
export function groupOf(file: string): string {
  const parts = file.split("/");
  if (parts[0] === "src" && parts.length > 2) return `src/${parts[1]}`;
  return parts[0] ?? file;
}

function layerOf(group: string): number {
  return LAYERS.findIndex((layer) => layer.includes(group));
}

const STATIC = /(?:^|[\n;])\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*["'](\.[^"']*)["']/g;
const BARE = /(?:^|[\n;])\s*import\s*["'](\.[^"']*)["']/g;
const DYNAMIC = /import\s*\(\s*["'](\.[^"']*)["']\s*\)/g;

/** True when an import clause names types only: `type {...}`, or braces whose every name is `type X`. */
function clauseIsTypeOnly(typeKeyword: string | undefined, clause: string): boolean {
  if (typeKeyword !== undefined) return true;
  const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (braces === null) return false;
  const names = (braces[1] ?? "")
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  return names.length > 0 && names.every((n) => n.startsWith("type "));
}

/** Relative imports of one file (static, side-effect and dynamic), resolved to repository `.ts` paths. */
export function importsOf(file: string, source: string): ImportEdge[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const edges: ImportEdge[] = [];
  const to = (spec: string) => posix.normalize(posix.join(posix.dirname(file), spec)).replace(/\.js$/, ".ts");
  for (const m of code.matchAll(STATIC)) {
    edges.push({ from: file, to: to(m[4] ?? ""), typeOnly: clauseIsTypeOnly(m[2], m[3] ?? "") });
  }
  for (const m of code.matchAll(BARE)) edges.push({ from: file, to: to(m[1] ?? ""), typeOnly: false });
  for (const m of code.matchAll(DYNAMIC)) edges.push({ from: file, to: to(m[1] ?? ""), typeOnly: false });
  return edges;
}

/** The rule a single import breaks, or null when it keeps to the rule. */
export function ruleBroken(edge: ImportEdge): string | null {
  const a = groupOf(edge.from);
  const b = groupOf(edge.to);
  if (INTERNAL_MODULES.has(edge.to) && a !== b) return `${edge.to} is internal to ${b}`;
  if (a === EMULATOR || b === EMULATOR) {
    if (a === b) return null;
    if (a === EMULATOR) {
      return b === "src/core" || EMULATOR_SHARED.has(edge.to)
        ? null
        : "src/emulator imports only src/core (and the shared legacy signing module)";
    }
    return EMULATOR_USERS.has(a)
      ? null
      : "only src/cli, src/demo, src/chaos, scripts and tests import src/emulator (never production code)";
  }
  if (a === "src/fleet" && b === "src/fleet") return fleetRuleBroken(edge.from, edge.to);
  const from = layerOf(a);
  const target = layerOf(b);
  if (from < 0) return `${a} is in no layer: add it to LAYERS in test/support/layers.ts and the README`;
  if (target < 0) return `${b} is in no layer`;
  if (a === "src/update" && !UPDATE_IMPORTS.has(b)) {
    return "src/update imports only src/config and src/core (never the journal, engine or drivers)";
  }
  if (a === "src/config" && b !== "src/config" && b !== "src/core") {
    if (!CONFIG_MAPPING.has(edge.from)) {
      return "config validation imports only src/core (the seam mapping is src/config/seams.ts)";
    }
    return edge.typeOnly ? null : "the config mapping imports only the seams' option types (import type)";
  }
  if (a === b) return null;
  if (target > from) return null;
  return target === from
    ? `${a} and ${b} are siblings in one layer and do not import each other`
    : `${a} is below ${b} and does not import it`;
}

/**
 * Every import of `files` that breaks the rule and is not allowed, plus every allow-list entry that no
 * longer matches an import (an entry outliving its reason would silently allow the import again).
 */
export function checkLayers(
  files: ReadonlyMap<string, string>,
  allowed: readonly Allowed[],
  exempt: (file: string) => boolean,
): { violations: Violation[]; staleAllowed: Allowed[] } {
  const violations: Violation[] = [];
  const used = new Set<Allowed>();
  for (const [file, source] of files) {
    for (const edge of importsOf(file, source)) {
      if (exempt(edge.from)) continue;
      // A file that never ships (tests, fixtures) must not be needed by one that does.
      const rule = exempt(edge.to) ? "production code imports a test-only file" : ruleBroken(edge);
      if (rule === null) continue;
      const allow = allowed.find((x) => x.from === edge.from && x.to === edge.to);
      if (allow !== undefined) used.add(allow);
      else violations.push({ from: edge.from, to: edge.to, rule });
    }
  }
  return { violations, staleAllowed: allowed.filter((x) => !used.has(x)) };
}

/** Every `.ts` file (not `.d.ts`) under `dirs` of `root`, keyed by its repository path. */
export function readSources(root: string, dirs: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && entry.name !== "dist") walk(path);
      } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
        out.set(path, readFileSync(join(root, path), "utf8"));
      }
    }
  };
  for (const dir of dirs) walk(dir);
  return out;
}

/**
 * Test-only files: tests, `test/`, `*test-support*`, and everything `tsconfig.build.json` keeps out of
 * `dist/` (fixtures, harnesses): what never ships is exempt from the rule, and the same list decides both.
 */
export function testOnlyMatcher(buildExcludes: readonly string[]): (file: string) => boolean {
  const patterns = buildExcludes.map(globToRegExp);
  return (file) =>
    file.endsWith(".test.ts") ||
    file.startsWith("test/") ||
    file.includes("test-support") ||
    patterns.some((p) => p.test(file));
}

/** A tsconfig `exclude` glob (`**`, `*`; a plain path also covers what is under it) as a RegExp. */
function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? "";
    if (glob.startsWith("**/", i)) {
      re += "(?:.*/)?";
      i += 2;
    } else if (c === "*") re += "[^/]*";
    else re += c.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}(?:/.*)?$`);
}

/**
 * Where a fleet feature's SQL lives (issue 35): under src/fleet/ only a store may hold Kysely query calls —
 * a file named `store.ts` or `*Store.ts`, a file under a `store/` folder, a feature's `migration.ts`,
 * `database.ts`, or the database layer `db/`. Routes, views, rules, jobs and flows call their store.
 */
export function mayHoldSql(file: string): boolean {
  if (!file.startsWith("src/fleet/")) return true;
  const name = baseName(file);
  return (
    isStore(file) ||
    name === "migration.ts" ||
    file === "src/fleet/database.ts" ||
    file.startsWith("src/fleet/db/")
  );
}

/** Kysely's query calls, as the SQL rule looks for them (after comments are stripped). */
const SQL_CALLS: readonly [string, RegExp][] = [
  ["selectFrom(", /\bselectFrom\s*\(/],
  ["insertInto(", /\binsertInto\s*\(/],
  ["updateTable(", /\bupdateTable\s*\(/],
  ["deleteFrom(", /\bdeleteFrom\s*\(/],
  ["sql`", /\bsql\s*(?:<[^`]*?>)?\s*`/],
  ["sql.raw(", /\bsql\.(?:raw|ref|lit|id|table|join|val)\s*\(/],
  [".schema.", /\.schema\./],
  [".transaction()", /\.transaction\s*\(\s*\)/],
];

/** A file that holds SQL outside a store, and the first Kysely call found in it. */
export interface SqlOutsideStore {
  file: string;
  call: string;
}

/**
 * Every non-test file of src/fleet/ that holds Kysely query calls without being a store (mayHoldSql), less
 * the `allowed` files; and every allowed file that no longer holds any (a stale entry).
 */
export function checkFleetSql(
  files: ReadonlyMap<string, string>,
  allowed: readonly string[],
  exempt: (file: string) => boolean,
): { violations: SqlOutsideStore[]; staleAllowed: string[] } {
  const violations: SqlOutsideStore[] = [];
  const used = new Set<string>();
  for (const [file, source] of files) {
    if (exempt(file) || mayHoldSql(file)) continue;
    const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
    const found = SQL_CALLS.find(([, re]) => re.test(code));
    if (found === undefined) continue;
    if (allowed.includes(file)) used.add(file);
    else violations.push({ file, call: found[0] });
  }
  return { violations, staleAllowed: allowed.filter((f) => !used.has(f)) };
}

/**
 * The circles between fleet features (a feature imports another, which imports it back, directly or through
 * others), each as `a -> b -> a`; none may exist, so each feature can be read and changed from the bottom up.
 */
export function fleetFeatureCycles(
  files: ReadonlyMap<string, string>,
  exempt: (file: string) => boolean,
): string[] {
  const uses = new Map<string, Set<string>>();
  for (const [file, source] of files) {
    if (exempt(file)) continue;
    const a = fleetFeatureOf(file);
    if (a === null) continue;
    for (const edge of importsOf(file, source)) {
      const b = fleetFeatureOf(edge.to);
      if (b === null || b === a) continue;
      const set = uses.get(a) ?? new Set<string>();
      set.add(b);
      uses.set(a, set);
    }
  }
  const cycles: string[] = [];
  const seen = new Set<string>();
  const walk = (node: string, path: string[]) => {
    for (const next of uses.get(node) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) {
        const cycle = [...path.slice(at), next].join(" -> ");
        if (!seen.has(cycle) && path[at] === [...path.slice(at)].sort()[0]) cycles.push(cycle);
        seen.add(cycle);
      } else walk(next, [...path, next]);
    }
  };
  for (const start of [...uses.keys()].sort()) walk(start, [start]);
  return cycles;
}
