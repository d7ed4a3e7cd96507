/** Company members: staff a company pays for, added from the dashboard without an agreement. */
import type { FleetContext } from "../context.js";
import { activePlan, assertCardFree, hashBadge, newId, type PlansSettings } from "./common.js";
import { insertMember } from "./store/members.js";

/**
 * A company-paid member (issue 18: the company pays for its staff): active at once, no agreement and no
 * monthly charge here; the company's invoice (another module) bills what the member took. The card UID is
 * hashed at once like at sign-up.
 */
export async function addCompanyMember(
  ctx: FleetContext,
  s: Pick<PlansSettings, "badgeSalt">,
  input: { planId: string; companyId: string; name: string; badgeUid: string },
): Promise<string> {
  const badge = hashBadge(input.badgeUid, s.badgeSalt);
  const plan = await activePlan(ctx, input.planId);
  await assertCardFree(ctx, badge);
  const id = newId("m");
  await insertMember(ctx, {
    id,
    planId: plan.id,
    status: "active",
    name: input.name.trim().slice(0, 60),
    phone: null,
    badge,
    companyId: input.companyId,
  });
  ctx.logger.info({ memberId: id, planId: plan.id, companyId: input.companyId }, "company member added");
  return id;
}
