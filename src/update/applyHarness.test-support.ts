/**
 * The apply tests' harness: a unit tree with a config trusting `keys`, a fake daemon whose health follows the
 * config in force (a version named "Broken…" never gets its VMC link up), and a clock that jumps.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load.js";
import type { ApplyEnv } from "./applyRun.js";
import type { HealthSample } from "./health.js";
import {
  JumpClock,
  type TestKey,
  type UnitTree,
  unitConfig,
  unitTree,
  versionNameIn,
} from "./update.test-support.js";

export interface Harness {
  tree: UnitTree;
  env: ApplyEnv;
  restarts: string[];
  /** Health the fake daemon reports for the config in force (by unit name). */
  health: (name: string) => HealthSample;
  bundle(file: string, data: Buffer): string;
  nameInForce(): string;
}

export const HEALTHY: HealthSample = {
  ready: true,
  vmcLinkUp: true,
  serviceReachable: true,
  journalErrors: 0,
};

export function applyHarness(opts: { threshold?: number; keys: TestKey[] }): Harness {
  const tree = unitTree();
  writeFileSync(tree.configFile, unitConfig(tree, opts.keys, { threshold: opts.threshold ?? 1 }));
  const restarts: string[] = [];
  const nameInForce = () => versionNameIn(tree.configFile);
  const h: Harness = {
    tree,
    restarts,
    health: (name) => (name.startsWith("Broken") ? { ...HEALTHY, vmcLinkUp: false } : HEALTHY),
    nameInForce,
    bundle(file, data) {
      const path = join(tree.root, file);
      writeFileSync(path, data);
      return path;
    },
    env: {
      configFile: tree.configFile,
      loadConfig: (f) => loadConfig(f, { requireSecrets: false }).config,
      restart: async () => {
        restarts.push(nameInForce());
      },
      probeFor: () => ({ sample: async () => h.health(nameInForce()) }),
      clock: new JumpClock(),
      faults: { hit() {} },
      log: () => {},
    },
  };
  return h;
}
