import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { rawV10 } from "../config/fixtures.test-support.js";
import { buildConfig } from "../config/load.js";
import { render } from "../console/render.js";
import { ManualClock } from "../core/clock.js";
import { parseControlStatus } from "../core/controlStatus.js";
import { FaultData, ServiceData, UnitEvent } from "../core/fleetWire.js";
import { openSqliteJournal } from "../journal/sqlite.js";
import { EMPTY_STATE, writeState } from "../update/state.js";
import { auditUpdateOutcome } from "./controlUnit.js";
import { startFleetUnit, statusEvents } from "./fleetUnit.js";
import type { UnitStatus } from "./status.js";

const inService: UnitStatus = { inService: true, reasons: [] };
const unreachable: UnitStatus = {
  inService: false,
  reasons: [{ code: "paymentUnreachable", detail: "payment service unreachable: ECONNREFUSED", retryAt: 1 }],
};
const vmcAndService: UnitStatus = {
  inService: false,
  reasons: [
    { code: "vmcUnavailable", detail: "vending machine link unavailable (timeout)", retryAt: 5 },
    { code: "serviceMode", detail: "service mode", retryAt: null },
  ],
};

describe("status changes as outbox events", () => {
  it("reports service state and raised/cleared faults, each once per change", () => {
    const first = statusEvents(null, unreachable);
    expect(first.service).toEqual({
      state: "outOfService",
      reason: "payment service unreachable: ECONNREFUSED",
    });
    expect(first.faults).toEqual([
      { code: "paymentUnreachable", state: "raised", message: "payment service unreachable: ECONNREFUSED" },
    ]);
    // A new retry time or detail of the same reason is no new event.
    const again = statusEvents(unreachable, {
      inService: false,
      reasons: [{ code: "paymentUnreachable", detail: "other detail", retryAt: 9 }],
    });
    expect(again).toEqual({ service: null, faults: [] });
    const next = statusEvents(unreachable, vmcAndService);
    expect(next.service?.state).toBe("serviceMode");
    expect(next.faults.map((f) => [f.code, f.state])).toEqual([
      ["paymentUnreachable", "cleared"],
      ["vmcLink", "raised"],
    ]);
    const back = statusEvents(vmcAndService, inService);
    expect(back.service).toEqual({ state: "inService", reason: "" });
    for (const f of [...first.faults, ...next.faults, ...back.faults]) FaultData.parse(f);
    for (const s of [first.service, next.service, back.service]) ServiceData.parse(s);
  });
});

describe("the fleet in status", () => {
  const base = {
    unitId: "vm-1",
    inService: true,
    reasons: [],
    links: { vmc: "up", payment: "up", journal: "up" },
    unresolved: 0,
    configVersion: 1,
  };

  it("parses the optional fleet object, and leaves it out when absent or malformed", () => {
    const fleet = { state: "unreachable", backlog: 12, oldestAt: 5, lastAckAt: null, warning: "too old" };
    expect(parseControlStatus({ ...base, fleet }).fleet).toEqual(fleet);
    expect(parseControlStatus(base).fleet).toBeUndefined();
    expect("fleet" in parseControlStatus({ ...base, fleet: { state: "bogus", backlog: 1 } })).toBe(false);
  });

  it("shows the fleet line and its warning in the console's status", () => {
    const text = render("status", {
      ...base,
      fleet: {
        state: "unreachable",
        backlog: 1200,
        oldestAt: null,
        lastAckAt: null,
        warning: "1200 events wait",
      },
    });
    expect(text).toContain("fleet unreachable  backlog 1200 events");
    expect(text).toContain("fleet warning: 1200 events wait");
    expect(render("status", base)).not.toContain("fleet");
  });
});

describe("bundle outcomes as version events", () => {
  it("reports an applied bundle once, in the transaction that audits it", () => {
    const stateDir = mkdtempSync(join(tmpdir(), "vendd-fleet-upd-"));
    try {
      const config = buildConfig({
        unit: { id: "u1", name: "U" },
        ...rawV10(),
        updates: { stateDir },
      } as never);
      writeState(stateDir, {
        ...EMPTY_STATE,
        highWater: 4,
        outcome: {
          id: "o-1",
          result: "committed",
          version: 4,
          bundleId: "cfg-4",
          kind: "config",
          at: "2026-11-25T10:00:00Z",
          reason: null,
          code: null,
          source: "pull",
        },
      });
      const j = openSqliteJournal({
        path: ":memory:",
        unitId: "u1",
        clock: new ManualClock(),
        outbox: { currency: "DKK" },
      });
      auditUpdateOutcome(config, j, pino({ level: "silent" }));
      auditUpdateOutcome(config, j, pino({ level: "silent" }));
      const events = j.outboxPending(10).map((e) => UnitEvent.parse(e));
      expect(events).toMatchObject([
        {
          seq: 1,
          kind: "version",
          data: { kind: "config", bundleId: "cfg-4", version: "4", outcome: "applied" },
        },
      ]);
      j.close();
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

describe("the fleet unit without a usable key", () => {
  it("is disabled, says how to fix it, still writes the outbox and applies its retention", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-fleet-nokey-"));
    try {
      const config = buildConfig({
        unit: { id: "u1", name: "U" },
        ...rawV10(),
        updates: { stateDir: dir },
        fleet: { url: "http://127.0.0.1:9", keyFile: join(dir, "missing.key"), maxBacklogDays: 2 },
      } as never);
      const clock = new ManualClock();
      const j = openSqliteJournal({ path: ":memory:", unitId: "u1", clock, outbox: { currency: "DKK" } });
      const fu = startFleetUnit({
        config,
        journal: j,
        clock,
        random: () => 0.5,
        logger: pino({ level: "silent" }),
        version: "1.0.0",
        status: () => inService,
        onStatus: () => () => {},
      });
      expect(fu?.status()).toMatchObject({ state: "disabled", backlog: 2 });
      expect(fu?.status().warning).toContain("run `vendd fleet enroll`");
      clock.advance(3 * 86_400_000);
      fu?.retain();
      const kinds = j.outboxPending(10).map((e) => {
        const ev = UnitEvent.parse(e);
        return ev.kind === "fault" ? ev.data.code : ev.kind;
      });
      expect(kinds).toEqual(["outboxOverflow", "outboxOverflow", "outboxOverflow"]);
      await fu?.stop();
      j.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
