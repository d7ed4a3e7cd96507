/**
 * Driver options from the parsed configuration (board values already merged in): one place that maps the
 * `gpio`, `ble`, `nfc` and `pulse` sections onto the drivers' option objects, so the daemon, the vend
 * controller factory and `vendd doctor` open the same devices the same way.
 */
import type { Logger } from "pino";
import type { AdvertiserOptions } from "../../drivers/ble/advertiser.js";
import type { GpioOptions } from "../../drivers/gpio/factory.js";
import type { GpioPort } from "../../drivers/gpio/port.js";
import type { NfcOptions } from "../../drivers/nfc/factory.js";
import type { PulseControllerOptions } from "../../drivers/vmc/pulse/options.js";
import type { Clock } from "../core/clock.js";
import type { VenddConfig } from "./load.js";
import { pulseAmountMinor } from "./schema-devices.js";

export interface DeviceDeps {
  clock: Clock;
  logger?: Logger;
}

/** Options of `createGpio` for the `gpio` section. */
export function gpioOptions(config: VenddConfig, deps: DeviceDeps): GpioOptions {
  const g = config.gpio;
  if (g.kind === "sim") return { kind: "sim", clock: deps.clock };
  return {
    kind: "johnny-five",
    io: g.io.plugin === "pi-io" ? { kind: "pi-io" } : { kind: "firmata", port: g.io.port },
    clock: deps.clock,
    ...(deps.logger ? { logger: deps.logger.child({ component: "gpio" }) } : {}),
  };
}

/** Options of `createBeacon` for the `ble` section. */
export function beaconOptions(config: VenddConfig, deps: DeviceDeps): AdvertiserOptions {
  return {
    clock: deps.clock,
    companyId: config.ble.companyId,
    serviceUuid: config.ble.serviceUuid,
    ...(deps.logger ? { logger: deps.logger.child({ component: "ble" }) } : {}),
  };
}

/** Options of `createNfc` for the `nfc` section (badge hashes only, never UIDs). */
export function nfcOptions(config: VenddConfig, deps: DeviceDeps): NfcOptions {
  return {
    badges: config.nfc.badges,
    clock: deps.clock,
    ...(deps.logger ? { logger: deps.logger.child({ component: "nfc" }) } : {}),
  };
}

/** Thrown when the pulse section lacks what the pulse driver needs (the schema normally catches it). */
export class BoardConfigError extends Error {
  override readonly name = "BoardConfigError";
  readonly code = "pulse_incomplete";
}

/**
 * Options of `createPulseController` for the `pulse` section on `gpio`. Amounts are decimal strings in
 * the config and minor units here (src/core/money.ts).
 * @throws BoardConfigError when `pulse.price` or `pulse.pins.output` is null.
 */
export function pulseOptions(config: VenddConfig, gpio: GpioPort, deps: DeviceDeps): PulseControllerOptions {
  const p = config.pulse;
  if (p.price === null || p.pins.output === null) {
    throw new BoardConfigError("pulse.price and pulse.pins.output are required for the pulse driver");
  }
  return {
    gpio,
    clock: deps.clock,
    pulsePin: p.pins.output,
    timing: { widthMs: p.widthMs, gapMs: p.gapMs, activeHigh: p.activeHigh },
    price: pulseAmountMinor(p.price),
    valuePerPulse: pulseAmountMinor(p.valuePerPulse),
    inhibitPin: p.pins.inhibit,
    inhibitActiveHigh: p.inhibitActiveHigh,
    startPin: p.pins.start,
    requestOnSession: p.requestOnSession,
    ...(deps.logger ? { logger: deps.logger.child({ component: "vmc" }) } : {}),
  };
}

/** The beaconId the unit shows: the configured V10 beaconId or the older interface's PoSUnitId. */
export function configuredBeaconId(config: VenddConfig): string | null {
  if (config.payment.driver === "legacy") return config.payment.legacy?.posUnitId ?? null;
  return config.payment.v10?.beaconId ?? null;
}
