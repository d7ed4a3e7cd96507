/**
 * Issue 42, reconciliation checked one night at a time: what each night's run of the built CLI (`vendd
 * reconcile` on the unit's journal, `vendd fleet reconcile` on the fleet's sales) reports, with the service's
 * side in the emulator and read back through its reporting interface over HTTP (a loopback proxy changes a
 * transfer where the emulator itself always transfers exactly).
 *
 * 1. A second capture of an earlier day's sale, made on a later day: the later night reports it (the
 *    customer paid twice), though that night's lines alone are within what the journal captured.
 * 2. A transfer whose contents and the report's lines disagree for the same transaction (the report's fee
 *    0.10 above what the transfer deducted, either side changed): reported once, on that sale's line,
 *    with and without the agreed fee schedule in the settings.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentRefreshToken, emulatorEndpoints, insertSales } from "../../scripts/reconcileDay.js";
import { ManualClock } from "../../src/core/clock.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { dayOf } from "../../src/fleet/context.js";
import { openFleetDb } from "../../src/fleet/database.js";
import type { SalesTable } from "../../src/fleet/db/schema.js";
import { dayStart, nextDay } from "../../src/fleet/reconcile/run.js";
import { exportSessions } from "../../src/journal/export.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { ReportingClient } from "../../src/payment/reporting/client.js";
import { vendd } from "../support/cli.js";
import { journalSale } from "../support/journalSales.js";

const ZONE = "UTC";
const GOOD = new Set(["matched", "refundMatched", "fee"]);
const HOUR = 3600_000;

interface Line {
  class: string;
  unit_id: string | null;
  session_id: string | null;
  expected: number | null;
  reported: number | null;
  reason: string;
}

describe.sequential("reconciliation, one night at a time (issue 42)", () => {
  let emu: Emulator;
  let dir: string;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  const scope = () => ({
    interface: "v10" as const,
    merchant: emu.info.v10.merchantVat,
    point: emu.info.v10.storeId,
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-recon-nights-"));
    emu = await startEmulator({ timeSource: () => 0, startTime: Date.parse("2026-05-01T00:00:00Z") });
    proxy = await startProxy(emu.info.reporting.baseUrl);
  });
  afterAll(async () => {
    await proxy?.close();
    await emu?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const to = (at: number) => {
    if (at > emu.clock.now()) emu.clock.advance(at - emu.clock.now());
  };

  /** The unit's journal, sales written through its API at the given instants, and the fleet's rows of it. */
  async function unitWithSales(unit: string, sales: { id: string; at: number; price: number }[]) {
    const journal = join(dir, `${unit}.db`);
    const clock = new ManualClock(emu.clock.now());
    const j = openSqliteJournal({ path: journal, unitId: unit, clock, currency: "DKK" });
    const orders = new Map<string, string>();
    try {
      for (const s of sales) {
        to(s.at);
        if (s.at > clock.now()) clock.advance(s.at - clock.now());
        const orderId = journalSale(j, {
          id: s.id,
          item: 1,
          price: s.price,
          driver: "v10",
          paymentId: "order",
        });
        orders.set(s.id, orderId);
        emu.recordLedger({
          ...scope(),
          id: `${orderId}-p`,
          paymentId: null,
          orderId,
          kind: "captured",
          amount: s.price,
        });
      }
    } finally {
      j.close();
    }
    const fleetDb = join(dir, `${unit}-fleet.db`);
    const fleet = await openFleetDb(fleetDb);
    try {
      const rows: SalesTable[] = exportSessions(journal, {}).sessions.map((s, i) => ({
        unit_id: unit,
        seq: i + 1,
        session_id: s.sessionId,
        order_id: s.orderId,
        payment_id: s.paymentId,
        driver: s.driver,
        flow: s.flow,
        item: s.item,
        price: s.price,
        result: s.result,
        approved: s.approved,
        captured: s.captured,
        refunded: s.refunded,
        currency: s.currency,
        vends_ok: 1,
        vends_failed: 0,
        opened_at: s.openedAt,
        closed_at: s.closedAt,
        day: dayOf(s.closedAt, ZONE),
        member_id: null,
        plan_id: null,
      }));
      await insertSales(fleet.db, rows);
    } finally {
      await fleet.close();
    }
    return { journal, fleetDb, orders };
  }

  /** Reporting settings through the proxy; every payment point of the merchant belongs to `unit`. */
  async function settings(unit: string, fees: boolean): Promise<string> {
    const secrets = join(dir, `${unit}-secrets.yaml`);
    const { baseUrl, tokenUrl } = emulatorEndpoints(emu);
    // The merchant's payment points, read as the merchant (the refresh token rotates on use).
    let refreshToken = await consentRefreshToken(emu);
    const client = new ReportingClient({
      baseUrl,
      tokenUrl,
      clientId: emu.info.reporting.clientId,
      clientSecret: emu.info.reporting.clientSecret,
      refreshToken,
      onRefreshToken: (t) => {
        refreshToken = t;
      },
    });
    const points = await client.paymentPoints().finally(() => client.close());
    writeFileSync(
      secrets,
      `clientSecret: ${emu.info.reporting.clientSecret}\nrefreshToken: ${refreshToken}\n`,
      {
        mode: 0o600,
      },
    );
    const file = join(dir, `${unit}-${fees ? "fees" : "nofees"}-reporting.yaml`);
    writeFileSync(
      file,
      [
        `baseUrl: ${proxy.origin}${new URL(baseUrl).pathname}`,
        `tokenUrl: ${tokenUrl}`,
        `clientId: ${emu.info.reporting.clientId}`,
        `secretsFile: ${secrets}`,
        `timeZone: ${ZONE}`,
        ...(fees ? ["transactionFee: { basisPoints: 75 }"] : []),
        "points:",
        ...points.map((p) => `  "${p.paymentPointId}": ${unit}`),
        "",
      ].join("\n"),
    );
    return file;
  }

  /** One night's run of both commands as processes; the lines that do not reconcile, per command. */
  async function night(day: string, u: { journal: string; fleetDb: string }, reporting: string) {
    const range = ["--from", day, "--to", day, "--reporting", reporting, "--format", "json"];
    const out: { code: number | null; bad: Line[] }[] = [];
    for (const args of [
      ["reconcile", "--journal", u.journal, ...range],
      ["fleet", "reconcile", "--db", u.fleetDb, ...range],
    ]) {
      const r = await vendd(args, { env: { TZ: "UTC" } });
      expect(r.stderr, args.join(" ")).toBe("");
      const body = JSON.parse(r.stdout) as { clean: boolean; lines: Line[] };
      const bad = body.lines.filter(
        (l) => !GOOD.has(l.class) && !(l.class === "transfer" && l.expected === l.reported),
      );
      expect(body.clean, args.join(" ")).toBe(bad.length === 0);
      out.push({ code: r.code, bad });
    }
    return out;
  }

  it("a second capture of an earlier day's sale is reported on the night it happens", async () => {
    const d1 = "2026-05-04";
    const d2 = nextDay(d1);
    const price = 2500;
    const u = await unitWithSales("nt1", [
      { id: "s0", at: dayStart(d1, ZONE) + 9 * HOUR, price },
      { id: "s1", at: dayStart(d1, ZONE) + 11 * HOUR, price: 1200 },
    ]);
    const reporting = await settings("nt1", true);
    // Night 1 (the next morning, after the service's transfer): the day reconciles.
    to(dayStart(d2, ZONE) + 4 * HOUR);
    for (const r of await night(d1, u, reporting)) {
      expect(r.bad).toEqual([]);
      expect(r.code).toBe(0);
    }
    // Day 2: the service captures sale s0 of day 1 a second time; the unit sells nothing.
    to(dayStart(d2, ZONE) + 10 * HOUR);
    const orderId = u.orders.get("s0") ?? "";
    emu.recordLedger({
      ...scope(),
      id: `${orderId}-p2`,
      paymentId: null,
      orderId,
      kind: "captured",
      amount: price,
    });
    // Night 2: that night says the customer paid twice, on sale s0's line, once.
    to(dayStart(nextDay(d2), ZONE) + 4 * HOUR);
    for (const r of await night(d2, u, reporting)) {
      expect(r.code).toBe(1);
      expect(r.bad.map((l) => [l.class, l.unit_id, l.session_id, l.expected, l.reported])).toEqual([
        ["amountMismatch", "nt1", "s0", price, 2 * price],
      ]);
      expect(r.bad[0]?.reason).toMatch(/paid twice|again/);
    }
  }, 120_000);

  for (const side of ["transfer", "report"] as const)
    for (const fees of [true, false])
      it(`a fee the ${side === "transfer" ? "transfer deducted 0.10 below" : "report lists 0.10 above"} the other is reported once, on the sale's line (fee schedule ${fees ? "configured" : "not configured"})`, async () => {
        const unit = `nf-${side[0]}${fees ? "f" : "n"}`;
        const d = nextDay(dayOf(emu.clock.now(), ZONE));
        const u = await unitWithSales(unit, [
          { id: "s0", at: dayStart(d, ZONE) + 9 * HOUR, price: 1200 },
          { id: "s1", at: dayStart(d, ZONE) + 12 * HOUR, price: 4000 },
        ]);
        const orderId = u.orders.get("s1") ?? "";
        // 0.75 % of 40.00 = 0.30 (the emulator's schedule, which the settings also agree).
        if (side === "transfer") {
          proxy.contentFee.add(orderId);
          proxy.transferPlus.add(nextDay(d));
        } else proxy.reportFee.add(orderId);
        const reporting = await settings(unit, fees);
        to(dayStart(nextDay(d), ZONE) + 4 * HOUR);
        for (const r of await night(d, u, reporting)) {
          expect(r.code).toBe(1);
          expect(r.bad.map((l) => [l.class, l.unit_id, l.session_id])).toEqual([["feeMismatch", unit, "s1"]]);
          const line = r.bad[0] as Line;
          // What the transfer deducted against what the report's line says.
          expect([line.expected, line.reported]).toEqual(side === "transfer" ? [20, 30] : [30, 40]);
          expect(line.reason).toMatch(/transfer/);
        }
      }, 120_000);
});

