import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { flushMicrotasks, ManualClock } from "../../src/core/clock.js";
import { decodeBeaconId } from "./advertisement.js";
import { createRadioAdvertiser } from "./advertiser.js";
import type { BeaconState } from "./beacon.js";
import { createBeacon, loadBleno } from "./factory.js";

/** A fake of bleno's own surface, with its quirks: state strings, and no callback on a failed start. */
class FakeBleno extends EventEmitter {
  state = "unknown";
  calls: string[] = [];
  scan: Buffer | null = null;
  mode: "ok" | "startError" | "silent" = "ok";
  startAdvertisingWithEIRData(adv: Buffer, scan: Buffer, cb: (err?: Error | null) => void) {
    this.calls.push(`start ${adv.length}/${scan.length}`);
    if (this.mode === "startError")
      queueMicrotask(() => this.emit("advertisingStartError", new Error("Command Disallowed")));
    if (this.mode !== "ok") return;
    this.scan = scan;
    queueMicrotask(() => cb(null));
  }
  stopAdvertising(cb?: () => void) {
    this.calls.push("stop");
    this.scan = null;
    if (cb) queueMicrotask(cb);
  }
  power(state: string) {
    this.state = state;
    this.emit("stateChange", state);
  }
}

function setup(retryMs = 1000) {
  const clock = new ManualClock(0);
  const radio = new FakeBleno();
  const beacon = createRadioAdvertiser("bleno", radio, "", { clock, retryMs, commandTimeoutMs: 500 });
  const states: BeaconState[] = [];
  beacon.onStateChange((s) => states.push(s));
  return { clock, radio, beacon, states };
}

describe("bleno beacon", () => {
  it("waits for poweredOn, then advertises the id; power loss degrades, power back recovers", async () => {
    const { radio, beacon, states } = setup();
    await beacon.start("123456789012345");
    expect(beacon.state()).toBe("degraded");
    expect(beacon.reason()).toBe("adapter unknown");
    radio.power("poweredOn");
    await flushMicrotasks();
    expect(beacon.state()).toBe("advertising");
    expect(decodeBeaconId(radio.scan ?? Buffer.alloc(0))).toBe("123456789012345");
    radio.power("poweredOff");
    expect(beacon.state()).toBe("degraded");
    expect(beacon.reason()).toBe("adapter powered off");
    radio.power("poweredOn");
    await flushMicrotasks();
    expect(states).toEqual(["degraded", "advertising", "degraded", "advertising"]);
    await beacon.stop();
    expect(beacon.state()).toBe("stopped");
    expect(radio.calls).toEqual(["start 21/13", "start 21/13", "stop"]);
  });

  it("a refused start (advertisingStartError, no callback) degrades and is retried", async () => {
    const { clock, radio, beacon } = setup(1000);
    radio.power("poweredOn");
    radio.mode = "startError";
    await beacon.start("cd851cd7-8398-4a03-83c1-391a2f5cb71c");
    expect(beacon.state()).toBe("degraded");
    expect(beacon.reason()).toBe("advertising refused: Command Disallowed");
    radio.mode = "ok";
    await clock.advanceAsync(1000, 100);
    expect(beacon.state()).toBe("advertising");
    expect(radio.calls).toEqual(["start 21/21", "start 21/21"]);
  });

  it("a start that never answers times out as degraded", async () => {
    const { clock, radio, beacon } = setup();
    radio.power("poweredOn");
    radio.mode = "silent";
    const starting = beacon.start("123456789012345");
    await clock.advanceAsync(500, 50);
    await starting;
    expect(beacon.reason()).toBe("advertising refused: advertising start timed out");
    await beacon.close();
    expect(clock.armed).toBe(0);
  });

  it("names the capabilities when the adapter is unauthorized", async () => {
    const { radio, beacon } = setup();
    radio.power("unauthorized");
    await beacon.start("123456789012345");
    expect(beacon.reason()).toContain("CAP_NET_RAW");
  });

  it("rejects an invalid id and a start after close", async () => {
    const { beacon } = setup();
    await expect(beacon.start("12")).rejects.toMatchObject({ code: "invalidId" });
    await beacon.close();
    await expect(beacon.start("123456789012345")).rejects.toMatchObject({ code: "closed" });
  });

  it("without the module it stays degraded and never throws", async () => {
    const clock = new ManualClock(0);
    const loaded = await loadBleno("vendd-no-such-bleno-module");
    expect(loaded.radio).toBeNull();
    expect(loaded.reason).toBe("module not available: ERR_MODULE_NOT_FOUND");
    const beacon = createRadioAdvertiser("bleno", loaded.radio, loaded.reason, { clock });
    await beacon.start("123456789012345");
    expect([beacon.state(), beacon.reason()]).toEqual(["degraded", loaded.reason]);
    await beacon.stop();
    expect(beacon.state()).toBe("stopped");
  });

  it("a radio whose listener registration throws (HCI socket) degrades", async () => {
    const radio = Object.assign(new FakeBleno(), {
      on() {
        throw new Error("EPERM");
      },
    });
    const beacon = createRadioAdvertiser("bleno", radio, "", { clock: new ManualClock(0) });
    await beacon.start("123456789012345");
    expect(beacon.reason()).toBe("adapter not available: Error: EPERM");
  });
});

describe("createBeacon", () => {
  it("creates the sim, which advertises over its radio", async () => {
    const beacon = await createBeacon({ kind: "sim" }, { clock: new ManualClock(0) });
    await beacon.start("123456789012345");
    expect(beacon.state()).toBe("advertising");
  });

  it("refuses an unknown kind listing the valid ones", async () => {
    await expect(createBeacon({ kind: "hcitool" } as never, { clock: new ManualClock(0) })).rejects.toThrow(
      'unknown ble kind "hcitool"; valid: bleno, sim',
    );
  });
});
