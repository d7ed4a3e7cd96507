import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { roomCycles } from "../support/cycles.js";
import { readSources, testOnlyMatcher } from "../support/layers.js";

const ROOT = join(import.meta.dirname, "..", "..");

function buildExcludes(): string[] {
  const parsed: unknown = JSON.parse(readFileSync(join(ROOT, "tsconfig.build.json"), "utf8"));
  const exclude = typeof parsed === "object" && parsed !== null ? Reflect.get(parsed, "exclude") : undefined;
  if (!Array.isArray(exclude) || !exclude.every((e) => typeof e === "string")) {
    throw new Error("tsconfig.build.json has no exclude list of strings");
  }
  return exclude;
}

const testOnly = testOnlyMatcher(buildExcludes());

describe("no circle inside a room (issue 44)", () => {
  it("holds for every folder of src/ and drivers/", () => {
    const files = readSources(ROOT, ["src", "drivers"]);
    expect(files.size).toBeGreaterThan(100);
    const cycles = roomCycles(files, testOnly);
    if (cycles.length > 0) console.error(`circles inside a room:\n${cycles.join("\n")}`);
    expect(cycles).toEqual([]);
  });

  it("refuses a circle of two files, through types too", () => {
    const two = new Map([
      ["src/engine/effects.ts", 'import { refund } from "./moneyEffects.js";'],
      ["src/engine/moneyEffects.ts", 'import type { Effect } from "./effects.js";'],
    ]);
    expect(roomCycles(two, testOnly)).toEqual(["src/engine/effects.ts <-> src/engine/moneyEffects.ts"]);
  });

  it("refuses a circle through a third file and through a subfolder of the room", () => {
    const three = new Map([
      ["src/daemon/daemon.ts", 'import { startParts } from "./parts/part.js";'],
      ["src/daemon/parts/part.ts", 'import { openJournal } from "../journalStart.js";'],
      ["src/daemon/journalStart.ts", 'import type { DaemonOptions } from "./daemon.js";'],
    ]);
    expect(roomCycles(three, testOnly)).toEqual([
      "src/daemon/daemon.ts <-> src/daemon/journalStart.ts <-> src/daemon/parts/part.ts",
    ]);
  });

  it("takes a fleet feature and a driver as rooms of their own, and leaves tests out", () => {
    const apart = new Map([
      ["src/fleet/plans/routes.ts", 'import { usage } from "./store.js";'],
      ["src/fleet/plans/store.ts", 'import { mount } from "../web/routes.js";'],
      ["src/fleet/web/routes.ts", 'import { usage } from "../plans/routes.js";'],
      ["drivers/vmc/adapter/machine.ts", 'import { lines } from "./machineLines.js";'],
      ["drivers/vmc/adapter/machineLines.ts", 'import { step } from "./machine.test-support.js";'],
      ["drivers/vmc/adapter/machine.test-support.ts", 'import { step } from "./machine.js";'],
    ]);
    expect(roomCycles(apart, testOnly)).toEqual([]);
  });
});