/**
 * A loopback proxy in front of the emulator's reporting interface: `contentFee` order ids' TransactionFee in
 * transfer contents 0.10 smaller (deducted less), `transferPlus` transfer dates' totals 0.10 larger (the
 * transfer equals its changed contents), `reportFee` order ids' TransactionFee in the transaction list 0.10
 * larger.
 */
async function startProxy(target: string) {
  const origin = new URL(target).origin;
  const contentFee = new Set<string>();
  const transferPlus = new Set<string>();
  const reportFee = new Set<string>();
  type Tx = {
    type: string;
    amount: number;
    externalTransactionId?: string | null;
    merchantReference?: string | null;
  };
  const server = createServer((req, res) => {
    void (async () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === "string" && k !== "host" && k !== "connection") headers[k] = v;
      const url = req.url ?? "/";
      const r = await request(`${origin}${url}`, { method: "GET", headers });
      let body = await r.body.text();
      const json = (r.headers["content-type"] ?? "").toString().includes("json");
      if (r.statusCode === 200 && json && url.includes("/transfer-references")) {
        const doc = JSON.parse(body) as {
          transferReferences?: { transferReferenceDate: string; totalTransferredAmount: number }[];
        };
        for (const t of doc.transferReferences ?? [])
          if (transferPlus.has(t.transferReferenceDate))
            t.totalTransferredAmount = Math.round(t.totalTransferredAmount * 100 + 10) / 100;
        body = JSON.stringify(doc);
      } else if (
        r.statusCode === 200 &&
        json &&
        (url.includes("/transfers/") || url.includes("/transactions"))
      ) {
        const doc = JSON.parse(body) as { transactions?: Tx[] };
        const contents = url.includes("/transfers/");
        for (const t of doc.transactions ?? []) {
          const order = t.merchantReference ?? t.externalTransactionId ?? "";
          if (t.type !== "TransactionFee") continue;
          if (contents && contentFee.has(order)) t.amount = Math.round(t.amount * 100 + 10) / 100;
          if (!contents && reportFee.has(order)) t.amount = Math.round(t.amount * 100 - 10) / 100;
        }
        body = JSON.stringify(doc);
      }
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(r.headers))
        if (typeof v === "string" && !["content-length", "transfer-encoding", "connection"].includes(k))
          out[k] = v;
      res.writeHead(r.statusCode, out).end(body);
    })().catch(() => res.writeHead(502).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    contentFee,
    transferPlus,
    reportFee,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
