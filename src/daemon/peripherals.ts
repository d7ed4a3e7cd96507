import type { Logger } from "pino";
import type { BeaconAdvertiser } from "../../drivers/ble/beacon.js";
import { createPanel, type Panel } from "../../drivers/gpio/panel.js";
import type { GpioPort } from "../../drivers/gpio/port.js";
import type { BadgeEntry } from "../../drivers/nfc/badges.js";
import type { NfcStation } from "../../drivers/nfc/station.js";
import type { VenddConfig } from "../config/load.js";
import { beaconOptions, nfcOptions } from "../config/seams.js";
import type { Clock } from "../core/clock.js";

/** The part of the engine the peripherals drive. */
export interface ServiceControl {
  setOutOfService(reason: string | null): Promise<void>;
  readonly pos: { beaconId: string } | null;
}

export interface Peripherals {
  /** Current reason the unit is out of service by request (service mode, door), or null. */
  readonly reason: string | null;
  readonly doorOpen: boolean;
  readonly serviceMode: boolean;
  /** The BLE beacon, when enabled (its state shows in the console and doctor). */
  readonly beacon: BeaconAdvertiser | null;
  /** The PoS is known now (payments back after members only): the beacon starts if the unit is in service. */
  refreshBeacon(): void;
  /** The technician badges from a reloaded config: the NFC reader's next tap is checked against them. */
  setBadges(badges: readonly BadgeEntry[]): void;
  close(): Promise<void>;
}

export interface PeripheralDeps {
  clock: Clock;
  logger: Logger;
  engine: ServiceControl;
  gpio: GpioPort | null;
  /**
   * Member badges (issue 18): a tap of a badge that is not a technician's goes to the member gate, which
   * hashes the UID it is lent (daemon/entitlements.ts MemberGate). Absent: such taps are only logged.
   */
  members?: { tap(normalisedUid: string): unknown; tapStarted?(handled: Promise<unknown>): void };
  /** Already-created devices (tests, simulations); otherwise created from config. */
  devices?: { beacon?: BeaconAdvertiser; nfc?: NfcStation };
}

/** The BLE beacon, started when the engine knows its beaconId. */
async function startBeacon(
  config: VenddConfig,
  deps: PeripheralDeps,
  logger: Logger,
): Promise<BeaconAdvertiser> {
  const { createBeacon } = await import("../../drivers/ble/factory.js");
  const beacon =
    deps.devices?.beacon ?? (await createBeacon(beaconOptions(config), { clock: deps.clock, logger }));
  beacon.onStateChange((state, why) => {
    if (state === "degraded") logger.warn({ reason: why }, "BLE beacon degraded; QR and NFC still work");
    else logger.info({ state }, "BLE beacon");
  });
  const id = deps.engine.pos?.beaconId;
  if (id !== undefined) await beacon.start(id);
  return beacon;
}

/** The NFC reader: a technician's badge toggles service mode, a member's goes to the member gate. */
async function startNfc(
  config: VenddConfig,
  deps: PeripheralDeps,
  logger: Logger,
  toggle: (by: string) => void,
): Promise<NfcStation> {
  const { createNfc } = await import("../../drivers/nfc/factory.js");
  const nfc = deps.devices?.nfc ?? (await createNfc(nfcOptions(config), { clock: deps.clock, logger }));
  nfc.onReaderState((state) => logger.info({ state }, "NFC reader"));
  // A vend request that comes while a card is being handled waits for it (issue 31, MemberGate.settling).
  const members = deps.members;
  if (members?.tapStarted !== undefined) nfc.onCardPresented((handled) => members.tapStarted?.(handled));
  nfc.onBadge((tap): Promise<unknown> | undefined => {
    if (tap.authorized) toggle(`badge ${tap.name ?? "?"}`);
    else if (members !== undefined && tap.withUid !== undefined) {
      const failed = (err: unknown) => logger.error({ err }, "member badge tap failed");
      try {
        return Promise.resolve(tap.withUid((uid) => members.tap(uid))).catch(failed);
      } catch (err) {
        failed(err);
      }
    } else logger.warn("unknown badge presented");
    return undefined;
  });
  return nfc;
}

/**
 * The unit's own peripherals around the engine (issue: check-in peripherals): the BLE beacon advertises the
 * beaconId while the unit is in service and stops when it is not; the status LED shows ready or fault; the
 * service button and an authorised technician badge toggle service mode; an open door takes the unit out of
 * service until it closes. A missing or failing device degrades (logged), never stops the unit.
 */
export async function startPeripherals(config: VenddConfig, deps: PeripheralDeps): Promise<Peripherals> {
  const logger = deps.logger.child({ component: "peripherals" });
  let serviceMode = false;
  let doorOpen = false;
  let reason: string | null = null;
  let beacon: BeaconAdvertiser | null = null;
  let nfc: NfcStation | null = null;
  let panel: Panel | null = null;

  const apply = async () => {
    const next = doorOpen ? "Door open" : serviceMode ? "Service mode" : null;
    if (next === reason) return;
    reason = next;
    panel?.setStatus(next === null ? "ready" : "fault");
    if (next === null) {
      const id = deps.engine.pos?.beaconId;
      if (beacon !== null && id !== undefined) await beacon.start(id);
    } else {
      await beacon?.stop();
    }
    await deps.engine.setOutOfService(next);
  };
  const toggle = (by: string) => {
    serviceMode = !serviceMode;
    logger.warn({ by, serviceMode }, "service mode toggled");
    void apply().catch((err: unknown) => logger.error({ err }, "service mode change failed"));
  };

  if (config.ble.enabled) beacon = await startBeacon(config, deps, logger);
  if (config.nfc.enabled) nfc = await startNfc(config, deps, logger, toggle);
  const pins = config.gpio.pins;
  if (
    deps.gpio !== null &&
    (pins.statusLed !== null || pins.serviceButton !== null || pins.doorSwitch !== null)
  ) {
    panel = createPanel({ gpio: deps.gpio, clock: deps.clock, pins });
    panel.setStatus("ready");
    panel.onServiceButton(() => toggle("service button"));
    panel.onDoor((open) => {
      doorOpen = open;
      logger.warn({ open }, "door");
      void apply().catch((err: unknown) => logger.error({ err }, "door change failed"));
    });
  }
  return {
    get reason() {
      return reason;
    },
    get doorOpen() {
      return doorOpen;
    },
    get serviceMode() {
      return serviceMode;
    },
    beacon,
    refreshBeacon() {
      const id = deps.engine.pos?.beaconId;
      if (beacon === null || id === undefined || reason !== null) return;
      void beacon.start(id).catch((err: unknown) => logger.warn({ err }, "BLE beacon start failed"));
    },
    setBadges(badges) {
      nfc?.setBadges(badges);
    },
    async close() {
      panel?.setStatus("off");
      panel?.close();
      await beacon?.close();
      await nfc?.close();
    },
  };
}
