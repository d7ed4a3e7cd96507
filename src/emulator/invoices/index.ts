import { randomBytes, randomUUID } from "node:crypto";
import type { EmuClock, InterfaceHandler, Ledger, SimUser } from "../types.js";
import { createInvoicesHandler } from "./handler.js";
import type { HttpsCallbackClient } from "./https.js";
import type { InvoiceMerchant, Issuer } from "./model.js";
import { InvoiceService } from "./service.js";

/** What the `--json` line and `emulator.info.invoices` print (test credentials by design). */
export interface InvoicesInfo {
  merchantId: string;
  /** Bearer token of the seeded invoice merchant. */
  accessToken: string;
  /** Issuers: one `enabled` (usable), one `pending`, one `disabled`. */
  issuers: { id: string; name: string; status: string }[];
}

export interface InvoicesParts {
  handler: InterfaceHandler;
  service: InvoiceService;
  info: InvoicesInfo;
  close(): Promise<void>;
}

function issuer(name: string, status: Issuer["Status"]): Issuer {
  return {
    Id: randomUUID(),
    Name: name,
    AccountType: "Account",
    Status: status,
    Address: "Emulatorvej 1",
    City: "Aarhus",
    ZipCode: "8000",
  };
}

/**
 * The invoice interface (seed 002 §Invoices) with one seeded merchant: the emulator's merchant VAT, a random
 * bearer token, and three issuers (enabled, pending, disabled).
 */
export function createInvoicesInterface(deps: {
  clock: EmuClock;
  ledger: Ledger;
  findUser(phone: string): SimUser | undefined;
  https: HttpsCallbackClient;
  merchantVat: string;
}): InvoicesParts {
  const service = new InvoiceService(deps);
  const merchant: InvoiceMerchant = {
    merchantId: randomUUID(),
    vat: deps.merchantVat,
    name: "Emulator Merchant A/S",
    accessToken: randomBytes(24).toString("base64url"),
    issuers: [
      issuer("Emulator Invoicing", "enabled"),
      issuer("Pending Dept", "pending"),
      issuer("Closed Dept", "disabled"),
    ],
    callback: null,
  };
  service.merchants.set(merchant.merchantId, merchant);
  return {
    handler: createInvoicesHandler(service, deps.https),
    service,
    info: {
      merchantId: merchant.merchantId,
      accessToken: merchant.accessToken,
      issuers: merchant.issuers.map((i) => ({ id: i.Id, name: i.Name, status: i.Status })),
    },
    async close() {
      service.close();
      await service.settle();
    },
  };
}
