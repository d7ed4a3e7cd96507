/**
 * Billing steps of the fleet plans scenario (plans.test.ts): the month's fee charged ahead and executed,
 * overage billed auto-reserved and captured once, refunds (partial, and in full from the dashboard), and
 * overage accepted in the app without auto-reserve. Registered in order by plans.test.ts.
 */
import { expect, it } from "vitest";
import { DK_USER, START } from "../../emulator/subscriptions/testkit.test-support.js";
import { requestRefund, signUp } from "./index.js";
import { DAY, HOUR, type PlansFixture, until } from "./plans.test-support.js";

export function monthFeeTest(f: PlansFixture): void {
  it("charges the month's fee ahead of its due date; executed on the due date", async () => {
    const { ctx, client, advance, member, cycle } = f;
    const r = await cycle();
    expect(r.chargesRequested).toBe(1);
    const c = await ctx.db.selectFrom("plan_charges").selectAll().executeTakeFirstOrThrow();
    expect(c).toMatchObject({ period: "2026-03", due_date: "2026-03-03", amount: 9900, state: "pending" });
    expect((await cycle()).chargesRequested).toBe(0); // idempotent
    advance(DAY - 6 * HOUR); // 2026-03-03 04:00: executed at 03:15, batched within 2 minutes
    await until("charge executed", async () => {
      const x = await ctx.db
        .selectFrom("plan_charges")
        .select("state")
        .where("id", "=", c.id)
        .executeTakeFirstOrThrow();
      return x.state === "executed" ? true : undefined;
    });
    expect(
      (await client.getCharge(String((await member(f.memberId)).agreement_id), String(c.payment_id))).status,
    ).toBe("Executed");
  });
}

export function overageTest(f: PlansFixture): void {
  it("bills usage above the allowance at the period's end as an auto-reserved one-off, captured once", async () => {
    const { ctx, client, s, clock, planId, advance, member, cycle } = f;
    const { memberId } = f;
    // three plan vends on 2026-03-10 (2 a day allowed) and one on the 11th: one over, 25.00
    const sale = (n: number, day: string, at: number) => ({
      unit_id: "u1",
      seq: n,
      session_id: `s${n}`,
      order_id: `o${n}`,
      payment_id: null,
      driver: "plan" as const,
      flow: "selection" as const,
      item: 1,
      price: 2500,
      result: "captured" as const,
      approved: 2500,
      captured: 2500,
      refunded: 0,
      currency: "DKK",
      vends_ok: 1,
      vends_failed: 0,
      opened_at: at,
      closed_at: at,
      day,
      member_id: memberId,
      plan_id: planId,
    });
    const t = Date.parse("2026-03-10T08:00:00Z");
    await ctx.db
      .insertInto("units")
      .values({
        id: "u1",
        public_key: "pk-u1",
        fingerprint: "fp",
        label: "Office 1",
        status: "approved",
        enrolled_at: START,
        decided_by: "manager",
        decided_at: START,
      })
      .execute();
    await ctx.db
      .insertInto("sales")
      .values([
        sale(1, "2026-03-10", t),
        sale(2, "2026-03-10", t + HOUR),
        sale(3, "2026-03-10", t + 2 * HOUR),
        sale(4, "2026-03-11", t + DAY),
      ])
      .execute();
    advance(Date.parse("2026-04-01T06:00:00Z") - clock.now());
    const r = await cycle();
    expect(r.overagesBilled).toBe(1);
    const o = await until("overage captured", async () => {
      const x = await ctx.db
        .selectFrom("plan_overages")
        .selectAll()
        .where("member_id", "=", memberId)
        .executeTakeFirst();
      return x?.state === "captured" ? x : undefined;
    });
    expect(o).toMatchObject({ period: "2026-03", items: 1, amount: 2500 });
    expect(
      await client.getOneOff(String((await member(memberId)).agreement_id), String(o.oneoff_id)),
    ).toMatchObject({
      status: "Captured",
    });
    const again = await cycle();
    expect(again.overagesBilled).toBe(0);
    // April's fee was requested too (due today or ahead)
    const april = await ctx.db
      .selectFrom("plan_charges")
      .selectAll()
      .where("period", "=", "2026-04")
      .execute();
    expect(april).toHaveLength(1);

    // refunds: part of the overage, then more than what is left is refused here
    const refund = await requestRefund(ctx, client, s, {
      memberId,
      paymentId: String(o.oneoff_id),
      amount: 1000,
      by: "manager",
    });
    await until("refund issued", async () => {
      const x = await ctx.db
        .selectFrom("plan_refunds")
        .selectAll()
        .where("id", "=", refund)
        .executeTakeFirstOrThrow();
      return x.state === "issued" ? x : undefined;
    });
    await expect(
      requestRefund(ctx, client, s, {
        memberId,
        paymentId: String(o.oneoff_id),
        amount: 1600,
        by: "manager",
      }),
    ).rejects.toThrow(/left to refund/);
  });
}

