/**
 * Issue 30 acceptance: generated whole days against the emulator. Each case is a local day in one time
 * zone (UTC, Etc/GMT-12, Pacific/Kiritimati +14, Pacific/Pago_Pago −11, Asia/Kathmandu +5:45, and
 * Europe/Copenhagen on its DST change days 2026-03-29 and 2026-10-25), in one currency (DKK, NOK, EUR:
 * merchants of DK, NO and FI in the emulator), with one injected discrepancy or none: a sale missing from
 * the report, an unknown transaction, an amount that differs, a double capture, a refund not in the journal,
 * a later day's refund of an earlier sale the journal does not hold, a currency that differs, and a transfer
 * whose total is not its contents, and a fee above the agreed one (these two through a loopback proxy: the
 * emulator always transfers and charges exactly). The unit's sales are
 * written through the journal's API; the fleet's rows are the journal's export as the outbox sends it; the
 * service's side is the emulator: each DKK day's third sale is paid through its V10 HTTP interface
 * (initiate, the user accepts, capture), the others are recorded in its ledger as its interfaces record them;
 * all is read back through its reporting interface (lines, transfers and transfer contents over HTTP). `vendd reconcile` and `vendd fleet reconcile` (their command functions, in
 * process; one case also as real processes) must report exactly the injected difference (class, unit,
 * session, amounts) and nothing else, exit 0 on a clean day, and say the same in table, CSV and JSON.
 *
 * CI runs a seeded subset that covers every zone, currency and injection at least once (10 cases);
 * VENDD_RECON_CASES=N runs N cases (seed VENDD_RECON_SEED, default 30).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentRefreshToken, emulatorEndpoints, insertSales } from "../../scripts/reconcileDay.js";
import { fleetReconcileCommand } from "../../src/cli/fleetReconcile.js";
import { reconcileCommand } from "../../src/cli/reconcile.js";
import { ManualClock } from "../../src/core/clock.js";
import { formatAmount } from "../../src/core/money.js";
import type { Emulator } from "../../src/emulator/index.js";
import { V10Kit } from "../../src/emulator/v10/testkit.test-support.js";
import { dayOf } from "../../src/fleet/context.js";
import { openFleetDb } from "../../src/fleet/database.js";
import type { SalesTable } from "../../src/fleet/db/schema.js";
import { dayStart, nextDay } from "../../src/fleet/reconcile/run.js";
import { exportSessions } from "../../src/journal/export.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { parseCsv, ReportingClient } from "../../src/payment/reporting/client.js";
import { vendd } from "../support/cli.js";
import { journalSale } from "../support/journalSales.js";
import { type Case, type Currency, generateCases, saleTimes } from "../support/reconDays.js";

const COUNT = Number(process.env.VENDD_RECON_CASES ?? 10);
const SEED = Number(process.env.VENDD_RECON_SEED ?? 30);
const CASES = generateCases(COUNT, SEED);

interface Expected {
  class: string;
  unit_id: string;
  session_id: string | null;
  expected: number | null;
  reported: number;
  /** A transfer's line: received − contents (its amounts depend on the day's fees). */
  difference?: number;
}

interface Built {
  c: Case;
  journal: string;
  fleetDb: string;
  settings: string;
  expected: Expected[];
  /** Order id of the case's sale s1. */
  s1: string;
}

const GOOD = new Set(["matched", "refundMatched", "fee"]);

function sink(): { w: Writable; text: () => string } {
  let text = "";
  const w = new Writable({
    write(chunk, _enc, cb) {
      text += String(chunk);
      cb();
    },
  });
  return { w, text: () => text };
}

