/**
 * Issue 31 acceptance, with the real daemon (`vendd run` against the emulator and the VMC simulator on a
 * PTY): the payment service and the fleet are unreachable from the start (nothing listens on their ports),
 * the unit is SIGKILLed and started again twice, and members vend within their day and month limits and are
 * refused beyond them; each member's selection comes right after the tap (the tap/selection race); a
 * selection without a badge is denied and nothing is sent to the service. Then the service comes back: paid
 * vends work; the fleet comes back: its sales hold each journal session once and its usage per member
 * equals the journal's.
 *
 * Needs socat (the VMC simulator's PTY), like the crash tests.
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import Fastify, { type FastifyInstance } from "fastify";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customerPays, waitUntil } from "../../src/chaos/actors.js";
import { DaemonProcess } from "../../src/chaos/daemonProcess.js";
import { startWorld, type World } from "../../src/chaos/rig.js";
import { type UnitFiles, writeUnitFiles } from "../../src/chaos/unitFiles.js";
import { systemClock } from "../../src/core/clock.js";
import { fingerprint, generateUnitKey, loadUnitKey } from "../../src/core/fleetAuth.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { openFleetDb } from "../../src/fleet/database.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { createPlan } from "../../src/fleet/plans/index.js";
import { usageReport } from "../../src/fleet/plans/overage.js";
import { registerUnitApi } from "../../src/fleet/units/routes.js";
import { badgeHash, signEntitlements } from "../../src/update/entitlements.js";
import { makeKey, type TestKey } from "../../src/update/update.test-support.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";
import { closedPort } from "../support/inprocess.js";

const SALT = "c2FsdHNhbHRzYWx0c2FsdA";
const ZONE = "Europe/Oslo";
/** Member A: 2 a day; member B: 10 a day but 3 a month. */
const A = { uid: "04a1b2c3d4e5f6", id: "m-a" };
const B = { uid: "04b1b2c3d4e5f7", id: "m-b" };

/** A loopback port that forwards to `target` while up, and refuses connections (nothing listens) while down. */
class Switch {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  constructor(
    readonly port: number,
    private readonly target: () => number,
  ) {}
  async up(): Promise<void> {
    const server = createServer((inbound) => {
      const out = createConnection({ host: "127.0.0.1", port: this.target() });
      for (const s of [inbound, out]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => s.destroy());
      }
      inbound.pipe(out).pipe(inbound);
    });
    await new Promise<void>((r) => server.listen(this.port, "127.0.0.1", r));
    this.server = server;
  }
  async down(): Promise<void> {
    const s = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (s !== null) await new Promise<void>((r) => s.close(() => r()));
  }
}

const withPort = (url: string, port: number) => {
  const u = new URL(url);
  u.port = String(port);
  return u.toString().replace(/\/$/, url.endsWith("/") ? "/" : "");
};

