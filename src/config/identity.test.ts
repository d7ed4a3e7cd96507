import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { rawV10 } from "./fixtures.test-support.js";
import { identityChanges, identityKeysSet, nonIdentityPaths, splitIdentity } from "./identity.js";
import { mergeLayers } from "./layers.js";
import { ConfigError, loadConfig } from "./load.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-identity-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("identity keys", () => {
  it("names the identity keys a file sets and the ones two configs differ in", () => {
    const raw = rawV10();
    expect(identityKeysSet(raw)).toEqual([
      "unit.id",
      "unit.name",
      "payment.v10.clientId",
      "payment.v10.merchantVat",
      "payment.v10.merchantBrandId",
      "payment.v10.merchantLocationId",
    ]);
    const other = { ...raw, unit: { id: "vm-0002", name: "Vending 1" }, engine: { maxPrice: "1.00" } };
    expect(identityChanges(raw, other)).toEqual(["unit.id"]);
    expect(identityKeysSet({ entitlements: null, engine: { maxPrice: "1.00" } })).toEqual([]);
  });

  it("splits a one-file config into identity and the rest; merged again they are the file", () => {
    const raw = { ...rawV10(), journal: { path: "/j.db", retentionDays: 30 }, engine: { maxPrice: "2.00" } };
    const { identity, rest } = splitIdentity(raw);
    expect(identity).toEqual({
      unit: rawV10().unit,
      payment: {
        v10: {
          clientId: "vendd-test",
          merchantVat: "DK12345678",
          merchantBrandId: "POSDK12345",
          merchantLocationId: "10001",
        },
      },
      journal: { path: "/j.db" },
    });
    expect(rest).not.toHaveProperty("unit");
    expect(rest).toMatchObject({ journal: { retentionDays: 30 }, engine: { maxPrice: "2.00" } });
    expect(identityKeysSet(rest)).toEqual([]);
    expect(nonIdentityPaths(identity)).toEqual([]);
    const again = mergeLayers([
      { name: "fleet", source: "c", values: rest },
      { name: "identity", source: "i", values: identity },
    ]).raw;
    expect(JSON.parse(JSON.stringify(again))).toMatchObject(raw);
    expect(identityChanges(again, raw)).toEqual([]);
  });

  it("the loader refuses other keys in the identity file and names the layer a bad value came from", () => {
    const d = mkdtempSync(join(dir, "u-"));
    const { identity, rest } = splitIdentity(rawV10());
    writeFileSync(join(d, "config.yaml"), JSON.stringify({ ...rest, engine: { maxPrice: "abc" } }));
    writeFileSync(
      join(d, "identity.yaml"),
      JSON.stringify({
        ...identity,
        unit: { id: "bad id!", name: "Vending 1" },
        logging: { level: "debug" },
      }),
    );
    let err: unknown;
    try {
      loadConfig(join(d, "config.yaml"), { requireSecrets: false });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
    expect(issues).toContainEqual(
      expect.stringMatching(/^logging: is not an identity key: the identity file .*identity\.yaml/),
    );
    expect(issues).toContainEqual(expect.stringMatching(/^unit\.id: .*\(from identity: .*identity\.yaml\)$/));
    expect(issues).toContainEqual(
      expect.stringMatching(/^engine\.maxPrice: .*\(from fleet: .*config\.yaml\)$/),
    );
  });
});
