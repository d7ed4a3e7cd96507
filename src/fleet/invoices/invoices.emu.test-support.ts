/**
 * Shared setup of the company-invoice emulator tests (invoices.emu*.test.ts): the fleet database with its
 * captured log lines, unit and sale rows, and the running emulator with the fleet's HTTPS callback receiver
 * and the seeded companies, products and March 2026 vends.
 */
import Fastify, { type FastifyInstance } from "fastify";
import pino from "pino";
import type { ManualClock } from "../../core/clock.js";
import { seededRandom } from "../../core/random.js";
import { type Emulator, startEmulator } from "../../emulator/index.js";
import { selfSignedCertificate } from "../../emulator/testing/httpsReceiver.js";
import { InvoicesClient } from "../../payment/invoices/client.js";
import type { FleetContext } from "../context.js";
import { openFleetDb } from "../database.js";
import type { FleetDb } from "../db/open.js";
import { registerInvoices } from "./callbacks.js";
import { assignUnit, createCompany, setProduct } from "./store/invoices.js";

export const START = Date.parse("2026-04-02T10:00:00Z");
export const DAY = 86_400_000;
export const USER = "+4520031801";
export const AUTH = { kind: "basic" as const, username: "fleet", password: "cb-secret-5f1e9a" };

export async function addUnit(ctx: FleetContext, id: string): Promise<void> {
  await ctx.db
    .insertInto("units")
    .values({
      id,
      public_key: `key-${id}`,
      fingerprint: `fp-${id}`,
      label: id,
      status: "approved",
      enrolled_at: START - 60 * DAY,
      decided_by: "test",
      decided_at: START - 60 * DAY,
    })
    .execute();
}

/** Every log line of the fleet side (the secrets-never-logged check reads them). */
export const logLines: string[] = [];

let seq = 0;
export async function addSale(
  ctx: FleetContext,
  unit: string,
  day: string,
  item: number,
  vends: number,
  member: string | null = null,
): Promise<void> {
  seq += 1;
  const at = Date.parse(`${day}T12:00:00Z`);
  await ctx.db
    .insertInto("sales")
    .values({
      unit_id: unit,
      seq,
      session_id: `s${seq}`,
      order_id: `o${seq}`,
      payment_id: null,
      driver: member === null ? "sim" : "plan",
      flow: "selection",
      item,
      price: 0,
      result: "captured",
      approved: 0,
      captured: 0,
      refunded: 0,
      currency: "DKK",
      vends_ok: vends,
      vends_failed: 0,
      opened_at: at,
      closed_at: at,
      day,
      member_id: member,
      plan_id: member === null ? null : "plan-1",
    })
    .execute();
}

export async function fleet(clock: ManualClock): Promise<{ ctx: FleetContext; db: FleetDb }> {
  const db = await openFleetDb(":memory:");
  return {
    db,
    ctx: {
      db: db.db,
      dialect: db.dialect,
      clock,
      logger: pino({ level: "debug" }, { write: (line: string) => void logLines.push(line) }),
      timeZone: "Europe/Copenhagen",
    },
  };
}

/** Waits (bounded) for network I/O to land: the emulator's callback POST reaching the fleet's receiver. */
export async function until(cond: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The emulator, the fleet's callback receiver and client, and the seeded companies of one test file. */
export interface InvoicesEmu {
  emu: Emulator;
  app: FastifyInstance;
  client: InvoicesClient;
  issuer: string;
  f: { ctx: FleetContext; db: FleetDb };
  acme: string;
  beta: string;
}

/** Closes what was started (any part of it: also after a failed start). */
export async function closeInvoicesEmu(h: Partial<InvoicesEmu>): Promise<void> {
  await h.client?.close();
  await h.app?.close();
  await h.f?.db.close();
  await h.emu?.close();
}

/** Starts the emulator and the fleet's HTTPS callback receiver, and seeds Acme's and Beta's March. */
export async function startInvoicesEmu(clock: ManualClock): Promise<InvoicesEmu> {
  const h: Partial<InvoicesEmu> = {};
  try {
    const cert = selfSignedCertificate();
    const emu = await startEmulator({
      startTime: START,
      timeSource: () => 0,
      callbackCa: cert.cert,
      callbackAllowLoopbackPorts: true,
    });
    h.emu = emu;
    const issuer = emu.info.invoices.issuers[0]?.id ?? "";
    const f = await fleet(clock);
    h.f = f;
    const app = Fastify({ https: { key: cert.key, cert: cert.cert } });
    h.app = app;
    await registerInvoices(app, f.ctx, {
      auth: AUTH,
      client: { details: (id: string) => client.details(id) },
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const addr = app.server.address();
    const callbackUrl = `https://127.0.0.1:${typeof addr === "object" && addr !== null ? addr.port : 0}/invoices/callbacks`;
    const client = new InvoicesClient({
      baseUrl: emu.info.invoices.baseUrl,
      accessToken: () => emu.info.invoices.accessToken,
      clock,
      random: seededRandom(7),
    });
    h.client = client;
    await client.setCallbackBasic(callbackUrl, AUTH.username, AUTH.password);

    const { ctx } = f;
    for (const u of ["u1", "u2", "u3", "u4"]) await addUnit(ctx, u);
    await setProduct(ctx, { item: 1, name: "Coffee", vatBp: 2500, price: 1500 });
    await setProduct(ctx, { item: 2, name: "Tea <green>", vatBp: 2500, price: 1250 });
    await setProduct(ctx, { item: 3, name: "Sandwich", vatBp: 1200, price: 4599 });
    const acme = await createCompany(ctx, {
      name: "Acme <script>alert(1)</script> A/S",
      orgNumber: "DK12345678",
      delivery: "direct",
      phone: USER,
      issuerId: issuer,
      dueDays: 14,
    });
    const beta = await createCompany(ctx, {
      name: "Beta ApS",
      orgNumber: "DK87654321",
      delivery: "link",
      issuerId: issuer,
      dueDays: 10,
    });
    await assignUnit(ctx, acme, "u1");
    await assignUnit(ctx, acme, "u2");
    await assignUnit(ctx, beta, "u3");
    // March 2026 at Acme's units: 3+2+1 coffee, 4 tea, 2 sandwiches; plan vends and April not billed.
    await addSale(ctx, "u1", "2026-03-02", 1, 3);
    await addSale(ctx, "u1", "2026-03-15", 1, 2);
    await addSale(ctx, "u2", "2026-03-31", 1, 1);
    await addSale(ctx, "u2", "2026-03-10", 2, 4);
    await addSale(ctx, "u1", "2026-03-20", 3, 2);
    await addSale(ctx, "u1", "2026-03-21", 3, 1, "member-1");
    await addSale(ctx, "u1", "2026-02-28", 1, 9);
    await addSale(ctx, "u1", "2026-04-01", 1, 9);
    await addSale(ctx, "u4", "2026-03-05", 1, 7); // nobody's unit
    await addSale(ctx, "u3", "2026-03-05", 2, 1); // Beta: one tea
    return { emu, app, client, issuer, f, acme, beta };
  } catch (e) {
    await closeInvoicesEmu(h);
    throw e;
  }
}
