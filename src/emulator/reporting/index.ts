import { EmulatorInputError } from "../errors.js";
import type { EmuClock, EmuRequest, EmuResponse, InterfaceHandler, Ledger } from "../types.js";
import { MerchantAuth } from "./auth.js";
import { type PointSeed, ReportingBooks } from "./books.js";
import { handleReporting } from "./handler.js";
import { decimal, isoSeconds, type Transfer } from "./model.js";
import { PageTokens } from "./pagetoken.js";

export { AUTHORIZE_PATH, DISCOVERY_PATH, TOKEN_PATH } from "./auth.js";
export type { PointSeed } from "./books.js";
export { REPORTING_BASE } from "./handler.js";

/** A transfer as the admin API and the in-process control show it. */
export interface TransferInfo {
  paymentPointId: string;
  merchantId: string;
  transferReference: string;
  transferReferenceDate: string;
  /** Minor units. */
  amount: number;
  currencyCode: string;
  /** Number of transaction lines it covers. */
  transactions: number;
}

/** In-process control of transaction reporting (tests, benchmarks, the demo). */
export interface ReportingControl {
  /** Every transfer made so far (due ones are made first). */
  transfers(): TransferInfo[];
  /** Advances the clock to the next transfer cut-off, `count` times (1–366); returns the transfers made. */
  advanceToCutoff(count?: number): TransferInfo[];
  /** Fees invoiced: not deducted and not visible, for payments read from now on. */
  setFeesInvoiced(merchantId: string, invoiced: boolean): void;
}

export interface ReportingParts {
  handler: InterfaceHandler;
  control: ReportingControl;
}

const ADMIN = "/_admin/reporting";

function info(t: Transfer): TransferInfo {
  return {
    paymentPointId: t.point.paymentPointId,
    merchantId: t.point.merchant.merchantId,
    transferReference: t.transferReference,
    transferReferenceDate: t.transferReferenceDate,
    amount: t.amount,
    currencyCode: t.currency,
    transactions: t.txs.length,
  };
}

function adminView(t: TransferInfo): Record<string, unknown> {
  return { ...t, amount: decimal(t.amount) };
}

function readJson(req: EmuRequest): Record<string, unknown> {
  if (req.body.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(req.body.toString("utf8"));
  } catch {
    throw new EmulatorInputError("body is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new EmulatorInputError("body must be a JSON object");
  return value as Record<string, unknown>;
}

/**
 * Transaction reporting (seed 002 §Reporting), served although the real one is production-only: the merchant
 * OpenID Connect provider, the reporting routes and the admin routes under `/_admin/reporting`, all built from
 * the one ledger.
 */
export function createReporting(input: {
  clock: EmuClock;
  ledger: Ledger;
  /** OAuth clients: the emulator's integrators (clientId → secret). */
  clients: ReadonlyMap<string, string>;
  points: readonly PointSeed[];
  defaultMerchantId: string;
}): ReportingParts {
  const books = new ReportingBooks(input.ledger, input.clock, input.points, input.defaultMerchantId);
  const auth = new MerchantAuth(
    input.clock,
    input.clients,
    (m) => {
      books.sync();
      return books.merchants.has(m);
    },
    input.defaultMerchantId,
  );
  const deps = { books, auth, tokens: new PageTokens() };
  // Transfers are made at their cut-off (the clock stops there within an advance), in cut-off order.
  input.clock.onTick(() => books.refresh());
  input.clock.schedule(() => books.nextCutoffDue());

  const control: ReportingControl = {
    transfers: () => books.transfers().map(info),
    advanceToCutoff(count = 1) {
      if (!Number.isSafeInteger(count) || count < 1 || count > 366)
        throw new EmulatorInputError("count must be an integer from 1 to 366");
      const before = books.madeCount;
      for (let i = 0; i < count; i++) {
        const now = input.clock.now();
        input.clock.advance(ReportingBooks.nextCutoff(now) - now);
        books.refresh();
      }
      return books.madeSince(before).map(info);
    },
    setFeesInvoiced: (merchantId, invoiced) => books.setFeesInvoiced(merchantId, invoiced),
  };

  const admin = (req: EmuRequest): EmuResponse => {
    const sub = req.path.slice(ADMIN.length);
    if (req.method === "GET" && sub === "/transfers")
      return { status: 200, body: { transfers: control.transfers().map(adminView) } };
    if (req.method === "POST" && sub === "/advance-to-cutoff") {
      const { count } = readJson(req);
      if (count !== undefined && typeof count !== "number")
        throw new EmulatorInputError("count must be a number");
      const made = control.advanceToCutoff(count);
      const now = input.clock.now();
      return { status: 200, body: { now, iso: isoSeconds(now), transfers: made.map(adminView) } };
    }
    const fees = /^\/merchants\/([^/]+)\/fees$/.exec(sub);
    if (req.method === "PUT" && fees) {
      const { invoiced } = readJson(req);
      if (typeof invoiced !== "boolean") throw new EmulatorInputError("invoiced must be a boolean");
      const merchantId = decodeURIComponent(fees[1] ?? "");
      control.setFeesInvoiced(merchantId, invoiced);
      return { status: 200, body: { merchantId, feesInvoiced: invoiced } };
    }
    if (req.method === "GET" && sub === "/merchants") {
      books.refresh();
      const merchants = [...books.merchants.values()].map((m) => ({
        ...m,
        paymentPoints: [...books.points.values()]
          .filter((p) => p.merchant === m)
          .map((p) => ({ paymentPointId: p.paymentPointId, paymentPointName: p.paymentPointName })),
      }));
      return { status: 200, body: { merchants } };
    }
    return {
      status: 404,
      body: {
        error: "no such admin route",
        routes: ["GET /transfers", "POST /advance-to-cutoff", "PUT /merchants/{id}/fees", "GET /merchants"],
      },
    };
  };

  const handler: InterfaceHandler = {
    async handle(req) {
      if (req.path === ADMIN || req.path.startsWith(`${ADMIN}/`)) {
        try {
          return admin(req);
        } catch (e: unknown) {
          if (e instanceof EmulatorInputError) return { status: 400, body: { error: e.message } };
          throw e;
        }
      }
      return auth.handle(req) ?? handleReporting(deps, req);
    },
  };
  return { handler, control };
}
