/**
 * Device facts that config validation (defaults and bounds) and the drivers both need. They live here, at
 * the bottom layer, because config validation imports no driver and drivers import nothing of src/ but
 * src/core (README, Architecture). The drivers re-export them where they are documented.
 */

/** vendd's BLE check-in service UUID (drivers/ble/advertisement.ts describes the advertisement). */
export const CHECKIN_SERVICE_UUID = "e89d4bfd-a59a-44ff-9f21-80ab82b4dee7";

/** The Bluetooth SIG's company id for tests (0xFFFF); a fleet with its own assigned id configures it. */
export const TEST_COMPANY_ID = 0xffff;

/** Shortest active or inactive time a pulse receiver is known to accept (vending-mdb §6: about 10 ms). */
export const MIN_PULSE_MS = 10;

/** Longest active or inactive time of a pulse accepted in configuration (ms). */
export const MAX_PULSE_MS = 10_000;
