import { describe, expect, it } from "vitest";
import { createVirtualClock } from "./clock.js";
import type { CheckinTarget, EmuResponse, SimUser } from "./types.js";
import { defaultUsers, UserRegistry } from "./users.js";
import { UserSimulation } from "./usersim.js";
import { TokenService } from "./v10/auth.js";

/** A check-in target that records every call it gets. */
function recordingTarget(beacon: string): CheckinTarget & { calls: string[] } {
  const calls: string[] = [];
  const ok: EmuResponse = { status: 200 };
  const record = (line: string): EmuResponse => {
    calls.push(line);
    return ok;
  };
  return {
    calls,
    ownsBeacon: (b) => b === beacon,
    checkin: (b, u: SimUser) => record(`checkin ${b} ${u.phone}`),
    accept: (b, u: SimUser) => record(`accept ${b} ${u.phone}`),
    reject: (b) => record(`reject ${b}`),
  };
}

describe("user simulation dispatch and user features for the older interface", () => {
  const setup = () => {
    const clock = createVirtualClock({ startTime: 0, timeSource: () => 0, tickMs: 0 });
    const users = new UserRegistry(defaultUsers());
    const v10 = recordingTarget("v10-beacon");
    const legacy = recordingTarget("100000000000001");
    const sim = new UserSimulation(
      [
        { target: v10, modelsUserFeatures: true },
        { target: legacy, modelsUserFeatures: false },
      ],
      {
        findUser: (p) => users.find(p),
        tokens: new TokenService(clock, new Map()),
        clock,
        slowAcceptMs: 5000,
      },
    );
    return { clock, v10, legacy, sim };
  };

  it("routes each beacon to the model that owns it; unknown beacon or phone → 404", () => {
    const { v10, legacy, sim } = setup();
    expect(sim.checkin("v10-beacon", "+4520031801").status).toBe(200);
    expect(sim.checkin("100000000000001", "+4520031802").status).toBe(200);
    expect(sim.reject("100000000000001").status).toBe(200);
    expect(sim.checkin("nobody", "+4520031801").status).toBe(404);
    expect(sim.checkin("v10-beacon", "+4599999999").status).toBe(404);
    expect(v10.calls).toEqual(["checkin v10-beacon +4520031801"]);
    expect(legacy.calls).toEqual(["checkin 100000000000001 +4520031802", "reject 100000000000001"]);
  });

  it("older interface: walks-away users never accept; slow users accept after 5 s of emulator time", () => {
    const { clock, legacy, v10, sim } = setup();
    expect(sim.accept("100000000000001", "+4520031808").status).toBe(200);
    expect(sim.accept("100000000000001", "+4520031807").status).toBe(200);
    expect(legacy.calls).toEqual([]);
    clock.advance(4999);
    expect(legacy.calls).toEqual([]);
    clock.advance(1);
    expect(legacy.calls).toEqual(["accept 100000000000001 +4520031807"]);
    clock.advance(60_000);
    expect(legacy.calls).toHaveLength(1);
    sim.accept("v10-beacon", "+4520031807");
    expect(v10.calls).toEqual(["accept v10-beacon +4520031807"]);
    sim.close();
  });
});
