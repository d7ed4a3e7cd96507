import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { VmcEvent } from "../../drivers/vmc/controller.js";
import { createVendController } from "../../drivers/vmc/factory.js";
import { buildConfig } from "../config/load.js";
import { vmcOptions } from "../config/seams.js";
import { ManualClock } from "../core/clock.js";
import { createVendSource } from "./vendSource.js";

const logger = pino({ level: "silent" });
const base = {
  unit: { id: "demo-1", name: "Demo" },
  payment: {
    driver: "legacy" as const,
    legacy: {
      baseUrl: "http://127.0.0.1:9",
      merchantId: "M",
      locationId: "L",
      posId: "p",
      posUnitId: "123456789012345",
    },
  },
};

describe("the demo's vend source per board", () => {
  it("sim-pulse: a start press requests the board's price; approval sends price ÷ value-per-pulse pulses", async () => {
    const clock = new ManualClock(0);
    const config = buildConfig({ ...base, board: "sim-pulse" });
    const source = await createVendSource(config, { clock, logger });
    const events: VmcEvent[] = [];
    source.vmc.onEvent((e) => events.push(e));
    await source.vmc.open();
    expect(source.request(Math.random)).toBe(true);
    expect(events.at(-1)).toEqual({ type: "vendRequested", item: 1, price: 500 });
    expect(source.request(Math.random)).toBe(false);
    await source.vmc.approveVend(500);
    await clock.advanceAsync(500, 10);
    expect(events.at(-1)).toEqual({ type: "vendSucceeded", item: 1 });
    const highs = source.gpio?.writes.filter((w) => w.pin === 17 && w.high).map((w) => w.at);
    expect(highs).toEqual([50, 150, 250, 350, 450]);
    await source.vmc.close();
  });

  it("sim: the catalog machine; real-hardware boards are refused", async () => {
    const clock = new ManualClock(0);
    const sim = await createVendSource(buildConfig(base), { clock, logger });
    expect(sim.vmc.kind).toBe("sim");
    expect(sim.gpio).toBeNull();
    await sim.vmc.open();
    expect(sim.request(() => 0)).toBe(true);
    const pulse = buildConfig({ ...base, board: "pi-pulse", pulse: { price: "3.00" } });
    await expect(createVendSource(pulse, { clock, logger })).rejects.toMatchObject({
      code: "unsupported_board",
    });
  });

  it("the vmc factory builds the pulse controller on the board's GPIO kind when none is injected", async () => {
    const clock = new ManualClock(0);
    const vmc = await createVendController(vmcOptions(buildConfig({ ...base, board: "sim-pulse" })), {
      clock,
      logger,
    });
    expect(vmc.kind).toBe("pulse");
    await vmc.open();
    await vmc.close();
    const priced = buildConfig({ ...base, board: "sim-pulse", pulse: { valuePerPulse: "2.50" } });
    expect(await createVendController(vmcOptions(priced), { clock, logger })).toMatchObject({
      kind: "pulse",
    });
  });
});