describe.skipIf(!HAVE_SOCAT)(
  "members vend through an outage of the service and the fleet, across restarts",
  () => {
    let world: World;
    let files: UnitFiles;
    let daemon: DaemonProcess | null = null;
    let payment: Switch;
    let fleetSwitch: Switch;
    let fleetApp: FastifyInstance;
    let fdb: FleetDb;
    let ctx: FleetContext;
    let key: TestKey;
    let feed: string;

    beforeAll(async () => {
      requireBuiltCli();
      world = await startWorld();
      key = await makeKey();
      const info = world.emu.info;
      const emuPort = Number(new URL(info.v10.baseUrl).port);
      payment = new Switch(await closedPort(), () => emuPort);
      const unitInfo = {
        ...info,
        v10: {
          ...info.v10,
          baseUrl: withPort(info.v10.baseUrl, payment.port),
          tokenUrl: withPort(info.v10.tokenUrl, payment.port),
        },
      };
      files = writeUnitFiles(unitInfo, { driver: "v10", flow: "selection" }, world.sim.devicePath);

      // The fleet: the unit API on its own port, reached through a switch that is down at first.
      fdb = await openFleetDb(join(files.dir, "fleet.db"));
      ctx = {
        db: fdb.db,
        dialect: fdb.dialect,
        clock: systemClock,
        logger: pino({ level: "silent" }),
        timeZone: ZONE,
      };
      fleetApp = Fastify({ forceCloseConnections: true });
      await registerUnitApi(fleetApp, ctx);
      await fleetApp.listen({ port: 0, host: "127.0.0.1" });
      const fleetPort = (fleetApp.server.address() as AddressInfo).port;
      fleetSwitch = new Switch(await closedPort(), () => fleetPort);
      const unitKey = generateUnitKey();
      const keyFile = join(files.dir, "fleet.key");
      writeFileSync(keyFile, unitKey.privatePem, { mode: 0o600 });
      const pub = loadUnitKey(unitKey.privatePem).publicKey;
      const now = Date.now();
      await ctx.db
        .insertInto("units")
        .values({
          id: "chaos-1",
          public_key: pub,
          fingerprint: fingerprint(pub),
          label: "outage unit",
          status: "approved",
          enrolled_at: now,
          decided_by: "manager",
          decided_at: now,
        })
        .execute();
      const plan = (dayItems: number, monthItems: number) =>
        createPlan(ctx, {
          name: `plan ${dayItems}/${monthItems}`,
          price: 9900,
          currency: "DKK",
          dayItems,
          dayAmount: null,
          monthItems,
          monthAmount: null,
          units: ["*"],
        });
      const planA = await plan(2, 40);
      const planB = await plan(10, 3);
      for (const [m, planId] of [
        [A, planA],
        [B, planB],
      ] as const) {
        await ctx.db
          .insertInto("members")
          .values({
            id: m.id,
            plan_id: planId,
            status: "active",
            name: m.id,
            phone: null,
            badge_hash: badgeHash(m.uid.toUpperCase(), SALT),
            company_id: "co-1",
            agreement_id: null,
            agreement_status: null,
            landing_url: null,
            grace_until: null,
            reason: "",
            created_at: now,
            activated_at: now,
            updated_at: now,
          })
          .execute();
      }

      // The signed list already on the unit's disk (the fleet is down: it cannot send one).
      const listFile = join(files.dir, "entitlements.json");
      const member = (m: typeof A, planId: string, perDay: number, perMonth: number) => ({
        badge: badgeHash(m.uid.toUpperCase(), SALT),
        memberId: m.id,
        planId,
        validFrom: now - 86_400_000,
        validTo: now + 30 * 86_400_000,
        perDay: { items: perDay, amount: null },
        perMonth: { items: perMonth, amount: null },
        units: ["chaos-1"],
      });
      const list = {
        version: 1 as const,
        serial: 1,
        issuedAt: now - 60_000,
        validUntil: now + 7 * 86_400_000,
        badgeSalt: SALT,
        timeZone: ZONE,
        members: [member(A, planA, 2, 40), member(B, planB, 10, 3)],
      };
      writeFileSync(listFile, JSON.stringify(signEntitlements(list, key.sk)));
      feed = join(files.dir, "nfc.sock");
      const config = JSON.parse(readFileSync(files.configPath, "utf8")) as Record<string, unknown>;
      config.nfc = { enabled: true, kind: "sim", simFeed: feed };
      config.entitlements = { publicKey: key.line, listFile, overAllowance: "pay" };
      config.fleet = { url: `http://127.0.0.1:${fleetSwitch.port}`, keyFile, heartbeatSeconds: 30 };
      writeFileSync(files.configPath, JSON.stringify(config, null, 2), { mode: 0o600 });
    }, 60_000);

    afterAll(async () => {
      if (daemon !== null && daemon.exited === null) await daemon.crash();
      await payment?.down();
      await fleetSwitch?.down();
      await fleetApp?.close();
      await fdb?.close();
      await world?.close();
      files?.remove();
    });

    const sim = () => world.sim;

    async function launch(): Promise<void> {
      const d = DaemonProcess.spawn({ configPath: files.configPath, secretsPath: files.secretsPath });
      daemon = d;
      const up = await waitUntil(() => d.log.includes('"msg":"in service for members only'), 30_000);
      expect(up, `not in service for members:\n${d.tail()}`).toBe(true);
      expect(await waitUntil(() => sim().reader === "enabled", 10_000)).toBe(true);
    }

    async function crash(): Promise<void> {
      const exit = await daemon?.crash();
      expect(exit?.signal).toBe("SIGKILL");
    }

    /** Presents a badge at the reader (through the daemon's sim feed) and takes it away. */
    async function tap(uid: string): Promise<void> {
      // The reader starts just after the VMC is enabled (a killed daemon's socket file may still be there).
      let socket: Socket | null = null;
      for (const t0 = Date.now(); socket === null; ) {
        const s = createConnection(feed);
        const ok = await new Promise<boolean>((resolve) => {
          s.once("connect", () => resolve(true));
          s.once("error", () => resolve(false));
        });
        if (ok) socket = s;
        else if (Date.now() - t0 > 10_000) throw new Error(`no NFC sim feed:\n${daemon?.tail() ?? ""}`);
        else await new Promise((r) => setTimeout(r, 50));
      }
      const connected = socket;
      connected.end(`present ${uid}\nremove\n`);
      await new Promise((r) => connected.once("close", r));
    }

    /** One selection at the VMC: approved (then dispensed) or denied. `pay`: the customer pays in the app. */
    async function select(item: number, price: number, pay = false): Promise<"approved" | "denied"> {
      const s = sim();
      expect(await waitUntil(() => s.reader === "enabled", 10_000)).toBe(true);
      const request = s.requests + 1;
      s.vend(item, price);
      const paying = pay
        ? customerPays(
            {
              emu: world.emu,
              sim: s,
              beaconId: files.beaconId,
              phone: "+4520031801",
              payWithinMs: 20_000,
              decideWithinMs: 20_000,
              random: () => 0.5,
            },
            () => s.reader !== "vend",
          )
        : Promise.resolve(false);
      const answered = await waitUntil(() => s.reader !== "vend", 20_000);
      await paying;
      expect(answered, daemon?.tail()).toBe(true);
      if (!s.approvals.some((a) => a.request === request)) return "denied";
      s.dispenseSuccess();
      expect(await waitUntil(() => s.reader === "enabled", 10_000)).toBe(true);
      return "approved";
    }

    /** A member's tap and, at once, the selection (the daemon holds it until the tap is decided). */
    async function memberSelects(uid: string, item: number): Promise<"approved" | "denied"> {
      await tap(uid);
      return select(item, 150);
    }

    function journal<T>(fn: (db: Database.Database) => T): T {
      const db = new Database(files.journalPath, { readonly: true });
      try {
        return fn(db);
      } finally {
        db.close();
      }
    }

    it("serves members within their limits through two SIGKILLs, then pays again and reports each vend once", async () => {
      const ledgerMark = world.emu.ledger().at(-1)?.seq ?? 0;
      await launch();
      expect(await memberSelects(A.uid, 1)).toBe("approved");
      expect(await memberSelects(A.uid, 2)).toBe("approved");
      await crash();

      await launch();
      expect(await memberSelects(A.uid, 3)).toBe("denied"); // beyond A's day (2)
      expect(await select(4, 250)).toBe("denied"); // no badge: card payments unavailable
      expect(await memberSelects(B.uid, 5)).toBe("approved");
      expect(await memberSelects(B.uid, 6)).toBe("approved");
      await crash();

      await launch();
      expect(await memberSelects(B.uid, 7)).toBe("approved");
      expect(await memberSelects(B.uid, 8)).toBe("denied"); // beyond B's month (3)
      expect(await select(9, 300)).toBe("denied");

      // Nothing was sent to the service: no payment intent journaled, nothing in its ledger.
      expect(journal((db) => db.prepare("SELECT count(*) AS n FROM intents").get())).toEqual({ n: 0 });
      expect(world.emu.ledger().filter((e) => e.seq > ledgerMark)).toEqual([]);

      // The service comes back: paid vends work.
      await payment.up();
      const back = await waitUntil(() => daemon?.log.includes('"msg":"unit in service"') === true, 90_000);
      expect(back, daemon?.tail()).toBe(true);
      expect(await select(10, 400, true)).toBe("approved");
      expect(
        await waitUntil(
          () => world.emu.ledger().some((e) => e.seq > ledgerMark && e.kind === "captured"),
          20_000,
        ),
      ).toBe(true);

      // The fleet comes back: its sales hold each closed session once, and its usage equals the journal's.
      await fleetSwitch.up();
      const closed = () =>
        journal((db) =>
          db.prepare("SELECT id, driver FROM sessions WHERE closed_at IS NOT NULL ORDER BY id").all(),
        ) as {
          id: string;
          driver: string;
        }[];
      const delivered = async () =>
        (
          await ctx.db
            .selectFrom("sales")
            .select(["session_id", "driver", "member_id"])
            .where("unit_id", "=", "chaos-1")
            .execute()
        ).length;
      const t0 = Date.now();
      while ((await delivered()) < closed().length && Date.now() - t0 < 120_000)
        await new Promise((r) => setTimeout(r, 200));
      const sales = await ctx.db
        .selectFrom("sales")
        .select(["session_id", "driver", "member_id"])
        .where("unit_id", "=", "chaos-1")
        .orderBy("session_id")
        .execute();
      expect(sales.map((s) => s.session_id)).toEqual(closed().map((s) => s.id));
      expect(new Set(sales.map((s) => s.session_id)).size).toBe(sales.length);
      const planned = journal(
        (db) =>
          db
            .prepare(
              "SELECT p.member_id AS memberId, count(*) AS n FROM plan_sessions p JOIN sessions s ON s.id = p.session_id WHERE s.result = 'captured' GROUP BY p.member_id ORDER BY p.member_id",
            )
            .all() as { memberId: string; n: number }[],
      );
      expect(planned).toEqual([
        { memberId: A.id, n: 2 },
        { memberId: B.id, n: 3 },
      ]);
      const usage = await usageReport(ctx);
      expect(
        usage
          .map((u) => ({ memberId: u.memberId, n: u.items + u.overItems }))
          .sort((x, y) => x.memberId.localeCompare(y.memberId)),
      ).toEqual(planned);
    }, 300_000);
  },
);
