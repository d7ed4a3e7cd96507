import type { EngineDeps, EngineOptions } from "./options.js";
import { VendEngine } from "./runner.js";

/**
 * Creates the vend engine in the shape of every seam factory, `create<Seam>(options, deps)`: `options` is
 * plain data from src/config/seams.ts, `deps` the drivers, journal, clock and logger it runs with. The
 * engine has one implementation, so its options carry no `kind`.
 */
export function createEngine(options: EngineOptions, deps: EngineDeps): VendEngine {
  return new VendEngine(deps, options);
}
