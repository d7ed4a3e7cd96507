/**
 * A day of simulated vends for reconciliation tests and the bench (issue 17): `vends` vends across `units`
 * units, alternately through the V10 and the older interface, recorded in the emulator's one ledger exactly as
 * those interfaces record a capture and a refund (interface, merchant, payment point, order id, amount), and
 * the matching fleet sales rows (the rows the units' outboxes would have produced). Every 7th vend is a
 * partial capture, every 11th is refunded (one in three of those fully, the rest partially). Order ids are the journal's
 * (`<unit>-<epoch>-<seq>`).
 *
 * Also the merchant's consent (OpenID Connect authorization + code exchange) that yields the refresh token a
 * reconciliation client starts from.
 */

import type { Kysely } from "kysely";
import { request } from "undici";
import type { Emulator } from "../src/emulator/index.js";
import type { FleetDatabase, SalesTable } from "../src/fleet/db/schema.js";
import type { SaleRow } from "../src/fleet/reconcile/match.js";

export const EPOCH = "1764000000";

export interface DayOptions {
  vends: number;
  units: number;
  /** Unit ids are `${prefix}${n}` (default `vm`). */
  prefix?: string;
  /** Emulator ms between vends (default 15 s: 5,000 vends fit in a day). */
  stepMs?: number;
  /** First order sequence number (several days must not reuse order ids). */
  firstSeq?: number;
}

export interface SeededDay {
  sales: SaleRow[];
  /** Full rows for the fleet's `sales` table. */
  rows: SalesTable[];
}

/** Records the day in the ledger from the emulator's current time on; returns the fleet's view of it. */
export function seedDay(emu: Emulator, o: DayOptions): SeededDay {
  const { v10, legacy } = emu.info;
  const step = o.stepMs ?? 15_000;
  const rows: SalesTable[] = [];
  for (let i = 0; i < o.vends; i++) {
    const n = i % o.units;
    const unit = `${o.prefix ?? "vm"}${n}`;
    const seq = (o.firstSeq ?? 1) + i;
    const orderId = `${unit}-${EPOCH}-${seq}`;
    const driver = n % 2 === 0 ? "v10" : "legacy";
    const price = 500 + ((i * 37) % 2500);
    const captured = i % 7 === 3 ? price - 100 : price;
    const refunded = i % 11 === 5 ? (i % 33 === 5 ? captured : Math.floor(captured / 2)) : 0;
    const scope =
      driver === "v10"
        ? { interface: "v10" as const, merchant: v10.merchantVat, point: v10.storeId }
        : { interface: "legacy" as const, merchant: legacy.merchantId, point: legacy.locationId };
    const paymentId = driver === "v10" ? `pay-${seq}` : orderId;
    emu.clock.advance(step);
    const openedAt = emu.clock.now();
    emu.recordLedger({
      ...scope,
      id: paymentId,
      paymentId: null,
      orderId,
      kind: "captured",
      amount: captured,
    });
    if (refunded > 0) {
      emu.clock.advance(1000);
      emu.recordLedger({
        ...scope,
        id: `ref-${seq}`,
        paymentId,
        orderId,
        kind: "refunded",
        amount: refunded,
      });
    }
    const closedAt = emu.clock.now();
    rows.push({
      unit_id: unit,
      seq,
      session_id: `s-${seq}`,
      order_id: orderId,
      payment_id: paymentId,
      driver,
      flow: "selection",
      item: 1 + (i % 40),
      price,
      result: "captured",
      approved: price,
      captured,
      refunded,
      currency: "DKK",
      vends_ok: 1,
      vends_failed: 0,
      opened_at: openedAt,
      closed_at: closedAt,
      day: new Date(closedAt).toISOString().slice(0, 10),
      member_id: null,
      plan_id: null,
    });
  }
  return { rows, sales: rows.map(toSale) };
}

export function toSale(r: SalesTable): SaleRow {
  return {
    unit_id: r.unit_id,
    session_id: r.session_id,
    order_id: r.order_id,
    payment_id: r.payment_id,
    driver: r.driver,
    captured: r.captured,
    refunded: r.refunded,
    closed_at: r.closed_at,
    day: r.day,
    currency: r.currency,
  };
}

const REDIRECT = "https://client.example/callback";

/**
 * The merchant's consent as the emulator simulates it (authorization endpoint grants at once, redirects with
 * a code) and the code exchanged for tokens; returns the refresh token.
 */
export async function consentRefreshToken(emu: Emulator, merchantId?: string): Promise<string> {
  const { clientId, clientSecret } = emu.info.reporting;
  const origin = emu.info.v10.baseUrl;
  const q = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "openid transactionreporting offline_access",
    // Another merchant than the seeded one (issue 30: a merchant per currency).
    ...(merchantId === undefined ? {} : { login_hint: merchantId }),
  });
  const a = await request(`${origin}/merchant-authentication-openidconnect/connect/authorize?${q}`);
  await a.body.text();
  const location = String(a.headers.location ?? "");
  const code = new URL(location).searchParams.get("code");
  if (code === null) throw new Error(`consent refused (${a.statusCode})`);
  const t = await request(`${origin}/merchant-authentication-openidconnect/connect/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`,
    },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT }).toString(),
  });
  const body = (await t.body.json()) as { refresh_token?: unknown };
  if (typeof body.refresh_token !== "string") throw new Error(`code exchange failed (${t.statusCode})`);
  return body.refresh_token;
}

/** The reporting client's endpoints on an emulator. */
export function emulatorEndpoints(emu: Emulator): { baseUrl: string; tokenUrl: string } {
  return {
    baseUrl: emu.info.reporting.baseUrl,
    tokenUrl: `${emu.info.v10.baseUrl}/merchant-authentication-openidconnect/connect/token`,
  };
}

/**
 * Stores sales rows in the fleet database, with an approved `units` row for each unit not there yet.
 * `member_id`/`plan_id` (schema.ts, issue 18) are left out: their migration is not on this branch.
 */
export async function insertSales(db: Kysely<FleetDatabase>, rows: readonly SalesTable[]): Promise<void> {
  const known = new Set((await db.selectFrom("units").select("id").execute()).map((u) => u.id));
  for (const unit of new Set(rows.map((r) => r.unit_id))) {
    if (known.has(unit)) continue;
    await db
      .insertInto("units")
      .values({
        id: unit,
        public_key: `key-${unit}`,
        fingerprint: `fp-${unit}`,
        label: unit,
        status: "approved",
        enrolled_at: 0,
      })
      .execute();
  }
  for (let i = 0; i < rows.length; i += 200) {
    await db
      .insertInto("sales")
      .values(rows.slice(i, i + 200).map(({ member_id: _m, plan_id: _p, ...row }) => row))
      .execute();
  }
}
