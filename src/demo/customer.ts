import type { Logger } from "pino";
import type { Screen } from "../../drivers/display/display.js";
import type { Clock } from "../core/clock.js";
import type { EmuResponse } from "../emulator/types.js";

/** The user-simulation side of the emulator the customer uses (its app). */
export interface CustomerApp {
  checkin(beaconId: string, phone: string): EmuResponse;
  accept(beaconId: string, phone: string): EmuResponse;
}

export interface SimCustomerOptions {
  app: CustomerApp;
  clock: Clock;
  logger: Logger;
  /** The phone number of the app user (one of the emulator's users). */
  phone: string;
  /** Time to take out the phone and scan the QR code, ms. */
  scanMs: number;
  /** Check-in attempts before giving up (the payment may not exist yet when the QR appears). */
  attempts?: number;
}

/** Reads the beaconId from a check-in URI the way a scanner does (pos-v10 §15): between `id=` and `&`. */
export function beaconIdFromUri(uri: string): string | null {
  const lower = uri.toLowerCase();
  const at = lower.indexOf("id=");
  if (at < 0) return null;
  const rest = lower.slice(at + 3);
  const end = rest.indexOf("&");
  const id = end < 0 ? rest : rest.slice(0, end);
  return id === "" ? null : id;
}

/**
 * A customer in front of the demo unit: watches the unit's screen, scans the QR code of the `pay` screen,
 * checks in, and accepts the payment once the app shows it (`approveInApp`).
 */
export class SimCustomer {
  private beaconId: string | null = null;
  private busy = false;
  private arriving = false;
  private idleUri: string | null = null;

  constructor(private readonly opts: SimCustomerOptions) {}

  /**
   * Check-in first: a customer walks up and scans the QR code of the idle screen (now, or as soon as it is
   * shown).
   */
  arrive(): void {
    this.arriving = true;
    if (this.idleUri !== null) this.scanIdle(this.idleUri);
  }

  /** Feeds the customer what the unit's display shows. */
  see(screen: Screen): void {
    if (screen.kind === "idle") this.idleUri = screen.checkinUri;
    if (screen.kind === "idle" && screen.checkinUri !== null && this.arriving) {
      this.scanIdle(screen.checkinUri);
    } else if (screen.kind === "pay" && !this.busy) {
      this.beaconId = beaconIdFromUri(screen.checkinUri);
      if (this.beaconId !== null) void this.scanAndCheckIn(this.beaconId);
    } else if (screen.kind === "approveInApp" && this.beaconId !== null) {
      const r = this.opts.app.accept(this.beaconId, this.opts.phone);
      if (r.status !== 200)
        this.opts.logger.warn({ status: r.status, body: r.body }, "customer could not accept");
    } else if (screen.kind === "idle") {
      this.beaconId = null;
    }
  }

  private scanIdle(uri: string): void {
    const id = beaconIdFromUri(uri);
    if (id === null || this.busy) return;
    this.arriving = false;
    this.beaconId = id;
    void this.scanAndCheckIn(id);
  }

  private async scanAndCheckIn(beaconId: string): Promise<void> {
    this.busy = true;
    try {
      const attempts = this.opts.attempts ?? 10;
      for (let i = 0; i < attempts; i++) {
        await this.opts.clock.sleep(i === 0 ? this.opts.scanMs : 200);
        if (this.beaconId !== beaconId) return;
        const r = this.opts.app.checkin(beaconId, this.opts.phone);
        if (r.status === 200) return;
        this.opts.logger.debug({ status: r.status }, "check-in not possible yet");
      }
    } finally {
      this.busy = false;
    }
  }
}
