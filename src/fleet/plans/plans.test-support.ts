/**
 * The fleet plans scenario's fixture (plans.test.ts): the emulator (seed 000) and the fleet (Fastify over
 * HTTPS with a self-signed certificate the emulator trusts) started once for the scenario, the shared
 * constants, and helpers that move both clocks, read a member, run the plan cycle, drive the emulator's
 * simulated user and verify the latest entitlement list. Needs `openssl` (test certificates).
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import pino from "pino";
import { request } from "undici";
import { afterAll, beforeAll } from "vitest";
import { until as waitUntil } from "../../../test/support/wait.js";
import { ManualClock } from "../../core/clock.js";
import { type Emulator, startEmulator } from "../../emulator/index.js";
import { START } from "../../emulator/subscriptions/testkit.test-support.js";
import { selfSignedCertificate } from "../../emulator/testing/httpsReceiver.js";
import { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import { verifyEntitlements } from "../../update/entitlements.js";
import { decryptSecretKey, generateKeys, KDF_INTERACTIVE, parsePublicKey } from "../../update/minisign.js";
import type { FleetContext } from "../context.js";
import { openFleetDb } from "../database.js";
import type { FleetDb } from "../db/open.js";
import {
  configureProvider,
  createPlan,
  type PlansSettings,
  plansPublisher,
  registerPlanAdmin,
  registerPlans,
  runPlanCycle,
} from "./index.js";

export const UID = "04:A2:3B:4C:5D:6E:7F";
export const UID_HEX = "04A23B4C5D6E7F";
export const SALT = "c2FsdHNhbHRzYWx0c2FsdA";
export const API_KEY = "fleet-callback-key.0123456789abcdef";
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** Bounded real-time wait for network I/O (callbacks reaching the fleet). */
export const until = <T>(what: string, check: () => Promise<T | undefined>, ms?: number): Promise<T> =>
  waitUntil(what, check, ms ?? 8000);

/** The scenario's state: set up in beforeAll; memberId and acceptedBody are set by the sign-up step. */
export interface PlansFixture {
  dir: string;
  emu: Emulator;
  fleet: FastifyInstance;
  fdb: FleetDb;
  ctx: FleetContext;
  client: SubscriptionsClient;
  s: PlansSettings;
  pk: ReturnType<typeof parsePublicKey>;
  planId: string;
  clock: ManualClock;
  logs: string[];
  memberId: string;
  acceptedBody: string;
  /** Moves both clocks; the emulator runs its due work (executions, batches, retries) on the way. */
  advance(ms: number): void;
  member(id: string): ReturnType<typeof memberOf>;
  cycle(): ReturnType<typeof runPlanCycle>;
  sim(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  latestList(): Promise<ReturnType<typeof verifyEntitlements>>;
}

function memberOf(ctx: FleetContext, id: string) {
  return ctx.db.selectFrom("members").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

/**
 * Registers the scenario's beforeAll/afterAll (inside its describe) and returns its state, filled in by
 * beforeAll: read the fields inside the tests, not when registering them.
 */
export function usePlansFixture(): PlansFixture {
  const f = {
    clock: new ManualClock(START),
    logs: [],
    memberId: "",
    acceptedBody: "",
    advance(ms: number): void {
      f.clock.advance(ms);
      f.emu.clock.advance(ms);
    },
    member: (id: string) => memberOf(f.ctx, id),
    cycle: () => runPlanCycle(f.ctx, f.client, f.clock.now(), f.s, plansPublisher(f.ctx, f.s)),
    sim: (path: string, body: unknown) =>
      request(`${f.emu.info.subscriptions.baseUrl}/app/subscriptions/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (r) => ({
        status: r.statusCode,
        body: (await r.body.json()) as Record<string, unknown>,
      })),
    async latestList() {
      const l = await f.ctx.db
        .selectFrom("plan_entitlements")
        .selectAll()
        .orderBy("serial", "desc")
        .limit(1)
        .executeTakeFirstOrThrow();
      return verifyEntitlements(l.document, l.signature, f.pk, f.clock.now());
    },
  } as Partial<PlansFixture> as PlansFixture;
  const { clock, logs } = f;

  beforeAll(async () => {
    f.dir = mkdtempSync(join(tmpdir(), "vendd-plans-"));
    const cert = selfSignedCertificate();
    f.emu = await startEmulator({
      startTime: START,
      timeSource: () => 0,
      subscriptions: { callbackCa: cert.cert, callbackAllowLoopbackPorts: true },
    });
    f.fdb = await openFleetDb(join(f.dir, "fleet.db"));
    const logger = pino({ level: "debug" }, { write: (l: string) => void logs.push(l) });
    f.ctx = { db: f.fdb.db, dialect: f.fdb.dialect, clock, logger, timeZone: "UTC" };
    const info = f.emu.info.subscriptions;
    f.client = new SubscriptionsClient({
      baseUrl: info.baseUrl,
      tokenUrl: info.tokenUrl,
      clientId: info.clientId,
      clientSecret: info.clientSecret,
      providerId: info.providerId,
      clock,
      random: () => 0.5,
    });
    const keys = await generateKeys("plans test", KDF_INTERACTIVE);
    f.pk = parsePublicKey(keys.publicKeyText);
    f.fleet = Fastify({ https: { key: cert.key, cert: cert.cert } });
    f.s = {
      publicUrl: "",
      userRedirectUrl: "https://fleet.example/plans/thanks",
      callbackApiKey: API_KEY,
      csrfSecret: Buffer.from("csrf secret of the test fleet 0123456789"),
      badgeSalt: SALT,
      entitlementKey: await decryptSecretKey(keys.secretKeyText, "plans test"),
      countryCode: "DK",
      graceMs: DAY,
      serviceGraceDays: 1,
      autoReserve: true,
    };
    await registerPlans(f.fleet, f.ctx, { client: f.client, settings: f.s });
    await registerPlanAdmin(
      f.fleet,
      f.ctx,
      { client: f.client, settings: f.s },
      async (req, reply) => {
        if (req.headers["x-test-manager"] !== "yes") await reply.code(403).send("no");
      },
      () => "manager-1",
    );
    await f.fleet.listen({ port: 0, host: "127.0.0.1" });
    f.s.publicUrl = `https://127.0.0.1:${(f.fleet.server.address() as AddressInfo).port}`;
    await configureProvider(f.client, f.s);
    f.planId = await createPlan(f.ctx, {
      name: "Coffee 20",
      price: 9900,
      currency: "DKK",
      dayItems: 2,
      dayAmount: null,
      monthItems: 20,
      monthAmount: null,
      units: ["*"],
    });
  });

  afterAll(async () => {
    await f.fleet?.close();
    await f.emu?.close();
    await f.fdb?.close();
    if (f.dir) rmSync(f.dir, { recursive: true, force: true });
  });

  return f;
}
