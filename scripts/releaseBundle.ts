/**
 * Bundles the `vendd` command with esbuild into one ESM file for a release (docs/board.md, "Release").
 * Called by scripts/release.sh:
 *
 *   node dist/scripts/releaseBundle.js unit|fleet OUTFILE
 *
 * `unit`: what a vending unit runs: the daemon, the demo, doctor, bundles, the console. The fleet server
 * (`vendd fleet`, `vendd demo --fleet`) and the standalone emulator (`vendd emulator`) are left out: their
 * modules are replaced by a stub that says which package has them. `fleet`: every command.
 * The native modules (and the packages loaded by a computed name at run time) stay outside the bundle, in
 * the release's node_modules beside it, built for the target by release.sh.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { build, type Plugin } from "esbuild";

/** Loaded at run time from node_modules beside the bundle, never bundled. */
export const EXTERNAL = [
  "better-sqlite3",
  "serialport",
  "@serialport/bindings-cpp",
  "unix-dgram",
  "sodium-native",
  "@abandonware/bleno",
  "nfc-pcsc",
  "johnny-five",
  "uplot",
  "qrcode-terminal",
];

const SKIP = Symbol("resolving");

/** Command modules the unit's release does not carry, and the package that does. */
const LEFT_OUT_OF_UNIT = /[\\/]src[\\/]cli[\\/](fleet|demoFleet|emulator)\.(js|ts)$/;

function leaveOut(): Plugin {
  return {
    name: "vendd-unit-only",
    setup(b) {
      // The unit's `reconcile` and `journal export` use pure helpers of src/fleet/reconcile, whose modules
      // also import the fleet database (Kysely, pg): declared free of side effects, what the unit never
      // calls is shaken out.
      b.onResolve({ filter: /^(kysely|pg)$|[\\/]db[\\/]\w+\.js$|[\\/]context\.js$/ }, async (args) => {
        if (args.pluginData === SKIP) return undefined;
        const r = await b.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: SKIP,
        });
        if (r.errors.length > 0) return undefined;
        const fleetDb = /node_modules[\\/](kysely|pg)[\\/]|[\\/]src[\\/]fleet[\\/](db[\\/]|context\.ts$)/;
        return fleetDb.test(r.path) ? { ...r, sideEffects: false } : r;
      });
      b.onResolve({ filter: /^\.\/(fleet|demoFleet|emulator)\.js$/ }, (args) => {
        const path = resolve(args.resolveDir, args.path.replace(/\.js$/, ".ts"));
        return LEFT_OUT_OF_UNIT.test(path) ? { path, namespace: "left-out" } : undefined;
      });
      b.onLoad({ filter: /.*/, namespace: "left-out" }, (args) => {
        const what = /emulator\.ts$/.test(args.path) ? "the payment service emulator" : "the fleet server";
        const message = `${what} is not part of the unit's release: install the vendd-fleet package`;
        const fail = `async () => { process.stderr.write(${JSON.stringify(`vendd: ${message}\n`)}); return 2; }`;
        return {
          contents: `export const fleetCommand = ${fail}; export const emulatorCommand = ${fail}; export const runDemoFleet = ${fail};`,
          loader: "js",
        };
      });
    },
  };
}

async function main(argv: string[]): Promise<number> {
  const [flavour, outfile, metafile] = argv;
  if ((flavour !== "unit" && flavour !== "fleet") || outfile === undefined) {
    process.stderr.write("usage: releaseBundle.js unit|fleet OUTFILE [METAFILE]\n");
    return 2;
  }
  const root = resolve(import.meta.dirname, "../..");
  const result = await build({
    entryPoints: [resolve(root, "src/cli/main.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: "none",
    metafile: true,
    external: EXTERNAL,
    // CommonJS dependencies inside an ESM bundle call require() for Node's built-ins.
    banner: {
      js: "import { createRequire as __vendd_cr } from 'node:module'; const require = __vendd_cr(import.meta.url);",
    },
    plugins: flavour === "unit" ? [leaveOut()] : [],
    logLevel: "warning",
  });
  if (metafile !== undefined) writeFileSync(metafile, JSON.stringify(result.metafile));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`releaseBundle: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
