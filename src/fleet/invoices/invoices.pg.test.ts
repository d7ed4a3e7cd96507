/**
 * Invoice numbering on PostgreSQL (the fleet's scale-out database), where two runs really are concurrent
 * (a pool of connections): one invoice per company and month, numbers sequential per issuer without gaps,
 * each sent once. Needs PostgreSQL (package postgresql; .ci/run installs it): the test runs its own server in a
 * temporary directory on loopback (scripts/postgresServer.ts, the project's one harness), and skips when it is not installed.
 */
import { sql } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresServer, postgresBinDir, startPostgres } from "../../../scripts/postgresServer.js";
import { ManualClock } from "../../core/clock.js";
import { seededRandom } from "../../core/random.js";
import { type Emulator, startEmulator } from "../../emulator/index.js";
import { InvoicesClient } from "../../payment/invoices/client.js";
import type { FleetContext } from "../context.js";
import { openFleetDb } from "../database.js";
import type { FleetDb } from "../db/open.js";
import { buildInvoice } from "./build.js";
import { runInvoiceCycle } from "./cycle.js";
import { assignUnit, createCompany, insertDraft, invoicesDb, setProduct } from "./store/invoices.js";

const START = Date.parse("2026-04-02T10:00:00Z");
const USER = "+4520031801";

describe.skipIf(postgresBinDir() === null)("invoice numbers on PostgreSQL under concurrent runs", () => {
  let pg: PostgresServer;
  let fleet: FleetDb;
  let emu: Emulator;
  let client: InvoicesClient;
  let ctx: FleetContext;
  let issuer: string;

  beforeAll(async () => {
    pg = await startPostgres();
    fleet = await openFleetDb(pg.url, { poolSize: 8 });
    // sales.member_id/plan_id: the plans branch's migration (0002); stand-in until it is merged.
    await sql`alter table sales add column if not exists member_id text`.execute(fleet.db);
    await sql`alter table sales add column if not exists plan_id text`.execute(fleet.db);
    ctx = {
      db: fleet.db,
      dialect: fleet.dialect,
      clock: new ManualClock(START),
      logger: pino({ level: "silent" }),
      timeZone: "Europe/Copenhagen",
    };
    emu = await startEmulator({ startTime: START, timeSource: () => 0 });
    issuer = emu.info.invoices.issuers[0]?.id ?? "";
    client = new InvoicesClient({
      baseUrl: emu.info.invoices.baseUrl,
      accessToken: () => emu.info.invoices.accessToken,
      clock: ctx.clock,
      random: seededRandom(3),
    });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await emu?.close();
    await fleet?.close();
    await pg?.stop();
  });

  it("20 drafts for 10 companies raced in pairs: 10 invoices numbered 1..10, the losers' numbers rolled back", async () => {
    const built = buildInvoice([
      { articleNumber: "1", description: "Coffee", quantity: 2, unitPrice: 1500, vatBp: 2500, unit: "pcs" },
    ]);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++)
      ids.push(
        await createCompany(ctx, {
          name: `Race ${i}`,
          orgNumber: `DK200000${i}`,
          delivery: "link",
          issuerId: "5d0c2f4e-0000-4000-8000-00000000abcd",
        }),
      );
    const draft = (companyId: string) =>
      insertDraft(ctx, {
        companyId,
        month: "2026-02",
        issuerId: "5d0c2f4e-0000-4000-8000-00000000abcd",
        delivery: "link",
        currency: "DKK",
        issueDate: "2026-03-01",
        dueDate: "2026-03-15",
        built,
      });
    const results = await Promise.all(ids.flatMap((id) => [draft(id), draft(id)]));
    expect(results.filter((r) => r !== null)).toHaveLength(10);
    const rows = await invoicesDb(ctx)
      .selectFrom("invoices")
      .select(["number", "company_id"])
      .where("month", "=", "2026-02")
      .orderBy("number")
      .execute();
    expect(rows.map((r) => Number(r.number))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(new Set(rows.map((r) => r.company_id)).size).toBe(10);
    const counter = await invoicesDb(ctx)
      .selectFrom("invoice_numbers")
      .select("last_number")
      .where("issuer_id", "=", "5d0c2f4e-0000-4000-8000-00000000abcd")
      .executeTakeFirstOrThrow();
    expect(Number(counter.last_number)).toBe(10);
    // These drafts name an issuer the emulator does not know: out of the way of the next test's runs.
    const drafts =
      rows.length > 0
        ? await invoicesDb(ctx).selectFrom("invoices").select("id").where("month", "=", "2026-02").execute()
        : [];
    await invoicesDb(ctx)
      .deleteFrom("invoice_articles")
      .where(
        "invoice_id",
        "in",
        drafts.map((d) => d.id),
      )
      .execute();
    await invoicesDb(ctx).deleteFrom("invoices").where("month", "=", "2026-02").execute();
  });

  it("two monthly runs at once against the emulator: each company's invoice built and sent once, numbers without gaps", async () => {
    await setProduct(ctx, { item: 1, name: "Coffee", vatBp: 2500, price: 1500 });
    for (let i = 0; i < 6; i++) {
      await ctx.db
        .insertInto("units")
        .values({
          id: `p${i}`,
          public_key: `k${i}`,
          fingerprint: `f${i}`,
          label: `p${i}`,
          status: "approved",
          enrolled_at: START,
        })
        .execute();
      const id = await createCompany(ctx, {
        name: `Pg ${i}`,
        orgNumber: `DK300000${i}`,
        delivery: "direct",
        phone: USER,
        issuerId: issuer,
      });
      await assignUnit(ctx, id, `p${i}`);
      await invoicesDb(ctx)
        .insertInto("sales")
        .values({
          unit_id: `p${i}`,
          seq: 1,
          session_id: "s1",
          order_id: `o${i}`,
          payment_id: null,
          driver: "sim",
          flow: "selection",
          item: 1,
          price: 1500,
          result: "captured",
          approved: 0,
          captured: 0,
          refunded: 0,
          currency: "DKK",
          vends_ok: i + 1,
          vends_failed: 0,
          opened_at: START,
          closed_at: START,
          day: "2026-03-09",
          member_id: null,
          plan_id: null,
        })
        .execute();
    }
    const [a, b] = await Promise.all([
      runInvoiceCycle(ctx, client, "2026-03", START),
      runInvoiceCycle(ctx, client, "2026-03", START),
    ]);
    expect(a.created.length + b.created.length).toBe(6);
    expect(a.sent.length + b.sent.length).toBe(6);
    expect([...a.sendErrors, ...b.sendErrors]).toEqual([]);
    const rows = await invoicesDb(ctx)
      .selectFrom("invoices")
      .selectAll()
      .where("month", "=", "2026-03")
      .orderBy("number")
      .execute();
    expect(rows.map((r) => Number(r.number))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(rows.map((r) => Number(r.total))).toEqual([1500, 3000, 4500, 6000, 7500, 9000]);
    expect(rows.every((r) => r.status === "sent" && r.remote_id !== null)).toBe(true);
    for (const r of rows)
      expect(await client.details(r.remote_id ?? "")).toMatchObject({ total: Number(r.total) });
  });
});
