import { EventEmitter } from "node:events";
import { type AdvertiserOptions, createRadioAdvertiser, type RadioLike } from "./advertiser.js";
import type { BeaconAdvertiser } from "./beacon.js";

/** An in-memory radio with bleno's surface: a simulation (or a test) powers it and reads what it sends. */
export class SimRadio extends EventEmitter implements RadioLike {
  state = "poweredOn";
  /** What is on the air now, or null. */
  onAir: { advertisement: Buffer; scanResponse: Buffer } | null = null;
  private refuse: string | null = null;

  /** Changes the adapter state ("poweredOn", "poweredOff", "unauthorized", ...); going off ends advertising. */
  setState(state: string): void {
    this.state = state;
    if (state !== "poweredOn") this.onAir = null;
    this.emit("stateChange", state);
  }

  /** Makes the next start fail the way bleno does (an `advertisingStartError`, no callback). */
  refuseNextStart(message: string): void {
    this.refuse = message;
  }

  startAdvertisingWithEIRData(
    advertisement: Buffer,
    scanData: Buffer,
    cb: (err?: Error | null) => void,
  ): void {
    if (this.refuse !== null) {
      const err = new Error(this.refuse);
      this.refuse = null;
      queueMicrotask(() => this.emit("advertisingStartError", err));
      return;
    }
    if (advertisement.length > 31 || scanData.length > 31) {
      queueMicrotask(() => cb(new Error("advertisement data over 31 bytes")));
      return;
    }
    this.onAir = { advertisement, scanResponse: scanData };
    queueMicrotask(() => cb(null));
  }

  stopAdvertising(cb?: () => void): void {
    this.onAir = null;
    if (cb) queueMicrotask(cb);
  }
}

/** The simulated beacon: the real advertiser logic over a `SimRadio`. */
export function createSimBeacon(o: AdvertiserOptions): BeaconAdvertiser & { radio: SimRadio } {
  const radio = new SimRadio();
  return Object.assign(createRadioAdvertiser("sim", radio, "", o), { radio });
}
