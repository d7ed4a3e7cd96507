/** The `entitlements` section: absent by default, key line or .pub path, never one of the bundle keys. */
import { describe, expect, it } from "vitest";
import { issuesOf, pathsOf, rawV10, V10_ENV } from "./fixtures.test-support.js";
import { parseConfig } from "./load.js";

const KEY = "RWT1z3oTHtEJf9D4o1aktLfv2wjxk8o1pJH65fbJQsfxWfx+A3ORm99S";
const KEY2 = "RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3";

describe("entitlements", () => {
  it("is null when absent, and takes defaults when a key is named", () => {
    expect(parseConfig(rawV10(), undefined, V10_ENV).config.entitlements).toBeNull();
    const c = parseConfig({ ...rawV10(), entitlements: { publicKey: KEY } }, undefined, V10_ENV).config;
    expect(c.entitlements).toEqual({
      publicKey: KEY,
      listFile: "/var/lib/vendd/entitlements.json",
      overAllowance: "pay",
      tapWindowMs: 60_000,
    });
    const f = {
      ...rawV10(),
      entitlements: { publicKey: "/etc/vendd/entitlement.pub", overAllowance: "deny" },
    };
    expect(parseConfig(f, undefined, V10_ENV).config.entitlements?.overAllowance).toBe("deny");
  });

  it("refuses other text and a key that is also a bundle key", () => {
    expect(pathsOf(issuesOf({ ...rawV10(), entitlements: { publicKey: "relative.pub" } }))).toEqual([
      "entitlements.publicKey",
    ]);
    const shared = { ...rawV10(), updates: { publicKeys: [KEY2] }, entitlements: { publicKey: KEY2 } };
    expect(pathsOf(issuesOf(shared))).toEqual(["entitlements.publicKey"]);
    const separate = { ...rawV10(), updates: { publicKeys: [KEY2] }, entitlements: { publicKey: KEY } };
    expect(parseConfig(separate, undefined, V10_ENV).config.entitlements?.publicKey).toBe(KEY);
  });
});
