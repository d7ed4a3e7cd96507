import { describe, expect, it } from "vitest";
import { issuesOf, pathsOf, rawLegacy, rawV10 } from "./fixtures.test-support.js";
import { parseConfig, secretValues } from "./load.js";
import { resolveSecrets } from "./secrets.js";

describe("secrets: sources and precedence", () => {
  it("takes the client secret from the secrets file", () => {
    const { secrets } = parseConfig(rawV10(), { v10: { clientSecret: "from-file" } }, {});
    expect(secrets).toEqual({ v10: { clientSecret: "from-file" } });
  });

  it("lets a non-empty environment variable win over the file; an empty one counts as unset", () => {
    const file = { v10: { clientSecret: "from-file" } };
    expect(
      parseConfig(rawV10(), file, { VENDD_V10_CLIENT_SECRET: "from-env" }).secrets.v10?.clientSecret,
    ).toBe("from-env");
    expect(parseConfig(rawV10(), file, { VENDD_V10_CLIENT_SECRET: "" }).secrets.v10?.clientSecret).toBe(
      "from-file",
    );
  });

  it("combines legacy secrets from the file and the environment", () => {
    const { secrets } = parseConfig(
      rawLegacy(),
      { legacy: { apiKey: "file-key" } },
      { VENDD_LEGACY_MERCHANT_KEY: "env-mk" },
    );
    expect(secrets).toEqual({ legacy: { apiKey: "file-key", merchantKey: "env-mk" } });
    expect(secretValues(secrets)).toEqual(["file-key", "env-mk"]);
  });

  it("keeps only complete sections and does not require the other driver's secrets", () => {
    const { secrets } = parseConfig(
      rawV10(),
      { legacy: { apiKey: "only-half" } },
      { VENDD_V10_CLIENT_SECRET: "s" },
    );
    expect(secrets).toEqual({ v10: { clientSecret: "s" } });
  });
});

describe("secrets: errors never echo a value", () => {
  it("a wrong-typed secret says what it must be", () => {
    const issues = issuesOf(rawV10(), { v10: { clientSecret: 987654321 } }, {});
    expect(issues).toEqual([{ path: "secrets.v10.clientSecret", message: "must be a string" }]);
    expect(JSON.stringify(issues)).not.toContain("987654321");
  });

  it("reports only the malformed secret when a sibling is valid", () => {
    const issues = issuesOf(rawLegacy(), { legacy: { apiKey: "good-key", merchantKey: ["canary-mk"] } }, {});
    expect(issues).toEqual([{ path: "secrets.legacy.merchantKey", message: "must be a string" }]);
  });

  it("unknown keys and a non-mapping file", () => {
    // Issue 32: a secrets file's keys may be secrets: counted, never named.
    const unknown = issuesOf(rawV10(), { v10: { clientSecret: "s", clientId: "x" }, other: {} }, {});
    expect(pathsOf(unknown)).toEqual(["secrets.v10", "secrets"]);
    expect(unknown.map((i) => i.message)).toEqual([
      expect.stringMatching(/^1 unknown key, not shown because a secrets file's keys may be secrets/),
      expect.stringMatching(/^1 unknown key, not shown/),
    ]);
    expect(JSON.stringify(unknown)).not.toMatch(/clientId|other/);
    expect(issuesOf(rawV10(), "canary-string-file", {})).toEqual([
      { path: "secrets", message: "the secrets file must be a mapping" },
      expect.objectContaining({ path: "secrets.v10.clientSecret" }),
    ]);
  });

  it("an empty secret is refused", () => {
    expect(issuesOf(rawV10(), { v10: { clientSecret: "" } }, {})).toEqual([
      { path: "secrets.v10.clientSecret", message: "must not be empty" },
    ]);
  });

  it("the missing-secret message says where a secret may come from", () => {
    const { issues } = resolveSecrets(undefined, {}, "legacy");
    expect(issues.map((i) => i.path)).toEqual(["secrets.legacy.apiKey", "secrets.legacy.merchantKey"]);
    expect(issues[0]?.message).toContain("VENDD_LEGACY_API_KEY");
    expect(issues[1]?.message).toContain("VENDD_LEGACY_MERCHANT_KEY");
    expect(issues[1]?.message).toContain("VENDD_SECRETS_FILE");
  });

  it("does not require secrets when the driver is unknown", () => {
    expect(resolveSecrets(undefined, {}, undefined).issues).toEqual([]);
  });
});
