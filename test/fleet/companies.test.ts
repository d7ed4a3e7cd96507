/**
 * Manager forms on /companies (issue 18): create a company, assign a unit, set a catalogue product, add a
 * company-paid member. Each works and its row is shown; bad input answers 422 with the message and stores
 * nothing; a viewer or a post without the CSRF token is refused (403); HTML in a company name is escaped.
 */
import type { FastifyInstance } from "fastify";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invoicesDb } from "../../src/fleet/invoices/store/invoices.js";
import {
  type ComposedFleet,
  HOST,
  ISSUER,
  type Login,
  loginAs,
  ORIGIN,
  startComposedFleet,
} from "../support/fleetCompose.js";
import { IMG, MANAGER, UNITS, VIEWER } from "../support/fleetDashboard.js";

function post(app: FastifyInstance, url: string, login: Login, fields: Record<string, string>, csrf = true) {
  return app.inject({
    method: "POST",
    url,
    headers: {
      host: HOST,
      origin: ORIGIN,
      cookie: login.cookie,
      "content-type": "application/x-www-form-urlencoded",
    },
    payload: new URLSearchParams(csrf ? { _csrf: login.csrf, ...fields } : fields).toString(),
  });
}

const COMPANY = {
  name: `Globex ${IMG}`,
  orgNumber: "87654321",
  delivery: "direct",
  phone: "+4512345678",
  issuerId: ISSUER,
  country: "DK",
  dueDays: "30",
  catalogue: "globex",
};

