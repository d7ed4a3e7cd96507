/** The Companies page's queries: a company's catalogue, a unit's status, what the forms offer. */
import type { FleetContext } from "../context.js";
import { invoicesDb } from "../invoices/index.js";
import type { CompanyFormData } from "./rows.js";

/** The company `id`'s catalogue, or undefined when there is no such company. */
export function companyCatalogue(ctx: FleetContext, id: string): Promise<{ catalogue: string } | undefined> {
  return invoicesDb(ctx).selectFrom("companies").select("catalogue").where("id", "=", id).executeTakeFirst();
}

/** The unit `id` and its enrolment status, or undefined. */
export function unitStatus(ctx: FleetContext, id: string) {
  return ctx.db.selectFrom("units").select(["id", "status"]).where("id", "=", id).executeTakeFirst();
}

/** Units, catalogue entries, company members and (when configured) plans for the forms and lists. */
export async function loadCompanyFormData(ctx: FleetContext, withPlans: boolean): Promise<CompanyFormData> {
  const units = await ctx.db
    .selectFrom("units")
    .select(["id", "label", "status"])
    .where("status", "!=", "revoked")
    .orderBy("id")
    .execute();
  const products = await invoicesDb(ctx)
    .selectFrom("products")
    .selectAll()
    .orderBy("catalogue")
    .orderBy("item")
    .execute();
  const members = await ctx.db
    .selectFrom("members")
    .innerJoin("plans", "plans.id", "members.plan_id")
    .select(["members.id", "members.name", "members.company_id", "members.status", "plans.name as plan"])
    .where("members.company_id", "is not", null)
    .orderBy("members.name")
    .execute();
  return {
    units,
    products,
    members: members.flatMap((m) => (m.company_id === null ? [] : [{ ...m, company_id: m.company_id }])),
    plans: withPlans
      ? (await ctx.db.selectFrom("plans").selectAll().orderBy("name").execute()).filter((p) => p.active === 1)
      : null,
  };
}
