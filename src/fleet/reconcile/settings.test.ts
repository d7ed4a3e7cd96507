import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadReportingSettings, ReportingSettingsError } from "./settings.js";

/** Reporting settings: a secrets file (rotated token written back, 0600) or the environment; errors never show a value. */
describe("reporting settings", () => {
  const dir = mkdtempSync(join(tmpdir(), "vendd-recon-settings-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const base = "baseUrl: https://r.example/base\ntokenUrl: https://r.example/token\nclientId: cid\n";

  it("reads the secrets file and writes a rotated refresh token back", () => {
    writeFileSync(join(dir, "s.yaml"), "clientSecret: top-secret-1\nrefreshToken: rt-1\n");
    writeFileSync(
      join(dir, "r.yaml"),
      `${base}secretsFile: s.yaml\ntimeZone: Europe/Oslo\npoints: { pp1: vm1 }\n`,
    );
    const s = loadReportingSettings(join(dir, "r.yaml"), {});
    expect(s.credentials).toMatchObject({
      clientId: "cid",
      clientSecret: "top-secret-1",
      refreshToken: "rt-1",
    });
    expect(s).toMatchObject({ timeZone: "Europe/Oslo", persistable: true });
    expect(s.points.get("pp1")).toBe("vm1");
    s.saveRefreshToken("rt-2");
    expect(JSON.parse(readFileSync(join(dir, "s.yaml"), "utf8"))).toEqual({
      clientSecret: "top-secret-1",
      refreshToken: "rt-2",
    });
    expect(statSync(join(dir, "s.yaml")).mode & 0o777).toBe(0o600);
    expect(loadReportingSettings(join(dir, "r.yaml"), {}).credentials.refreshToken).toBe("rt-2");
  });

  it("takes secrets from the environment (not persistable); refuses without any", () => {
    writeFileSync(
      join(dir, "e.json"),
      JSON.stringify({ baseUrl: "https://r.example/b", tokenUrl: "https://r.example/t", clientId: "c" }),
    );
    const env = { VENDD_REPORTING_CLIENT_SECRET: "s", VENDD_REPORTING_REFRESH_TOKEN: "t" };
    expect(loadReportingSettings(join(dir, "e.json"), env)).toMatchObject({
      persistable: false,
      timeZone: null,
    });
    expect(() => loadReportingSettings(join(dir, "e.json"), {})).toThrow(/VENDD_REPORTING_CLIENT_SECRET/);
  });

  it("errors name the field, never its value", () => {
    writeFileSync(join(dir, "bad-s.yaml"), "clientSecret: leaked-value-77\nrefreshToken: 12\nextra: x\n");
    writeFileSync(join(dir, "bad.yaml"), `${base}secretsFile: bad-s.yaml\n`);
    const e = (() => {
      try {
        loadReportingSettings(join(dir, "bad.yaml"), {});
      } catch (x) {
        return x;
      }
    })();
    expect(e).toBeInstanceOf(ReportingSettingsError);
    expect(String((e as Error).message)).toMatch(/refreshToken/);
    expect(String((e as Error).message)).not.toContain("leaked-value-77");
    writeFileSync(join(dir, "nourl.yaml"), "baseUrl: not a url\ntokenUrl: https://x/t\nclientId: c\n");
    expect(() => loadReportingSettings(join(dir, "nourl.yaml"), {})).toThrow(/baseUrl/);
  });
});