describe("company forms on /companies", () => {
  let f: ComposedFleet;
  let manager: Login;
  let viewer: Login;
  let companyId: string;
  const db = () => invoicesDb(f.ctx);
  const companies = async () => db().selectFrom("companies").selectAll().execute();
  const page = async (who: Login) =>
    (await f.app.inject({ url: "/companies", headers: { host: HOST, cookie: who.cookie } })).body;

  const logged: string[] = [];

  beforeAll(async () => {
    f = await startComposedFleet();
    // Every log line of the requests below, to show the card UID never reaches the log.
    f.ctx.logger = pino({ level: "debug" }, { write: (line: string) => logged.push(line) });
    manager = await loginAs(f.app, MANAGER);
    viewer = await loginAs(f.app, VIEWER);
  });
  afterAll(async () => {
    await f.close();
  });

  it("a manager sees the forms, a viewer the page without them", async () => {
    const m = await page(manager);
    expect(m).toContain('action="/companies"');
    expect(m).toContain("/members");
    expect(m).toContain(`<option value="${UNITS.lobby}">`);
    const v = await page(viewer);
    expect(v).toContain("Companies");
    expect(v).not.toContain('action="/companies');
    expect(v).not.toContain("Card UID");
  });

  it("creates a company (HTML in its name is shown as text)", async () => {
    const before = (await companies()).length;
    const r = await post(f.app, "/companies", manager, COMPANY);
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe("/companies");
    const rows = await companies();
    expect(rows.length).toBe(before + 1);
    const c = rows.find((x) => x.org_number === "87654321");
    expect(c).toMatchObject({ delivery: "direct", phone: "+4512345678", due_days: 30, catalogue: "globex" });
    companyId = c?.id ?? "";
    const body = await page(manager);
    expect(body).toContain("Globex &lt;img src=x onerror=alert(2)&gt;");
    expect(body).not.toContain(IMG);
  });

  it("refuses a bad company with 422 and its message, storing nothing", async () => {
    const before = (await companies()).length;
    const cases: [Record<string, string>, string][] = [
      [{ ...COMPANY, phone: "" }, "an InvoiceDirect company needs the account&#39;s phone"],
      [{ ...COMPANY, issuerId: "not-a-guid" }, "issuerId: the issuer&#39;s guid"],
      [{ ...COMPANY, name: "  " }, "name:"],
      [{ ...COMPANY, dueDays: "2 weeks" }, "dueDays: payment terms in days"],
      [{ ...COMPANY, delivery: "fax" }, "delivery:"],
    ];
    for (const [fields, message] of cases) {
      const r = await post(f.app, "/companies", manager, fields);
      expect(r.statusCode, message).toBe(422);
      expect(r.body).toContain('role="alert"');
      expect(r.body).toContain(message);
    }
    expect((await companies()).length).toBe(before);
  });

  it("assigns an enrolled unit; an unknown unit is refused", async () => {
    const r = await post(f.app, `/companies/${companyId}/units`, manager, { unit: UNITS.lobby });
    expect(r.statusCode).toBe(303);
    const row = await db()
      .selectFrom("company_units")
      .selectAll()
      .where("unit_id", "=", UNITS.lobby)
      .executeTakeFirst();
    expect(row?.company_id).toBe(companyId);
    expect(await page(manager)).toContain(`Units paid for: ${UNITS.lobby}`);

    const bad = await post(f.app, `/companies/${companyId}/units`, manager, { unit: "u-nowhere" });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain("unit: no such enrolled unit");
    const count = await db()
      .selectFrom("company_units")
      .select("unit_id")
      .where("unit_id", "=", "u-nowhere")
      .execute();
    expect(count).toEqual([]);
    const missing = await post(f.app, "/companies/nope/units", manager, { unit: UNITS.lobby });
    expect(missing.statusCode).toBe(404);
  });

  it("sets and replaces a product: VAT % → basis points, price parsed exactly", async () => {
    const products = () =>
      db().selectFrom("products").selectAll().where("catalogue", "=", "globex").execute();
    let r = await post(f.app, `/companies/${companyId}/products`, manager, {
      item: "7",
      name: "Coffee",
      vat: "12.5",
      price: "10.05",
    });
    expect(r.statusCode).toBe(303);
    expect(await products()).toEqual([
      { catalogue: "globex", item: 7, name: "Coffee", vat_bp: 1250, price: 1005 },
    ]);
    r = await post(f.app, `/companies/${companyId}/products`, manager, {
      item: "7",
      name: "Espresso",
      vat: "25",
      price: "12",
    });
    expect(r.statusCode).toBe(303);
    expect(await products()).toEqual([
      { catalogue: "globex", item: 7, name: "Espresso", vat_bp: 2500, price: 1200 },
    ]);
    const body = await page(manager);
    expect(body).toContain("<td>Espresso</td><td>25 %</td><td>12.00</td>");

    const cases: [Record<string, string>, string][] = [
      [{ item: "8", name: "Tea", vat: "25", price: "1.234" }, "price: an amount incl. VAT"],
      [{ item: "8", name: "Tea", vat: "25", price: "-1" }, "price: an amount incl. VAT"],
      [{ item: "8", name: "Tea", vat: "12.345", price: "1" }, "VAT rate: a percentage"],
      [{ item: "8", name: "Tea", vat: "101", price: "1" }, "VAT rate: at most 100 %"],
      [{ item: "x", name: "Tea", vat: "25", price: "1" }, "item: the vend item number"],
      [{ item: "70000", name: "Tea", vat: "25", price: "1" }, "item:"],
      [{ item: "8", name: "", vat: "25", price: "1" }, "name:"],
    ];
    for (const [fields, message] of cases) {
      const bad = await post(f.app, `/companies/${companyId}/products`, manager, fields);
      expect(bad.statusCode, message).toBe(422);
      expect(bad.body).toContain(message);
    }
    expect((await products()).length).toBe(1);
  });

  it("adds a company-paid member through the plans service; the card UID is hashed, never stored", async () => {
    const uid = "04:DE:AD:BE:EF:01";
    const r = await post(f.app, `/companies/${companyId}/members`, manager, {
      plan: f.planId,
      name: "Grace Hopper",
      badgeUid: uid,
    });
    expect(r.statusCode).toBe(303);
    const m = await f.ctx.db
      .selectFrom("members")
      .selectAll()
      .where("company_id", "=", companyId)
      .executeTakeFirstOrThrow();
    expect(m).toMatchObject({ name: "Grace Hopper", status: "active", plan_id: f.planId });
    expect(JSON.stringify(m)).not.toMatch(/04:?DE:?AD:?BE:?EF:?01/i);
    expect(await page(manager)).toContain("Grace Hopper");
    expect(logged.some((l) => l.includes("company member added"))).toBe(true);

    const members = async () => (await f.ctx.db.selectFrom("members").select("id").execute()).length;
    const before = await members();
    const cases: [Record<string, string>, string][] = [
      [{ plan: f.planId, name: "X", badgeUid: "zz" }, "the card UID must be 8 to 20 hex digits"],
      [{ plan: f.planId, name: "X", badgeUid: uid }, "card: already in use"],
      [{ plan: "p-none", name: "X", badgeUid: "0102030405" }, "plan: no such active plan"],
      [{ plan: f.planId, name: "", badgeUid: "0102030405" }, "name: the member&#39;s name"],
    ];
    for (const [fields, message] of cases) {
      const bad = await post(f.app, `/companies/${companyId}/members`, manager, fields);
      expect(bad.statusCode, message).toBe(422);
      expect(bad.body).toContain(message);
      expect(bad.body).not.toContain("DE:AD:BE:EF");
    }
    expect(await members()).toBe(before);
    expect(logged.join("")).not.toMatch(/DE:?AD:?BE:?EF|0102030405/i);
  });

  it("refuses a viewer's post and a post without the CSRF token (403), changing nothing", async () => {
    const before = {
      companies: (await companies()).length,
      products: (await db().selectFrom("products").selectAll().execute()).length,
      members: (await f.ctx.db.selectFrom("members").select("id").execute()).length,
    };
    const posts: [string, Record<string, string>][] = [
      ["/companies", { ...COMPANY, name: "Viewer Co" }],
      [`/companies/${companyId}/units`, { unit: UNITS.evil }],
      [`/companies/${companyId}/products`, { item: "9", name: "Tea", vat: "25", price: "1" }],
      [`/companies/${companyId}/members`, { plan: f.planId, name: "V", badgeUid: "0A0B0C0D0E" }],
    ];
    for (const [url, fields] of posts) {
      expect((await post(f.app, url, viewer, fields)).statusCode, url).toBe(403);
      expect((await post(f.app, url, manager, fields, false)).statusCode, url).toBe(403);
      expect(
        (await post(f.app, url, manager, { ...fields, _csrf: viewer.csrf }, false)).statusCode,
        url,
      ).toBe(403);
    }
    expect({
      companies: (await companies()).length,
      products: (await db().selectFrom("products").selectAll().execute()).length,
      members: (await f.ctx.db.selectFrom("members").select("id").execute()).length,
    }).toEqual(before);
    const unit = await db()
      .selectFrom("company_units")
      .selectAll()
      .where("unit_id", "=", UNITS.evil)
      .execute();
    expect(unit).toEqual([]);
  });
});
