import pino from "pino";
import { describe, expect, it } from "vitest";
import type { CheckinDisplay } from "../../drivers/display/display.js";
import { type VendController, VmcError } from "../../drivers/vmc/controller.js";
import { NO_FAULTS } from "../core/faults.js";
import type { Journal } from "../journal/journal.js";
import type { PaymentDriver } from "../payment/driver.js";
import type { EffectIO, Request } from "./effectIO.js";
import { type Activity, type ActivityKey, type EffectHost, runEffect } from "./effects.js";
import { S } from "./selection.test-support.js";

/**
 * An effect is a journal write and/or a Request: it touches nothing but its io and the four host operations,
 * and the request's I/O does not run until the runner runs it (after the commit).
 */
function rig(approve: () => Promise<void>) {
  const log: string[] = [];
  const journal = {
    approveVend: (id: string, item: number, amount: number) =>
      log.push(`journal approve ${id} ${item} ${amount}`),
    event: (id: string, what: string) => log.push(`journal event ${id} ${what}`),
    nextOrderId: () => "vm-1-00042-abcd",
  } as unknown as Journal;
  const vmc = {
    approveVend: (amount: number) => {
      log.push(`vmc approve ${amount}`);
      return approve();
    },
  } as unknown as VendController;
  let ids = 0;
  const io: EffectIO = {
    journal,
    vmc,
    payment: { kind: "sim" } as unknown as PaymentDriver,
    display: {} as CheckinDisplay,
    logger: pino({ level: "silent" }),
    faults: NO_FAULTS,
    signal: new AbortController().signal,
    newId: () => `id-${++ids}`,
    flow: "selection",
    paymentMode: "reservation",
    captureType: "full",
  };
  const requests: Request[] = [];
  const activities: (Activity | ActivityKey)[] = [];
  const host: EffectHost = {
    launch: (r) => requests.push(r),
    start: (a) => activities.push(a),
    stop: (a) => activities.push(a),
    finished: () => {},
  };
  return { io, host, log, requests, activities };
}

describe("effects (io and a narrow host)", () => {
  it("approveVend journals at once; the VMC is asked only when the runner runs the request", async () => {
    const r = rig(async () => {});
    runEffect({ type: "approveVend", session: S, item: 12, amount: 150 }, r.io, r.host);
    expect(r.log).toEqual(["journal approve s1 12 150"]);
    expect(r.requests).toHaveLength(1);
    const [request] = r.requests;
    expect(await request?.run()).toBeUndefined();
    expect(r.log.at(-1)).toBe("vmc approve 150");
  });

  it("a refused approval becomes the approveFailed input; an unconfirmed one becomes none", async () => {
    const refused = rig(() => Promise.reject(new VmcError("state", "not in a vend")));
    runEffect({ type: "approveVend", session: S, item: 12, amount: 150 }, refused.io, refused.host);
    expect(await refused.requests[0]?.run()).toEqual({
      input: { type: "approveFailed", sessionId: "s1", reason: "not in a vend" },
    });
    const silent = rig(() => Promise.reject(new VmcError("timeout", "no answer")));
    runEffect({ type: "approveVend", session: S, item: 12, amount: 150 }, silent.io, silent.host);
    expect(await silent.requests[0]?.run()).toBeUndefined();
  });

  it("allocateSession takes its id from io.newId and answers sessionAllocated", async () => {
    const r = rig(async () => {});
    runEffect({ type: "allocateSession" }, r.io, r.host);
    expect(await r.requests[0]?.run()).toEqual({
      input: { type: "sessionAllocated", sessionId: "id-1", orderId: "vm-1-00042-abcd" },
    });
  });

  it("timers and watches go through the host's start and stop", () => {
    const r = rig(async () => {});
    runEffect({ type: "startTimer", sessionId: "s1", timer: "vend", ms: 5 }, r.io, r.host);
    runEffect({ type: "stopWatching", sessionId: "s1" }, r.io, r.host);
    runEffect({ type: "watchCheckin" }, r.io, r.host);
    expect(r.activities).toEqual([
      { kind: "timer", sessionId: "s1", timer: "vend", ms: 5 },
      { kind: "paymentWatch", sessionId: "s1" },
      { kind: "checkinPoll" },
    ]);
    expect(r.requests).toEqual([]);
  });
});