export function dashboardRefundTest(f: PlansFixture): void {
  it("refunds a month's fee in full from the dashboard's form (behind the dashboard's guard)", async () => {
    const { ctx, fleet } = f;
    const { memberId } = f;
    const march = await ctx.db
      .selectFrom("plan_charges")
      .selectAll()
      .where("member_id", "=", memberId)
      .where("period", "=", "2026-03")
      .executeTakeFirstOrThrow();
    const post = (headers: Record<string, string>) =>
      fleet.inject({
        method: "POST",
        url: `/plans/admin/members/${memberId}/refunds`,
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        payload: new URLSearchParams({ payment: String(march.payment_id), amount: "" }).toString(),
      });
    expect((await post({})).statusCode).toBe(403);
    const r = await post({ "x-test-manager": "yes" });
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe(`/plans/members/${memberId}`);
    const refund = await until("full refund issued", async () => {
      const x = await ctx.db
        .selectFrom("plan_refunds")
        .selectAll()
        .where("payment_id", "=", String(march.payment_id))
        .executeTakeFirst();
      return x?.state === "issued" ? x : undefined;
    });
    expect(refund).toMatchObject({ amount: 9900, requested_by: "manager-1" });
    expect((await post({ "x-test-manager": "yes" })).statusCode).toBe(409);
  });
}

export function manualOverageTest(f: PlansFixture): void {
  it("without auto-reserve, the member accepts the overage in the app; then it is captured", async () => {
    const { ctx, client, s, clock, planId, advance, member, cycle, sim } = f;
    s.autoReserve = false;
    try {
      const { memberId: id } = await signUp(ctx, client, s, {
        planId,
        name: "Cy",
        phone: DK_USER,
        badgeUid: "0A0B0C0D0E0F",
      });
      await sim(`agreements/${(await member(id)).agreement_id}/accept`, { phoneNumber: DK_USER });
      await until("member active", async () => ((await member(id)).status === "active" ? true : undefined));
      const period = new Date(clock.now()).toISOString().slice(0, 7);
      const day = new Date(clock.now()).toISOString().slice(0, 10);
      await ctx.db
        .insertInto("sales")
        .values(
          [101, 102, 103].map((n) => ({
            unit_id: "u1",
            seq: n,
            session_id: `s${n}`,
            order_id: `o${n}`,
            payment_id: null,
            driver: "plan" as const,
            flow: "selection" as const,
            item: 2,
            price: 1800,
            result: "captured" as const,
            approved: 1800,
            captured: 1800,
            refunded: 0,
            currency: "DKK",
            vends_ok: 1,
            vends_failed: 0,
            opened_at: clock.now() + n,
            closed_at: clock.now() + n,
            day,
            member_id: id,
            plan_id: planId,
          })),
        )
        .execute();
      const [y, mo] = period.split("-").map(Number) as [number, number];
      advance(Date.UTC(y, mo, 1, 6) - clock.now()); // 06:00 on the 1st of the next month
      await cycle();
      const o = await ctx.db
        .selectFrom("plan_overages")
        .selectAll()
        .where("member_id", "=", id)
        .executeTakeFirstOrThrow();
      expect(o).toMatchObject({ period, items: 1, amount: 1800, state: "requested" });
      expect(o.landing_url).toContain("flow=oneoff");
      expect((await sim(`oneoffpayments/${o.oneoff_id}/accept`, {})).status).toBe(200);
      await until("overage captured", async () => {
        const x = await ctx.db
          .selectFrom("plan_overages")
          .select("state")
          .where("id", "=", o.id)
          .executeTakeFirstOrThrow();
        return x.state === "captured" ? true : undefined;
      });
    } finally {
      s.autoReserve = true;
    }
  });
}
