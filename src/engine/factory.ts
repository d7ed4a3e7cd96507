import { randomUUID } from "node:crypto";
import type { EngineOptions, EngineSeams } from "./options.js";
import { VendEngine } from "./runner.js";

/**
 * Creates the vend engine in the shape of every seam factory, `create<Seam>(options, deps)`: `options` is
 * plain data from src/config/seams.ts, `deps` the drivers, journal, clock and logger it runs with. The
 * engine has one implementation, so its options carry no `kind`. This is the one place ids and randomness
 * get their production defaults (node:crypto UUIDs, Math.random); the engine itself never calls either.
 */
export function createEngine(options: EngineOptions, deps: EngineSeams): VendEngine {
  return new VendEngine(
    { ...deps, newId: deps.newId ?? randomUUID, random: deps.random ?? Math.random },
    options,
  );
}
