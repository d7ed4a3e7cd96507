/** Issue 42: routing's receivers, silences' matching, and the config's checks of routes, as pure functions. */
import { describe, expect, it } from "vitest";
import { receiversOf, type Silence, silenceFor, silenceState } from "./routing.js";
import { AlertsSection, alertSettings } from "./settings.js";
import { parseInstant, parseSpan } from "./silenceTime.js";

const base = {
  mail: { host: "smtp.example.test", from: "f@example.test", to: ["ops@example.test"] },
  webhooks: [
    { name: "ops", url: "https://hooks.example.test/a" },
    { name: "north", url: "https://hooks.example.test/b", group: true },
  ],
};

describe("routing", () => {
  it("sends everything to the defaults without routes", () => {
    expect(receiversOf(alertSettings(base), "offline", { groups: [], company: [] })).toEqual([
      "mail",
      "webhook:ops",
      "webhook:north",
    ]);
  });

  it("sends a change to every matching route's receivers, else to the defaults less routed webhooks", () => {
    const s = alertSettings({
      ...base,
      severities: { backlog: "critical" },
      routes: [
        { groups: ["north"], webhooks: ["north"], mail: ["n@example.test"] },
        { severities: ["critical"], companies: ["Acme AS"], mail: ["acme@example.test"] },
      ],
    });
    const north = { groups: ["north", "lobby"], company: [] };
    const acme = { groups: ["north"], company: ["c-1", "Acme AS", "123"] };
    expect(receiversOf(s, "silent", north)).toEqual(["mail:n@example.test", "webhook:north"]);
    expect(receiversOf(s, "offline", acme)).toEqual([
      "mail:acme@example.test",
      "mail:n@example.test",
      "webhook:north",
    ]);
    expect(receiversOf(s, "silent", { groups: [], company: ["Acme AS"] })).toEqual(["mail", "webhook:ops"]); // warning
    expect(receiversOf(s, "backlog", { groups: [], company: ["Acme AS"] })).toEqual([
      "mail:acme@example.test",
    ]); // made critical
  });

  it("refuses routes without receivers, unknown webhooks and mail without a mail section, naming them", () => {
    const r = AlertsSection.safeParse({
      webhooks: base.webhooks,
      routes: [
        { rules: ["offline"] },
        { webhooks: ["nope"] },
        { mail: ["a@example.test"] },
        { groups: ["Bad Name"], mail: ["x"] },
      ],
    });
    expect(r.success).toBe(false);
    const issues = r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    expect(issues).toEqual(
      expect.arrayContaining([
        "routes.0: a route needs receivers: mail, webhooks or both",
        'routes.1.webhooks.0: no webhook named "nope" in alerts.webhooks (configured: ops, north)',
        "routes.2.mail: mail receivers need the mail section (the SMTP server to send through)",
        expect.stringMatching(/^routes\.3\.groups\.0: 1-63 characters/),
        "routes.3.mail.0: an e-mail address (name@host)",
      ]),
    );
  });
});

describe("silences", () => {
  const x = (over: Partial<Silence>): Silence => ({
    id: "s",
    kind: "silence",
    unitId: null,
    group: null,
    rule: null,
    startsAt: 1000,
    endsAt: 2000,
    createdBy: "mia",
    reason: "r",
    createdAt: 0,
    updatedBy: null,
    updatedAt: null,
    ...over,
  });
  const scope = { groups: ["north"], company: [] };

  it("matches when every matcher given holds, between its start and end only", () => {
    expect(silenceFor([x({ rule: "offline", group: "north" })], "vm-1", "offline", scope, 1500)?.id).toBe(
      "s",
    );
    expect(silenceFor([x({ rule: "offline", group: "south" })], "vm-1", "offline", scope, 1500)).toBeNull();
    expect(silenceFor([x({ unitId: "vm-2" })], "vm-1", "offline", scope, 1500)).toBeNull();
    expect(silenceFor([x({ unitId: "vm-1" })], "vm-1", "offline", scope, 999)).toBeNull();
    expect(silenceFor([x({ unitId: "vm-1" })], "vm-1", "offline", scope, 2000)).toBeNull();
    expect([999, 1000, 2000].map((t) => silenceState(x({}), t))).toEqual(["upcoming", "active", "expired"]);
  });

  it("reads times with their zone and durations, refusing the rest", () => {
    expect(parseInstant("ends", "2026-12-03T22:00+01:00")).toEqual({
      ok: true,
      ms: Date.parse("2026-12-03T21:00Z"),
    });
    expect(parseInstant("ends", "2026-12-03T22:00").ok).toBe(false); // no zone
    expect(parseInstant("ends", "2026-02-30T22:00Z").ok).toBe(false);
    expect(parseSpan("for", "1.5h")).toEqual({ ok: true, ms: 5_400_000 });
    expect(parseSpan("for", "0m").ok).toBe(false);
    expect(parseSpan("for", "400d").ok).toBe(false);
  });
});
