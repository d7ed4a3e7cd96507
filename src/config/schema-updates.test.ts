/** The `updates` section: defaults, key format, threshold against the number of keys. */
import { describe, expect, it } from "vitest";
import { issuesOf, pathsOf, rawV10, V10_ENV } from "./fixtures.test-support.js";
import { buildConfig, parseConfig } from "./load.js";

const KEY = "RWT1z3oTHtEJf9D4o1aktLfv2wjxk8o1pJH65fbJQsfxWfx+A3ORm99S";
const KEY2 = "RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3";

describe("updates", () => {
  it("defaults to no keys, threshold 1, the systemd paths and restart", () => {
    const c = buildConfig({ unit: { id: "u1", name: "U" }, ...rawV10(), updates: {} } as never);
    expect(c.updates).toMatchObject({
      publicKeys: [],
      threshold: 1,
      fleet: null,
      pullUrl: null,
      stateDir: "/var/lib/vendd/updates",
      releaseRoot: "/opt/vendd",
      restartCommand: ["systemctl", "restart", "vendd.service"],
      health: { holdMs: 60000, timeoutMs: 300000, pollMs: 2000 },
    });
  });

  it("accepts minisign key lines and refuses other text, duplicates, and a threshold above the key count", () => {
    const ok = { ...rawV10(), updates: { publicKeys: [KEY, KEY2], threshold: 2, fleet: "fleet-a" } };
    expect(parseConfig(ok, undefined, V10_ENV).config.updates.threshold).toBe(2);
    const bad = {
      ...rawV10(),
      updates: { publicKeys: ["not a key", KEY, KEY], threshold: 4, fleet: "bad fleet" },
    };
    expect(pathsOf(issuesOf(bad)).sort()).toEqual([
      "updates.fleet",
      "updates.publicKeys",
      "updates.publicKeys[0]",
      "updates.threshold",
    ]);
  });
});
