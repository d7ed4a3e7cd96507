import { randomBytes } from "node:crypto";
import type { HttpsCallbackClient } from "../invoices/https.js";
import type { EmuClock, InterfaceHandler, Ledger, SimUser } from "../types.js";
import { makeTestKey, type TestKey } from "./cards.js";
import { createOnlineHandler } from "./handler.js";
import { OnlineService } from "./service.js";

/** What the `--json` line and `emulator.info.online` print (test credentials by design). */
export interface OnlineInfo {
  clientId: string;
  clientSecret: string;
  /** The card-data test key's id (`publicKeyId` of initiate); its PEMs: `GET /_admin/online/testkey`. */
  publicKeyId: number;
}

export interface OnlineParts {
  handler: InterfaceHandler;
  service: OnlineService;
  info: OnlineInfo;
  close(): Promise<void>;
}

/** The online-payment interface with one seeded, active PSP client and a fresh RSA test key (id 1). */
export function createOnlineInterface(deps: {
  clock: EmuClock;
  ledger: Ledger;
  findUser(phone: string): SimUser | undefined;
  https: HttpsCallbackClient;
}): OnlineParts {
  const keyId = 1;
  let key: TestKey | null = null;
  const getKey = (): TestKey => {
    key ??= makeTestKey(keyId);
    return key;
  };
  const service = new OnlineService({ ...deps, key: getKey, keyId });
  const clientId = `psp-${randomBytes(6).toString("base64url")}`;
  const clientSecret = randomBytes(24).toString("base64url");
  service.clients.set(clientId, {
    clientId,
    clientSecret,
    integratorName: "Emulator PSP",
    clientName: "emulator-psp-client",
    active: true,
  });
  return {
    handler: createOnlineHandler(service, { testKey: getKey }),
    service,
    info: { clientId, clientSecret, publicKeyId: keyId },
    close: () => service.close(),
  };
}
