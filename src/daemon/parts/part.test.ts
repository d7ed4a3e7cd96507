/** The unit as a list of parts: start in order, stop in reverse order, status by name; the unit's list. */
import { describe, expect, it } from "vitest";
import { unitParts } from "../unit.js";
import type { UnitContext } from "./context.js";
import { type Part, PartList } from "./part.js";

function recorder(name: string, log: string[]): Part<{ name: string }> {
  return {
    name,
    start: () => {
      log.push(`start ${name}`);
    },
    async stop() {
      await Promise.resolve();
      log.push(`stop ${name}`);
    },
    status: () => ({ name }),
  };
}

describe("PartList", () => {
  it("starts the parts in order, stops them in reverse order (each waited for), and composes their status", async () => {
    const log: string[] = [];
    const list = new PartList(["a", "b", "c"].map((n) => recorder(n, log)));
    list.start({} as UnitContext);
    await list.stop();
    expect(log).toEqual(["start a", "start b", "start c", "stop c", "stop b", "stop a"]);
    expect(list.status()).toEqual({ a: { name: "a" }, b: { name: "b" }, c: { name: "c" } });
  });
});

describe("the unit's parts (docs/developers.md, The daemon's parts)", () => {
  it("are in the documented order: devices first (the journal closes last), the control socket last (closes first)", () => {
    expect(new PartList(unitParts().parts).names()).toEqual([
      "journal",
      "display",
      "payment",
      "vmc",
      "status",
      "engine",
      "members",
      "peripherals",
      "fleet",
      "dex",
      "housekeeping",
      "update",
      "metrics",
      "service",
      "control",
    ]);
  });
});
