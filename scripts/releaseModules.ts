/**
 * Copies the packages a release loads at run time (the bundle's externals) and everything they depend on
 * from a built node_modules into the release, without what a unit never reads: other platforms' prebuilds,
 * native build leftovers (sources, object files, SQLite's amalgamation), tests, examples, docs, TypeScript
 * declarations and source maps. Called by scripts/release.sh (docs/board.md, "Release"):
 *
 *   node dist/scripts/releaseModules.js FROM_NODE_MODULES TO_NODE_MODULES PLATFORM-ARCH PACKAGE...
 */
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";

interface Manifest {
  dependencies: string[];
  native: boolean;
}

function manifest(dir: string): Manifest {
  const parsed: unknown = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const deps: string[] = [];
  if (typeof parsed === "object" && parsed !== null) {
    for (const key of ["dependencies", "optionalDependencies"] as const) {
      const value: unknown = (parsed as Record<string, unknown>)[key];
      if (typeof value === "object" && value !== null) deps.push(...Object.keys(value));
    }
  }
  return { dependencies: deps, native: existsSync(join(dir, "binding.gyp")) };
}

/** Node's lookup: `name` from `dir` is the nearest node_modules/name up to the root node_modules. */
function locate(root: string, fromDir: string, name: string): string | null {
  let dir = fromDir;
  for (;;) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (relative(dirname(root), dir) === "" || dir === dirname(dir)) return null;
    dir = dirname(dir);
    if (!dir.startsWith(dirname(root))) return null;
  }
}

/**
 * Declared as dependencies but used only to build or to run elsewhere: compilers' helpers and headers
 * (their modules are built by release.sh), macOS-only bindings.
 */
const NOT_AT_RUN_TIME = new Set([
  "node-gyp",
  "@mapbox/node-pre-gyp",
  "prebuild-install",
  "nan",
  "node-addon-api",
  "napi-thread-safe-callback",
  "xpc-connect",
  "bplist-parser",
]);

/** Every package directory `roots` need, found the way Node finds them. Missing optional ones are skipped. */
export function closure(nodeModules: string, roots: string[]): Set<string> {
  const base = dirname(nodeModules);
  const found = new Set<string>();
  const queue: Array<{ from: string; name: string }> = roots.map((name) => ({ from: base, name }));
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
    if (NOT_AT_RUN_TIME.has(item.name) || item.name.startsWith("@types/")) continue;
    const dir = locate(nodeModules, item.from, item.name);
    if (dir === null || found.has(dir)) continue;
    found.add(dir);
    for (const dep of manifest(dir).dependencies) queue.push({ from: dir, name: dep });
  }
  return found;
}

const JUNK_DIRS = new Set([
  "test",
  "tests",
  "__tests__",
  "example",
  "examples",
  "docs",
  "doc",
  ".github",
  "benchmark",
  "bench",
  "man",
]);
const JUNK_FILE =
  /\.(md|markdown|ts|map|gyp|gypi|c|cc|cpp|h|hpp|o|mk|tlog|obj|pdb)$|^(Makefile|\.npmignore|\.eslintrc.*|tsconfig.*\.json|CHANGELOG.*)$/i;

function prune(dir: string, native: boolean, target: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === "node_modules") continue;
      if (JUNK_DIRS.has(entry.name)) {
        rmSync(path, { recursive: true, force: true });
      } else if (entry.name === "prebuilds") {
        // Keep only the target's prebuilt binaries for glibc (packages that ship them instead of building).
        for (const p of readdirSync(path))
          if (p !== target) rmSync(join(path, p), { recursive: true, force: true });
        const mine = join(path, target);
        if (existsSync(mine))
          for (const f of readdirSync(mine)) if (f.includes(".musl.")) rmSync(join(mine, f), { force: true });
      } else if (native && ["deps", "src", "obj.target", ".deps", "libusb"].includes(entry.name)) {
        rmSync(path, { recursive: true, force: true });
      } else {
        prune(path, native, target);
      }
    } else if (JUNK_FILE.test(entry.name)) {
      rmSync(path, { force: true });
    }
  }
}

/**
 * A native package keeps only build/Release/*.node of its build directory (not its test add-on), and
 * prebuilt binaries only when it was not built (release.sh builds from source where it can).
 */
function pruneBuild(dir: string): void {
  const build = join(dir, "build");
  if (!existsSync(build)) return;
  const release = join(build, "Release");
  const built = existsSync(release) && readdirSync(release).some((f) => f.endsWith(".node"));
  if (built) rmSync(join(dir, "prebuilds"), { recursive: true, force: true });
  for (const entry of readdirSync(build)) {
    if (entry !== "Release" || !built) rmSync(join(build, entry), { recursive: true, force: true });
  }
  if (!built) return;
  for (const entry of readdirSync(release)) {
    const path = join(release, entry);
    const keep = entry.endsWith(".node") && entry !== "test_extension.node" && !statSync(path).isDirectory();
    if (!keep) rmSync(path, { recursive: true, force: true });
  }
}

function main(argv: string[]): number {
  const [from, to, target, ...roots] = argv;
  if (from === undefined || to === undefined || target === undefined || roots.length === 0) {
    process.stderr.write(
      "usage: releaseModules.js FROM_NODE_MODULES TO_NODE_MODULES PLATFORM-ARCH PACKAGE...\n",
    );
    return 2;
  }
  const dirs = [...closure(from, roots)].sort();
  for (const dir of dirs) {
    const dest = join(to, relative(from, dir));
    // Dereferenced: a linked package (npm link, a test's stand-in) is copied, so pruning never reaches its
    // original.
    cpSync(dir, dest, {
      recursive: true,
      dereference: true,
      filter: (src) => !relative(dir, src).split(/[\\/]/).includes("node_modules"),
    });
    const native = manifest(dir).native;
    prune(dest, native, target);
    if (native) pruneBuild(dest);
  }
  process.stdout.write(`${dirs.length} packages\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
