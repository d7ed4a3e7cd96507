/** Plans' pure parts and database-only parts: allowances and overage, CSRF tokens, QR SVG, periods, UIDs. */
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../core/clock.js";
import type { FleetContext } from "../context.js";
import { openFleetDb } from "../database.js";
import type { FleetDb } from "../db/open.js";
import {
  addCompanyMember,
  buildEntitlementList,
  createPlan,
  csrfToken,
  csrfValid,
  listMembers,
  listPlans,
  loadMemberDetail,
  memberPage,
  membersPage,
  nextPeriod,
  normaliseUid,
  plansPage,
  previousPeriod,
  usageOf,
  usagePage,
  usageReport,
} from "./index.js";
import { qrMatrix, qrSvg } from "./qr.js";

describe("plans: parts", () => {
  let fdb: FleetDb;
  let ctx: FleetContext;
  const clock = new ManualClock(Date.parse("2026-03-01T00:00:00Z"));
  beforeAll(async () => {
    fdb = await openFleetDb(":memory:");
    ctx = {
      db: fdb.db,
      dialect: fdb.dialect,
      clock,
      logger: pino({ level: "silent" }),
      timeZone: "Europe/Copenhagen",
    };
  });
  afterAll(async () => {
    await fdb.close();
  });

  it("counts plan vends against day and month allowances; what passes them is overage", async () => {
    const planId = await createPlan(ctx, {
      name: "Tea",
      price: 5000,
      currency: "DKK",
      dayItems: 2,
      dayAmount: null,
      monthItems: 3,
      monthAmount: null,
      units: ["u1"],
    });
    const now = clock.now();
    await ctx.db
      .insertInto("units")
      .values({
        id: "u1",
        public_key: "k",
        fingerprint: "f",
        label: "l",
        status: "approved",
        enrolled_at: now,
      })
      .execute();
    await ctx.db
      .insertInto("members")
      .values({
        id: "m1",
        plan_id: planId,
        status: "active",
        name: "M",
        phone: null,
        badge_hash: "h",
        company_id: null,
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
    const sale = (
      n: number,
      day: string,
      price: number,
      vends = 1,
      driver: "plan" | "v10" = "plan",
      result: "captured" | "cancelled" = "captured",
    ) => ({
      unit_id: "u1",
      seq: n,
      session_id: `s${n}`,
      order_id: `o${n}`,
      payment_id: null,
      driver,
      flow: "selection" as const,
      item: 1,
      price,
      result,
      approved: price,
      captured: price,
      refunded: 0,
      currency: "DKK",
      vends_ok: vends,
      vends_failed: 0,
      opened_at: now + n,
      closed_at: now + n,
      day,
      member_id: "m1",
      plan_id: planId,
    });
    await ctx.db
      .insertInto("sales")
      .values([
        sale(1, "2026-03-02", 1000), // day 1: 1
        sale(2, "2026-03-02", 1100), // day 1: 2
        sale(3, "2026-03-02", 1200), // day 1: over the day (3rd)
        sale(4, "2026-03-03", 1300), // month: 3rd → within
        sale(5, "2026-03-04", 1400, 2), // month full: both over
        sale(6, "2026-03-05", 9999, 0, "plan", "cancelled"), // no vend delivered: not usage
        sale(7, "2026-04-01", 1500), // next period
        sale(8, "2026-03-06", 1600, 1, "v10"), // a paid sale: not plan usage
      ])
      .execute();
    const plan = { day_items: 2, day_amount: null, month_items: 3, month_amount: null };
    expect(await usageOf(ctx, "m1", plan, "2026-03")).toEqual({
      items: 3,
      amount: 1000 + 1100 + 1300,
      overItems: 3,
      overAmount: 1200 + 1400 * 2,
    });
    expect(
      await usageOf(
        ctx,
        "m1",
        { ...plan, day_items: null, month_items: null, month_amount: 2100 },
        "2026-03",
      ),
    ).toEqual({
      items: 2,
      amount: 2100,
      overItems: 4,
      overAmount: 1200 + 1300 + 2800,
    });
  });

  it("pages render the plans, members, a member and usage, escaping what people typed", async () => {
    await ctx.db.updateTable("members").set({ name: "<script>x</script>" }).where("id", "=", "m1").execute();
    const plans = plansPage(await listPlans(ctx), "https://fleet.example").value;
    expect(plans).toContain("Tea");
    expect(plans).toContain("50.00 DKK");
    expect(plans).toContain("2 items");
    const members = membersPage(await listMembers(ctx)).value;
    expect(members).toContain("&lt;script&gt;x&lt;/script&gt;");
    expect(members).not.toContain("<script>");
    const detail = await loadMemberDetail(ctx, "m1");
    expect(detail).toBeDefined();
    if (detail) expect(memberPage(detail, "tok").value).toContain('name="csrf" value="tok"');
    clock.advance(86_400_000 * 2);
    const usage = usagePage("2026-03", await usageReport(ctx, "2026-03")).value;
    expect(usage).toContain("&lt;script&gt;");
    expect(usage).toContain("<td>34.00</td><td>3</td><td>40.00</td>"); // as counted in the first test
  });

  it("company-paid members are active at once, without an agreement, and entitled", async () => {
    const planId = (await listPlans(ctx))[0]?.id ?? "";
    const id = await addCompanyMember(
      ctx,
      { badgeSalt: "c2FsdHNhbHRzYWx0c2FsdA" },
      { planId, companyId: "c1", name: "Staff", badgeUid: "11 22 33 44" },
    );
    await expect(
      addCompanyMember(
        ctx,
        { badgeSalt: "c2FsdHNhbHRzYWx0c2FsdA" },
        { planId, companyId: "c1", name: "Again", badgeUid: "11223344" },
      ),
    ).rejects.toThrow(/already/);
    const list = await buildEntitlementList(ctx, clock.now(), 7, { badgeSalt: "c2FsdHNhbHRzYWx0c2FsdA" });
    expect(list.serial).toBe(7);
    expect(list.timeZone).toBe("Europe/Copenhagen");
    const m = list.members.find((x) => x.memberId === id);
    expect(m).toMatchObject({
      planId,
      units: ["u1"],
      perDay: { items: 2, amount: null },
      perMonth: { items: 3, amount: null },
    });
    expect(m?.badge).not.toContain("11223344");
  });

  it("CSRF tokens are bound to the plan, the secret and an hour", () => {
    const secret = Buffer.from("s3cret-s3cret-s3cret");
    const t = csrfToken(secret, "p1", 1000);
    expect(csrfValid(secret, "p1", t, 1000 + 60_000)).toBe(true);
    expect(csrfValid(secret, "p2", t, 1000)).toBe(false);
    expect(csrfValid(Buffer.from("other"), "p1", t, 1000)).toBe(false);
    expect(csrfValid(secret, "p1", t, 1000 + 3_600_001)).toBe(false);
    expect(csrfValid(secret, "p1", `${t}x`, 1000)).toBe(false);
    expect(csrfValid(secret, "p1", undefined, 1000)).toBe(false);
  });

  it("renders the QR matrix of a landing link as SVG with its finder patterns", () => {
    const url =
      "https://emulator.example/subscriptions/landing?flow=agreement&id=0f8fad5b-d9cb-469f-a165-70867728950e";
    const m = qrMatrix(url);
    expect(m.length).toBeGreaterThanOrEqual(21);
    expect((m.length - 17) % 4).toBe(0);
    // top-left finder: a dark 7×7 ring around a light ring and a dark 3×3 core
    const row0 = m[0]?.slice(0, 7);
    expect(row0).toEqual([true, true, true, true, true, true, true]);
    expect(m[1]?.slice(0, 7)).toEqual([true, false, false, false, false, false, true]);
    expect(m[3]?.slice(0, 7)).toEqual([true, false, true, true, true, false, true]);
    const svg = qrSvg(url);
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).not.toContain(url);
    expect(svg).toMatch(/^<svg[^>]*viewBox="0 0 \d+ \d+"/);
  });

  it("periods and UIDs", () => {
    expect(nextPeriod("2026-12")).toBe("2027-01");
    expect(previousPeriod("2026-01")).toBe("2025-12");
    expect(normaliseUid("04:a2:3b:4c")).toBe("04A23B4C");
    expect(() => normaliseUid("hello")).toThrow(/hex/);
  });
});