describe.sequential(`reconciliation of generated days (${CASES.length} cases, seed ${SEED})`, () => {
  let emu: Emulator;
  let kit: V10Kit;

  /** A payment through the emulator's V10 HTTP interface: initiate, the user accepts, capture. */
  async function v10Sale(orderId: string, price: number): Promise<void> {
    await kit.refreshToken();
    const { posId, beaconId } = await kit.createPos();
    kit.emu.userSimulation.checkin(beaconId, "+4520031801");
    const r = await kit.initiate(posId, price / 100, { orderId });
    const paymentId = (r.body as { paymentId: string }).paymentId;
    kit.emu.userSimulation.accept(beaconId, "+4520031801");
    emu.clock.advance(1000);
    const cap = await kit.call("POST", `/v10/payments/${paymentId}/capture`, {
      body: { amount: price / 100 },
    });
    if (cap.status !== 200) throw new Error(`V10 capture of ${orderId}: ${cap.status}`);
  }
  let dir: string;
  const built: Built[] = [];
  const secretsFor = new Set<Currency>();
  let proxy: Awaited<ReturnType<typeof startTamperingProxy>>;

  /** The payment point ids of a currency's merchant (through the reporting interface, as the merchant). */
  async function pointsOf(currency: Currency): Promise<string[]> {
    const file = join(dir, `secrets-${currency}.yaml`);
    const secrets = readFileSync(file, "utf8");
    const refreshToken = /refreshToken: (\S+)/.exec(secrets)?.[1] ?? "";
    let rotated = refreshToken;
    const client = new ReportingClient({
      ...emulatorEndpoints(emu),
      clientId: emu.info.reporting.clientId,
      clientSecret: emu.info.reporting.clientSecret,
      refreshToken,
      onRefreshToken: (t) => {
        rotated = t;
      },
    });
    try {
      return (await client.paymentPoints()).map((p) => p.paymentPointId);
    } finally {
      await client.close();
      writeFileSync(file, secrets.replace(refreshToken, rotated), { mode: 0o600 });
    }
  }

  /** The merchant of each currency: the seeded Danish one, and a Finnish and a Norwegian one. */
  const merchantOf = (currency: Currency) =>
    currency === "DKK" ? emu.info.v10.merchantVat : currency === "EUR" ? "FI12345678" : "NO912345678";
  const scopeOf = (currency: Currency) =>
    currency === "DKK"
      ? { interface: "v10" as const, merchant: merchantOf(currency), point: emu.info.v10.storeId }
      : { interface: "v10" as const, merchant: merchantOf(currency) };

  async function build(c: Case): Promise<Built> {
    const journal = join(dir, `${c.unit}.db`);
    const times = saleTimes(c);
    const events: { at: number; act: () => unknown }[] = [];
    const first = dayStart(c.day, c.zone) - 3 * 86_400_000;
    const clock = new ManualClock(Math.max(first, emu.clock.now()));
    const open = (currency: Currency) =>
      openSqliteJournal({ path: journal, unitId: c.unit, clock, currency });
    let j = open(c.currency);
    const scope = scopeOf(c.currency);
    const other: Currency = c.currency === "DKK" ? "EUR" : "DKK";
    const expected: Expected[] = [];
    const exp = (e: Omit<Expected, "unit_id">) => expected.push({ ...e, unit_id: c.unit });
    const sale = (id: string, at: number, price: number, ledger: (orderId: string) => unknown) =>
      events.push({
        at,
        act: async () => {
          const sell = () => journalSale(j, { id, item: 1, price, driver: "v10", paymentId: "order" });
          let orderId: string;
          if (id === "s1" && c.injected === "currencyMismatch") {
            // The unit sold this one in another currency (its config said so) than its merchant's report.
            j.close();
            j = open(other);
            orderId = sell();
            j.close();
            j = open(c.currency);
          } else orderId = sell();
          await ledger(orderId);
          orders.set(id, orderId);
        },
      });
    const orders = new Map<string, string>();
    const capture = (s: typeof scope, orderId: string, amount: number, suffix = "p") =>
      emu.recordLedger({
        ...s,
        id: `${orderId}-${suffix}`,
        paymentId: null,
        orderId,
        kind: "captured",
        amount,
      });
    const refund = (id: string, at: number, amount: number) =>
      events.push({
        at,
        act: () => {
          const orderId = orders.get(id) ?? "";
          emu.recordLedger({
            ...scope,
            id: `${orderId}-r`,
            paymentId: `${orderId}-p`,
            orderId,
            kind: "refunded",
            amount,
          });
        },
      });
    times.forEach((at, i) => {
      const price = 1000 + 37 * i + c.n;
      const id = `s${i}`;
      const injectedHere = i === 1 ? c.injected : "clean";
      sale(id, at, price, async (orderId) => {
        if (injectedHere === "missingInReport") return;
        // The DKK merchant's third sale of the day goes through the V10 interface itself, over HTTP.
        if (i === 2 && c.currency === "DKK") return v10Sale(orderId, price);
        capture(scope, orderId, injectedHere === "amountMismatch" ? price - 100 : price);
        if (injectedHere === "doubleCapture") capture(scope, orderId, price, "p2");
      });
      if (i !== 1) return;
      if (c.injected === "missingInReport")
        exp({ class: "missingInReport", session_id: id, expected: price, reported: 0 });
      if (c.injected === "currencyMismatch")
        exp({ class: "currencyMismatch", session_id: id, expected: price, reported: price });
      if (c.injected === "amountMismatch")
        exp({ class: "amountMismatch", session_id: id, expected: price, reported: price - 100 });
      if (c.injected === "doubleCapture")
        exp({ class: "amountMismatch", session_id: id, expected: price, reported: 2 * price });
      if (c.injected === "refundNotInJournal") {
        refund(id, at + 60_000, 200);
        exp({ class: "refundUnmatched", session_id: id, expected: 0, reported: 200 });
      }
      if (c.injected === "unknownInFleet") {
        events.push({
          at: at + 3600_000,
          act: () => capture(scope, `${c.unit}-1764000000-99999`, 777),
        });
        exp({ class: "unknownInFleet", session_id: null, expected: null, reported: 777 });
      }
      if (c.injected === "laterDayRefund") {
        // A sale two days before, in the journal; its refund today is not.
        sale("s9", dayStart(c.day, c.zone) - 2 * 86_400_000 + 10 * 3600_000, 1500, (o) =>
          capture(scope, o, 1500),
        );
        refund("s9", at + 60_000, 300);
        exp({ class: "refundUnmatched", session_id: "s9", expected: 0, reported: 300 });
      }
    });
    events.sort((a, b) => a.at - b.at);
    try {
      for (const e of events) {
        if (e.at > emu.clock.now()) emu.clock.advance(e.at - emu.clock.now());
        if (e.at > clock.now()) clock.advance(e.at - clock.now());
        await e.act();
      }
    } finally {
      j.close();
    }
    // Past the day's end and the service's next transfer cut-off.
    const after = dayStart(nextDay(nextDay(c.day)), c.zone) + 3 * 3600_000;
    if (after > emu.clock.now()) emu.clock.advance(after - emu.clock.now());
    // The fleet's rows: the journal's sessions as the outbox reports them (SessionData), days in the zone.
    const fleetDb = join(dir, `${c.unit}-fleet.db`);
    const fleet = await openFleetDb(fleetDb);
    try {
      const rows: SalesTable[] = exportSessions(journal, {}).sessions.map((s, i) => ({
        unit_id: c.unit,
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
        day: dayOf(s.closedAt, c.zone),
        member_id: null,
        plan_id: null,
      }));
      await insertSales(fleet.db, rows);
    } finally {
      await fleet.close();
    }
    secretsFor.add(c.currency);
    if (c.injected === "transferTotalWrong")
      // The service's transfer of the day (dated the next) says 1.00 more than its contents.
      exp({ class: "transfer", session_id: null, expected: null, reported: 0, difference: 100 });
    if (c.injected === "feeWrong") {
      // The service took 0.01 more than the agreed 0.75 % of sale s1 (half up, as the agreement says).
      const price = 1000 + 37 + c.n;
      const fee = Math.floor((price * 75 + 5000) / 10_000);
      exp({ class: "feeMismatch", session_id: "s1", expected: fee, reported: fee + 1 });
    }
    return {
      c,
      journal,
      fleetDb,
      settings: join(dir, `${c.unit}-reporting.yaml`),
      expected,
      s1: orders.get("s1") ?? "",
    };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-recon-gen-"));
    kit = await V10Kit.start({ timeSource: () => 0, startTime: Date.parse("2026-01-01T00:00:00Z") });
    emu = kit.emu;
    for (const c of CASES) built.push(await build(c));
    proxy = await startTamperingProxy(emu.info.reporting.baseUrl);
    // Each merchant's consent at the end of the generated months (a refresh token expires).
    for (const currency of secretsFor)
      writeFileSync(
        join(dir, `secrets-${currency}.yaml`),
        `clientSecret: ${emu.info.reporting.clientSecret}\nrefreshToken: ${await consentRefreshToken(emu, merchantOf(currency))}\n`,
        { mode: 0o600 },
      );
    // Every payment point of the unit's merchant belongs to the unit (its transfers are checked by both
    // commands); the transfer-total case reads the report through a proxy that changes one transfer.
    const { baseUrl, tokenUrl } = emulatorEndpoints(emu);
    for (const b of built) {
      const points = await pointsOf(b.c.currency);
      const tampered = b.c.injected === "transferTotalWrong" || b.c.injected === "feeWrong";
      const base = tampered ? `${proxy.origin}${new URL(baseUrl).pathname}` : baseUrl;
      writeFileSync(
        b.settings,
        `baseUrl: ${base}\ntokenUrl: ${tokenUrl}\nclientId: ${emu.info.reporting.clientId}\nsecretsFile: secrets-${b.c.currency}.yaml\ntimeZone: ${b.c.zone}\ntransactionFee: { basisPoints: 75 }\npoints:\n${points.map((p) => `  "${p}": ${b.c.unit}\n`).join("")}`,
      );
      if (b.c.injected === "transferTotalWrong") proxy.tamper.add(nextDay(b.c.day));
      if (b.c.injected === "feeWrong") proxy.fees.add(b.s1);
    }
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
    await kit?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function run(b: Built, who: "unit" | "fleet", format: string) {
    const out = sink();
    const err = sink();
    const io = { stdout: out.w, stderr: err.w, env: { TZ: "UTC" } };
    const range = ["--from", b.c.day, "--to", b.c.day, "--reporting", b.settings, "--format", format];
    const code =
      who === "unit"
        ? await reconcileCommand(["--journal", b.journal, ...range], io)
        : await fleetReconcileCommand(["--db", b.fleetDb, ...range], io);
    return { code, stdout: out.text(), stderr: err.text() };
  }

  const key = (l: {
    class: unknown;
    unit_id: unknown;
    session_id: unknown;
    expected: unknown;
    reported: unknown;
    difference?: number;
  }) =>
    l.class === "transfer"
      ? `transfer|${String(l.unit_id)}||difference ${l.difference ?? Number(l.reported) - Number(l.expected)}`
      : [l.class, l.unit_id, l.session_id ?? "", l.expected ?? "", l.reported].map(String).join("|");

  it.each(CASES.map((c) => [`${c.day} ${c.zone} ${c.currency} ${c.injected}`, c.n] as const))(
    "%s: both commands report exactly the injected difference, the same in table, CSV and JSON",
    async (_name, n) => {
      const b = built.find((x) => x.c.n === n) as Built;
      const want = b.expected.map(key).sort();
      for (const who of ["unit", "fleet"] as const) {
        const json = await run(b, who, "json");
        expect(json.stderr, who).toBe("");
        const body = JSON.parse(json.stdout) as { clean: boolean; lines: Record<string, unknown>[] };
        const bad = body.lines.filter(
          (l) => !GOOD.has(String(l.class)) && !(l.class === "transfer" && l.expected === l.reported),
        );
        expect(bad.map((l) => key(l as Parameters<typeof key>[0])).sort(), `${who} json`).toEqual(want);
        expect(json.code, who).toBe(want.length === 0 ? 0 : 1);
        expect(body.clean).toBe(want.length === 0);
        for (const l of bad) expect(l.currency, who).not.toBeNull();

        const csv = await run(b, who, "csv");
        expect(csv.code).toBe(json.code);
        const [head, ...rows] = parseCsv(csv.stdout).filter((r) => !(r.length === 1 && r[0] === ""));
        const obj = rows.map((r) => Object.fromEntries((head ?? []).map((h, i) => [h, r[i] ?? ""])));
        expect(obj).toHaveLength(body.lines.length);
        const csvBad = obj
          .filter((l) => !GOOD.has(l.class ?? "") && !(l.class === "transfer" && l.expected === l.reported))
          .map((l) =>
            key({
              ...l,
              class: l.class,
              unit_id: l.unit_id,
              session_id: l.session_id,
              expected: l.expected,
              reported: l.reported,
            }),
          );
        expect(csvBad.sort(), `${who} csv`).toEqual(want);

        const table = await run(b, who, "table");
        expect(table.code).toBe(json.code);
        expect(table.stdout).toMatch(want.length === 0 ? /everything reconciles/ : /DOES NOT RECONCILE/);
        const tableRows = table.stdout
          .split("\n")
          .filter((l) => /^\d{4}-\d{2}-\d{2} {2}[a-zA-Z]+ {2}/.test(l));
        const problemRows = tableRows.filter(
          (l) => !/^\S+ {2}\S+ {2}\S+ {2}T-|^\d{4}-\d{2}-\d{2} {2}\S+ {2}[A-Z]{3} /.test(l),
        );
        for (const e of b.expected.filter((x) => x.class !== "transfer")) {
          const cells = [e.class, e.unit_id, e.session_id ?? "-", formatAmount(e.reported)];
          expect(
            problemRows.some((r) => cells.every((cell) => r.split(/ +/).includes(cell))),
            `${who} table ${cells}`,
          ).toBe(true);
        }
      }
    },
    60_000,
  );

  it("the same through real processes: vendd reconcile and vendd fleet reconcile", async () => {
    const b = built.find((x) => x.c.injected !== "clean") as Built;
    const env = { TZ: "UTC" };
    const range = ["--from", b.c.day, "--to", b.c.day, "--reporting", b.settings, "--format", "json"];
    for (const args of [
      ["reconcile", "--journal", b.journal, ...range],
      ["fleet", "reconcile", "--db", b.fleetDb, ...range],
    ]) {
      const r = await vendd(args, { env });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(1);
      const body = JSON.parse(r.stdout) as { lines: Record<string, unknown>[] };
      const bad = body.lines.filter(
        (l) => !GOOD.has(String(l.class)) && !(l.class === "transfer" && l.expected === l.reported),
      );
      expect(bad.map((l) => key(l as Parameters<typeof key>[0])).sort()).toEqual(b.expected.map(key).sort());
    }
  }, 60_000);
});

/**
 * A loopback proxy in front of the emulator's reporting interface that adds 1.00 to the transfers dated on
 * the days in `tamper` (the service's transfer total wrong; the emulator itself always transfers exactly).
 */
async function startTamperingProxy(target: string) {
  const origin = new URL(target).origin;
  const tamper = new Set<string>();
  /** Order ids whose TransactionFee lines in the time-range list are 0.01 higher. */
  const fees = new Set<string>();
  const server = createServer((req, res) => {
    void (async () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === "string" && k !== "host" && k !== "connection") headers[k] = v;
      const r = await request(`${origin}${req.url ?? "/"}`, { method: "GET", headers });
      let body = await r.body.text();
      if (r.statusCode === 200 && (req.url ?? "").includes("/transfer-references")) {
        const doc = JSON.parse(body) as {
          transferReferences?: { transferReferenceDate: string; totalTransferredAmount: number }[];
        };
        for (const t of doc.transferReferences ?? [])
          if (tamper.has(t.transferReferenceDate))
            t.totalTransferredAmount = Math.round(t.totalTransferredAmount * 100 + 100) / 100;
        body = JSON.stringify(doc);
      }
      if (r.statusCode === 200 && (req.url ?? "").includes("/transactions")) {
        const doc = JSON.parse(body) as {
          transactions?: { type: string; amount: number; externalTransactionId?: string | null }[];
        };
        for (const t of doc.transactions ?? [])
          if (t.type === "TransactionFee" && fees.has(t.externalTransactionId ?? ""))
            t.amount = Math.round(t.amount * 100 - 1) / 100;
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
    tamper,
    fees,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
