/** The pure parts of alerts (issue 37): the rules' thresholds and an alert's life at their boundaries. */
import { describe, expect, it } from "vitest";
import { planLife } from "./life.js";
import { evaluateRules, offlineFor, type Snapshot, type UnitFacts, vendFailures } from "./rules.js";
import { alertSettings } from "./settings.js";

const MIN = 60_000;
const NOW = Date.parse("2026-11-25T12:00:00Z");
const unit = (over: Partial<UnitFacts> = {}): UnitFacts => ({
  id: "vm-1",
  label: "x",
  lastSeenAt: NOW,
  approvedAt: NOW - 24 * 60 * MIN,
  state: "inService",
  backlogEvents: 0,
  backlogOldestAt: null,
  unresolved: 0,
  ...over,
});
const snap = (over: Partial<Snapshot> = {}): Snapshot => ({
  now: NOW,
  startedAt: NOW - 60 * MIN,
  openOffline: new Set(),
  units: [unit()],
  salesNow: new Map(),
  salesWeeksAgo: [],
  vends: new Map(),
  review: new Map(),
  recon: null,
  entitlementsValidUntil: null,
  rolledBack: new Map(),
  ...over,
});
const rules = alertSettings().rules;

describe("rules", () => {
  it("offline from the later of the last heartbeat and the fleet's start; stopping is not offline", () => {
    const s = snap({ startedAt: NOW - 9 * MIN });
    expect(offlineFor(unit({ lastSeenAt: NOW - 60 * MIN }), s, 10)).toBeNull();
    expect(offlineFor(unit({ lastSeenAt: NOW - 60 * MIN }), snap(), 10)).toBe(60 * MIN);
    expect(offlineFor(unit({ lastSeenAt: NOW - 60 * MIN, state: "stopping" }), snap(), 10)).toBeNull();
  });

  it("silent only against the unit's own usual sales in these hours", () => {
    const weeks = (n: number) => [new Map([["vm-1", n]]), new Map([["vm-1", n]])];
    expect(evaluateRules(snap({ salesWeeksAgo: weeks(3) }), rules).map((f) => f.rule)).toEqual(["silent"]);
    expect(evaluateRules(snap({ salesWeeksAgo: weeks(2) }), rules)).toEqual([]); // a quiet hour usually
    const selling = snap({ salesWeeksAgo: weeks(3), salesNow: new Map([["vm-1", 1]]) });
    expect(evaluateRules(selling, rules)).toEqual([]);
  });

  it("vend failures need the whole sample and the share", () => {
    const s = (ok: number, failed: number) =>
      Array.from({ length: ok + failed }, (_, i) => ({ ok: i < ok ? 1 : 0, failed: i < ok ? 0 : 1 }));
    expect(vendFailures("vm-1", s(10, 9), 20, 0.3)).toBeNull(); // 19 vends: not enough
    expect(vendFailures("vm-1", s(14, 6), 20, 0.3)?.rule).toBe("vendFailures");
    expect(vendFailures("vm-1", s(15, 5), 20, 0.3)).toBeNull();
  });

  it("backlog and silent are not judged on an offline unit's stale heartbeat", () => {
    const stale = unit({ lastSeenAt: NOW - 30 * MIN, backlogEvents: 9999, backlogOldestAt: NOW - 90 * MIN });
    expect(evaluateRules(snap({ units: [stale] }), rules).map((f) => f.rule)).toEqual(["offline"]);
  });
});

describe("life", () => {
  const open = {
    id: "a1",
    unitId: "vm-1",
    rule: "offline" as const,
    detail: "",
    lastTrueAt: NOW - 10 * MIN,
    lastNotifiedAt: NOW - 10 * MIN,
    ackedAt: null,
  };
  const finding = { unitId: "vm-1", rule: "offline" as const, detail: "d" };

  it("opens once per unit and rule; holds; re-notifies at the interval unless acknowledged", () => {
    expect(planLife([], [finding, finding], NOW, 10 * MIN, 30 * MIN)).toEqual([{ kind: "open", ...finding }]);
    expect(planLife([open], [finding], NOW, 10 * MIN, 30 * MIN)).toEqual([
      { kind: "hold", id: "a1", detail: "d", renotify: false },
    ]);
    const due = { ...open, lastNotifiedAt: NOW - 30 * MIN };
    expect(planLife([due], [finding], NOW, 10 * MIN, 30 * MIN)[0]).toMatchObject({ renotify: true });
    expect(planLife([{ ...due, ackedAt: NOW - MIN }], [finding], NOW, 10 * MIN, 30 * MIN)[0]).toMatchObject({
      renotify: false,
    });
    expect(planLife([due], [finding], NOW, 10 * MIN, 0)[0]).toMatchObject({ renotify: false });
  });

  it("resolves only once clear for the whole hold-off", () => {
    expect(planLife([{ ...open, lastTrueAt: NOW - 10 * MIN + 1 }], [], NOW, 10 * MIN, 0)).toEqual([]);
    expect(planLife([open], [], NOW, 10 * MIN, 0).map((a) => a.kind)).toEqual(["resolve"]);
  });
});

describe("durations in details (issue 42)", () => {
  it("a sub-minute or fractional hold-off or silence is worded in seconds and minutes, never '0 min'", () => {
    const open = {
      id: "a1",
      unitId: "vm-1",
      rule: "offline" as const,
      detail: "",
      lastTrueAt: NOW - 3_000,
      lastNotifiedAt: NOW - MIN,
      ackedAt: null,
    };
    // holdOffMinutes: 0.05 (3 s)
    expect(planLife([open], [], NOW, 3_000, 0)).toEqual([
      { kind: "resolve", id: "a1", detail: "clear for 3 s" },
    ]);
    expect(planLife([{ ...open, lastTrueAt: NOW - 90_000 }], [], NOW, 3_000, 0)[0]).toMatchObject({
      detail: "clear for 1 min 30 s",
    });
    expect(planLife([{ ...open, lastTrueAt: NOW - 10 * MIN }], [], NOW, 3_000, 0)[0]).toMatchObject({
      detail: "clear for 10 min",
    });
    // offline.minutes: 0.5
    const quick = { ...rules, offline: { minutes: 0.5 } };
    const f = evaluateRules(snap({ units: [unit({ lastSeenAt: NOW - 40_000 })] }), quick);
    expect(f.find((x) => x.rule === "offline")?.detail).toBe("no heartbeat for 40 s");
    const long = evaluateRules(snap({ units: [unit({ lastSeenAt: NOW - 150 * MIN })] }), rules);
    expect(long.find((x) => x.rule === "offline")?.detail).toBe("no heartbeat for 2 h 30 min");
  });
});
