import { describe, expect, it } from "vitest";
import {
  FAULT_POINTS,
  faultPointsFromEnv,
  fleetServerFaultPointsFromEnv,
  NO_FAULTS,
  NO_FLEET_SERVER_FAULTS,
} from "./faults.js";

describe("fault points", () => {
  it("are inert unless VENDD_FAULT_POINT is set", () => {
    expect(faultPointsFromEnv({})).toBe(NO_FAULTS);
    expect(faultPointsFromEnv({ VENDD_FAULT_POINT: "" })).toBe(NO_FAULTS);
  });

  it("kill at the named point's first hit, or its Nth", () => {
    const kills: string[] = [];
    const first = faultPointsFromEnv({ VENDD_FAULT_POINT: "settle.sent" }, () => kills.push("first"));
    first.hit("start.recorded");
    first.hit("settle.sent");
    first.hit("settle.sent");
    const third = faultPointsFromEnv({ VENDD_FAULT_POINT: "start.recorded@3" }, () => kills.push("third"));
    for (let i = 0; i < 5; i++) third.hit("start.recorded");
    expect(kills).toEqual(["first", "third"]);
  });

  it("refuse an unknown point or a bad count, listing the valid names", () => {
    expect(() => faultPointsFromEnv({ VENDD_FAULT_POINT: "nowhere" })).toThrow(FAULT_POINTS[0]);
    expect(() => faultPointsFromEnv({ VENDD_FAULT_POINT: "settle.sent@0" })).toThrow(/bad hit number/);
  });
});

describe("fleet server fault points", () => {
  it("are armed only when VENDD_FAULT_POINT names one (ingest's fast path is taken only when none is)", () => {
    expect(NO_FLEET_SERVER_FAULTS.armed).toBe(false);
    expect(fleetServerFaultPointsFromEnv({}).armed).toBe(false);
    expect(fleetServerFaultPointsFromEnv({ VENDD_FAULT_POINT: "" }).armed).toBe(false);
    let killed = 0;
    const armed = fleetServerFaultPointsFromEnv({ VENDD_FAULT_POINT: "fleet.ingest.stored@2" }, () => {
      killed++;
    });
    expect(armed.armed).toBe(true);
    armed.hit("fleet.ingest.stored");
    expect(killed).toBe(0);
    armed.hit("fleet.ingest.stored");
    expect(killed).toBe(1);
    expect(() => fleetServerFaultPointsFromEnv({ VENDD_FAULT_POINT: "fleet.nowhere" })).toThrow(
      /unknown point/,
    );
  });
});
