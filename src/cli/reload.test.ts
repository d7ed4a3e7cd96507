import { describe, expect, it } from "vitest";
import { rawV10, V10_ENV } from "../config/fixtures.test-support.js";
import { ConfigError, type LoadedConfig, parseConfig } from "../config/load.js";
import { createLogger } from "../core/log.js";
import { SecretRegistry } from "../core/secrets.js";
import { changedKeys, createReloader } from "./reload.js";

function loaded(edit: (raw: ReturnType<typeof rawV10>) => void = () => {}, secret = "s-one"): LoadedConfig {
  const raw = rawV10();
  edit(raw);
  return parseConfig(raw, undefined, { ...V10_ENV, VENDD_V10_CLIENT_SECRET: secret });
}

function harness(running: LoadedConfig, next: () => LoadedConfig) {
  const lines: string[] = [];
  const secrets = new SecretRegistry(["s-one"]);
  const logger = createLogger({
    level: "info",
    secrets,
    destination: { write: (l: string) => lines.push(l) },
  });
  const reload = createReloader({ file: "unit.yaml", load: {}, running, logger, secrets, loadConfig: next });
  return { reload, logger, lines, parsed: () => lines.map((l) => JSON.parse(l)) };
}

describe("changedKeys", () => {
  it("names each changed leaf by its dotted path; lists compare whole", () => {
    expect(
      changedKeys({ a: { b: 1, c: [1, 2] }, d: "x" }, { a: { b: 2, c: [1, 2] }, d: "x", e: null }),
    ).toEqual(["a.b", "e"]);
    expect(changedKeys({ c: [1, 2] }, { c: [2, 1] })).toEqual(["c"]);
    expect(changedKeys({ a: 1 }, { a: 1 })).toEqual([]);
  });
});

describe("createReloader", () => {
  it("applies logging.level, reports other keys once each (sessionMax without its derived twin)", () => {
    const h = harness(loaded(), () =>
      loaded((raw) => Object.assign(raw, { logging: { level: "debug" }, engine: { sessionMax: "30.00" } })),
    );
    expect(h.reload()).toEqual({
      status: "changed",
      applied: ["logging.level"],
      restartNeeded: ["engine.sessionMax"],
    });
    expect(h.logger.level).toBe("debug");
    // Still pending on the next reload: the running engine did not change.
    expect(h.reload().restartNeeded).toEqual(["engine.sessionMax"]);
  });

  it("reports changed secrets by name only, after registering the new value for scrubbing", () => {
    const h = harness(loaded(), () => loaded(() => {}, "s-two-new"));
    expect(h.reload()).toMatchObject({ status: "changed", restartNeeded: ["secrets"] });
    h.logger.info("a line that mentions s-two-new");
    expect(h.lines.join("")).not.toContain("s-two-new");
    expect(h.lines.join("")).not.toContain("s-one");
  });

  it("ignores an invalid or unreadable config and never throws", () => {
    const invalid = harness(loaded(), () => {
      throw new ConfigError([{ path: "unit.name", message: "must be a string" }], "unit.yaml");
    });
    expect(invalid.reload().status).toBe("invalid");
    expect(invalid.parsed()[0]).toMatchObject({ level: 50, issues: [{ path: "unit.name" }] });
    const broken = harness(loaded(), () => {
      throw new Error("EIO");
    });
    expect(broken.reload().status).toBe("invalid");
    expect(broken.logger.level).toBe("info");
  });

  it("says so when nothing changed", () => {
    expect(harness(loaded(), () => loaded()).reload()).toEqual({
      status: "unchanged",
      applied: [],
      restartNeeded: [],
    });
  });
});
