/**
 * The native modules of this installation load on this board: each is required (better-sqlite3 also opens
 * an in-memory database, which loads its add-on). One built for another CPU or Node.js is named as such
 * ("built for x86-64; install the release for this board"), not as a storage fault (docs/board.md).
 */
import { createRequire } from "node:module";
import { wrongBuild } from "../core/nativeBuild.js";
import type { Check } from "./run.js";

/** Required by the unit; optional ones (unix-dgram) are reported only when present and wrong. */
const MODULES: ReadonlyArray<{ name: string; required: boolean }> = [
  { name: "better-sqlite3", required: true },
  { name: "@serialport/bindings-cpp", required: true },
  { name: "unix-dgram", required: false },
];

export type NativeLoader = (name: string) => void;

function defaultLoader(name: string): void {
  const require = createRequire(import.meta.url);
  const mod: unknown = require(name);
  if (name === "better-sqlite3" && typeof mod === "function") {
    const db = new (mod as new (file: string) => { close(): void })(":memory:");
    db.close();
  }
}

export function nativeCheck(load: NativeLoader = defaultLoader): Check {
  return {
    name: "native modules",
    timeoutMs: 15_000,
    timeoutHint: "loading the native modules is slow: is the SD card failing? (dmesg)",
    async run() {
      const problems: string[] = [];
      for (const m of MODULES) {
        try {
          load(m.name);
        } catch (err) {
          const wrong = wrongBuild(err);
          const missing = (err as { code?: unknown } | null)?.code === "MODULE_NOT_FOUND";
          if (wrong !== null) problems.push(wrong);
          else if (missing && !m.required) continue;
          else problems.push(`${m.name}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
        }
      }
      if (problems.length > 0) return { status: "fail", detail: problems.join("; ") };
      return {
        status: "ok",
        detail: `${MODULES.map((m) => m.name).join(", ")} load (${process.arch}, Node.js ${process.version})`,
      };
    },
  };
}
