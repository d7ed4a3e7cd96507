import type { FastifyInstance } from "fastify";
import { expect } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { type FleetServices, fleetPlugins } from "../../src/fleet/features.js";
import { buildInvoice } from "../../src/fleet/invoices/build.js";
import {
  assignUnit,
  createCompany,
  insertDraft,
  invoicesDb,
} from "../../src/fleet/invoices/store/invoices.js";
import { addCompanyMember, createPlan } from "../../src/fleet/plans/index.js";
import { createFleetApp } from "../../src/fleet/server.js";
import { SESSION_COOKIE } from "../../src/fleet/web/index.js";
import type { InvoicesClient } from "../../src/payment/invoices/client.js";
import { SubscriptionsClient } from "../../src/payment/subscriptions/client.js";
import { type Fleet, NOW, openTestFleet, seed, UNITS, XSS } from "./fleetDashboard.js";

export const BADGE_SALT = "c2FsdC1mb3ItdGVzdHMtb25seQ";
export const ISSUER = "0f8fad5b-d9cb-469f-a165-70867728950e";

export interface ComposedFleet extends Fleet {
  services: FleetServices;
  /** Remote ids the fake invoice client was asked to cancel. */
  cancelled: string[];
  planId: string;
  memberId: string;
  invoiceId: string;
  runId: number;
}

export async function seedComposed(
  ctx: FleetContext,
): Promise<{ planId: string; memberId: string; invoiceId: string; runId: number }> {
  const planId = await createPlan(ctx, {
    name: "Coffee club",
    price: 9900,
    currency: "DKK",
    dayItems: 3,
    dayAmount: null,
    monthItems: 40,
    monthAmount: null,
    units: ["*"],
  });
  const company = await createCompany(ctx, {
    name: `Acme ${XSS}`,
    orgNumber: "12345678",
    delivery: "link",
    issuerId: ISSUER,
  });
  await assignUnit(ctx, company, UNITS.lobby);
  const memberId = await addCompanyMember(
    ctx,
    { badgeSalt: BADGE_SALT },
    { planId, companyId: company, name: "Ada Lovelace", badgeUid: "04A1B2C3D4" },
  );
  const built = buildInvoice([
    { articleNumber: "7", description: "Coffee", quantity: 12, unit: "pcs", unitPrice: 2500, vatBp: 2500 },
  ]);
  const draft = await insertDraft(ctx, {
    companyId: company,
    month: "2026-10",
    issuerId: ISSUER,
    delivery: "link",
    currency: "DKK",
    issueDate: "2026-11-02",
    dueDate: "2026-11-16",
    built,
  });
  if (draft === null) throw new Error("no draft");
  await invoicesDb(ctx)
    .updateTable("invoices")
    .set({ status: "sent", remote_status: "Created", remote_id: "remote-1", sent_at: NOW - 86_400_000 })
    .where("id", "=", draft.id)
    .execute();
  const run = await ctx.db
    .insertInto("recon_runs")
    .values({
      run_at: NOW - 3_600_000,
      from_day: "2026-11-24",
      to_day: "2026-11-24",
      clean: 0,
      summary: JSON.stringify({ counts: { matched: 1, missingInReport: 1 }, transfers: [] }),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  await ctx.db
    .insertInto("recon_lines")
    .values([
      {
        run_id: run.id,
        day: "2026-11-24",
        class: "matched",
        unit_id: UNITS.lobby,
        session_id: "s1",
        order_id: "o1",
        reference: "r1",
        expected: 2500,
        reported: 2500,
        reason: "",
      },
      {
        run_id: run.id,
        day: "2026-11-24",
        class: "missingInReport",
        unit_id: UNITS.lobby,
        session_id: "s2",
        order_id: "o2",
        reference: null,
        expected: 2500,
        reported: null,
        reason: `not in the report ${XSS}`,
      },
    ])
    .execute();
  return { planId, memberId, invoiceId: draft.id, runId: run.id };
}

/** Services for the composed app: plans (client on a closed port), invoices (recording fake client). */
export function testServices(clock: ManualClock, cancelled: string[]): FleetServices {
  const invoices = {
    async cancel(id: string) {
      cancelled.push(id);
    },
    async details() {
      throw new Error("not used");
    },
  } as unknown as InvoicesClient;
  return {
    plans: {
      client: new SubscriptionsClient({
        baseUrl: "http://127.0.0.1:9",
        tokenUrl: "http://127.0.0.1:9/token",
        clientId: "c",
        clientSecret: "s",
        providerId: "p",
        clock,
      }),
      settings: {
        publicUrl: "https://fleet.example",
        userRedirectUrl: "https://fleet.example/thanks",
        callbackApiKey: "callback-key-0123456789",
        csrfSecret: Buffer.from("x".repeat(32)),
        badgeSalt: BADGE_SALT,
        entitlementKey: null,
        countryCode: "DK",
        autoReserve: false,
      },
    },
    invoices: { client: invoices, auth: { kind: "apikey", key: "invoice-callback-key-1" } },
  };
}

/** The composed app (unit API, dashboard and every configured page) on a seeded in-memory database. */
export async function startComposedFleet(): Promise<ComposedFleet> {
  const clock = new ManualClock(NOW);
  const { db, ctx } = await openTestFleet(":memory:", clock);
  await seed(ctx);
  const ids = await seedComposed(ctx);
  const cancelled: string[] = [];
  const services = testServices(clock, cancelled);
  const app = await createFleetApp(ctx, {
    plugins: fleetPlugins(services, { secureCookies: false }),
    entitlements: true,
  });
  await app.ready();
  return {
    app,
    ctx,
    clock,
    db,
    services,
    cancelled,
    ...ids,
    close: async () => {
      await app.close();
      await db.close();
    },
  };
}

/** The Host the composed fleet's tests post with, and the matching Origin (the same-origin check). */
export const HOST = "fleet.test";
export const ORIGIN = `http://${HOST}`;

/** A dashboard login: its session cookie and CSRF token. */
export interface Login {
  cookie: string;
  csrf: string;
}

/** Logs `user` in through the form and reads the session's CSRF token from a page. */
export async function loginAs(
  app: FastifyInstance,
  user: { username: string; password: string },
): Promise<Login> {
  const r = await app.inject({
    method: "POST",
    url: "/login",
    headers: { host: HOST, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
    payload: new URLSearchParams(user).toString(),
  });
  expect(r.statusCode).toBe(303);
  const raw = r.headers["set-cookie"];
  const line = Array.isArray(raw) ? (raw[0] ?? "") : (raw ?? "");
  const cookie = `${SESSION_COOKIE}=${/vendd_session=([^;]+)/.exec(line)?.[1] ?? ""}`;
  const page = await app.inject({ url: "/reconcile", headers: { host: HOST, cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
  expect(csrf.length).toBeGreaterThan(20);
  return { cookie, csrf };
}
