import type { Secrets } from "../config/load.js";
import type { EmulatorInfo } from "../emulator/index.js";

/**
 * What a unit needs to use the payment-service emulator: the connection settings of each interface (to
 * place under `payment.v10` / `payment.legacy`) and the secrets the emulator issued. One mapping for the
 * demo, the benchmarks and the tests. It lives with the demo, its user: the emulator imports nothing of the
 * unit (no config), and the unit's production code never imports the emulator (README, Architecture).
 */
export function emulatorV10Settings(info: EmulatorInfo) {
  const { v10 } = info;
  return {
    baseUrl: v10.baseUrl,
    tokenUrl: v10.tokenUrl,
    clientId: v10.clientId,
    merchantVat: v10.merchantVat,
    storeId: v10.storeId,
  };
}

export function emulatorLegacySettings(info: EmulatorInfo) {
  const { legacy } = info;
  return { baseUrl: legacy.baseUrl, merchantId: legacy.merchantId, locationId: legacy.locationId };
}

export function emulatorSecrets(info: EmulatorInfo, driver: "v10" | "legacy"): Secrets {
  return driver === "v10"
    ? { v10: { clientSecret: info.v10.clientSecret } }
    : { legacy: { apiKey: info.legacy.apiKey, merchantKey: info.legacy.merchantKey } };
}
