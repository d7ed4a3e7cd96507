/** The `fleet` section: optional, defaults, URL and bounds with specific errors. */
import { describe, expect, it } from "vitest";
import { MAX_BATCH_EVENTS } from "../core/fleetWire.js";
import { issuesOf, pathsOf, rawV10, V10_ENV } from "./fixtures.test-support.js";
import { buildConfig, parseConfig } from "./load.js";

describe("fleet", () => {
  it("is absent by default: no fleet link", () => {
    const c = buildConfig({ unit: { id: "u1", name: "U" }, ...rawV10() } as never);
    expect(c.fleet).toBeUndefined();
  });

  it("fills the defaults around a URL", () => {
    const c = parseConfig({ ...rawV10(), fleet: { url: "https://fleet.example.com" } }, undefined, V10_ENV);
    expect(c.config.fleet).toEqual({
      url: "https://fleet.example.com",
      keyFile: "/var/lib/vendd/fleet.key",
      heartbeatSeconds: 60,
      batchEvents: 200,
      backlogWarnEvents: 1000,
      backlogWarnHours: 24,
      retentionDays: 35,
      maxBacklogDays: 42,
      bundleJitterSeconds: 60,
    });
  });

  it("refuses a missing or non-http URL, out-of-range numbers and a warning later than the drop", () => {
    const bad = {
      ...rawV10(),
      fleet: {
        url: "ftp://fleet",
        heartbeatSeconds: 0,
        batchEvents: MAX_BATCH_EVENTS + 1,
        retentionDays: 0,
        maxBacklogDays: 1,
        backlogWarnHours: 48,
        extra: true,
      },
    };
    const issues = issuesOf(bad);
    expect(pathsOf(issues).sort()).toEqual([
      "fleet.backlogWarnHours",
      "fleet.batchEvents",
      "fleet.extra",
      "fleet.heartbeatSeconds",
      "fleet.retentionDays",
      "fleet.url",
    ]);
    const text = JSON.stringify(issues);
    expect(text).toContain("must be an http(s) URL");
    expect(text).toContain(`must be at most ${MAX_BATCH_EVENTS}`);
    expect(text).toContain("the warning would come after events are dropped");
    expect(pathsOf(issuesOf({ ...rawV10(), fleet: {} }))).toEqual(["fleet.url"]);
  });
});
