/**
 * The plans plugin of the fleet server (issue 18). `registerPlans(app, ctx, opts)` adds:
 * - the public sign-up pages `GET|POST /plans/signup/:planId` (no manager login; CSRF token of their own);
 * - the service's callbacks `POST /plans/callbacks/agreements/:memberId/(success|cancel)`,
 *   `POST /plans/callbacks/payments` and `POST /plans/callbacks/refunds`: each needs the Authorization value
 *   the fleet set for itself at the provider (`configureProvider`), is recognised when replayed (digest in
 *   `plan_callbacks`) and then changes nothing;
 * - nothing for units: `registerEntitlementRoute(app, ctx, auth)` (entitlements.ts) is mounted by the
 *   fleet core with its unit authentication.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import formbody from "@fastify/formbody";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import type { FleetContext } from "../context.js";
import { html } from "../web/html.js";
import { publishEntitlements } from "./entitlements.js";
import { publicDocument, signUpDonePage, signUpPage } from "./pages.js";
import {
  applyAgreementCallback,
  applyPaymentCallbacks,
  applyRefundCallback,
  callbackAuthorised,
  firstSighting,
  PlansError,
  type PlansSettings,
  signUp,
} from "./service.js";

export { registerPlanAdmin } from "./admin.js";
export {
  buildEntitlementList,
  loadEntitlementKey,
  newestEntitlementEtag,
  publishEntitlements,
  registerEntitlementRoute,
} from "./entitlements.js";
export { countedPlanVends } from "./overage.js";
export * from "./pages.js";
export type { PlansTable } from "./schema.js";
export * from "./service.js";

export interface PlansOptions {
  client: SubscriptionsClient;
  settings: PlansSettings;
}

const CSRF_LIFE_MS = 3_600_000;
const NOT_FOUND = html`<h1>No such plan</h1><p>The sign-up link is not valid.</p>`;

/** A signed form token for the public sign-up form of one plan: `<issued>.<nonce>.<hmac>`. */
export function csrfToken(secret: Buffer, planId: string, now: number): string {
  const nonce = randomBytes(12).toString("base64url");
  const mac = createHmac("sha256", secret).update(`signup\n${planId}\n${now}\n${nonce}`).digest("base64url");
  return `${now}.${nonce}.${mac}`;
}

export function csrfValid(secret: Buffer, planId: string, token: unknown, now: number): boolean {
  if (typeof token !== "string") return false;
  const [issued, nonce, mac] = token.split(".");
  if (!issued || !nonce || !mac || !/^\d+$/.test(issued)) return false;
  const at = Number(issued);
  if (now - at > CSRF_LIFE_MS || at - now > 60_000) return false;
  const want = createHmac("sha256", secret).update(`signup\n${planId}\n${at}\n${nonce}`).digest();
  const got = Buffer.from(mac, "base64url");
  return got.length === want.length && timingSafeEqual(got, want);
}

/**
 * The function that publishes a new entitlement list when due (`runPlanCycle`'s last argument); does
 * nothing without an entitlement key.
 */
export function plansPublisher(ctx: FleetContext, s: PlansSettings): (now: number) => Promise<boolean> {
  return async (now) =>
    s.entitlementKey === null
      ? false
      : publishEntitlements(ctx, now, {
          key: s.entitlementKey,
          badgeSalt: s.badgeSalt,
          validityMs: s.entitlementValidityMs,
        });
}

/** Tells the service where and how to call the fleet back (run once at start-up; both calls are PUT-like). */
export async function configureProvider(client: SubscriptionsClient, s: PlansSettings): Promise<void> {
  await client.setPaymentCallbackUrl(`${s.publicUrl}/plans/callbacks/payments`);
  await client.setCallbackApiKey(s.callbackApiKey);
}

function field(body: unknown, name: string): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const v = (body as Record<string, unknown>)[name];
  return typeof v === "string" ? v : undefined;
}

export async function registerPlans(
  app: FastifyInstance,
  ctx: FleetContext,
  opts: PlansOptions,
): Promise<void> {
  const { client, settings: s } = opts;
  const publish = plansPublisher(ctx, s);

  await app.register(async (sub) => {
    if (!sub.hasContentTypeParser("application/x-www-form-urlencoded")) await sub.register(formbody);

    sub.get<{ Params: { planId: string } }>("/plans/signup/:planId", async (req, reply) => {
      const plan = await ctx.db
        .selectFrom("plans")
        .selectAll()
        .where("id", "=", req.params.planId)
        .executeTakeFirst();
      reply.type("text/html; charset=utf-8").header("cache-control", "no-store");
      if (plan === undefined || plan.active !== 1)
        return reply.code(404).send(publicDocument("Not found", NOT_FOUND));
      return reply.send(
        publicDocument(
          `Sign up: ${plan.name}`,
          signUpPage(plan, csrfToken(s.csrfSecret, plan.id, ctx.clock.now())),
        ),
      );
    });

    sub.post<{ Params: { planId: string } }>("/plans/signup/:planId", async (req, reply) => {
      reply.type("text/html; charset=utf-8").header("cache-control", "no-store");
      const plan = await ctx.db
        .selectFrom("plans")
        .selectAll()
        .where("id", "=", req.params.planId)
        .executeTakeFirst();
      if (plan === undefined || plan.active !== 1)
        return reply.code(404).send(publicDocument("Not found", NOT_FOUND));
      const now = ctx.clock.now();
      const again = (code: number, error: string) =>
        reply
          .code(code)
          .send(
            publicDocument(
              `Sign up: ${plan.name}`,
              signUpPage(plan, csrfToken(s.csrfSecret, plan.id, now), error),
            ),
          );
      if (!csrfValid(s.csrfSecret, plan.id, field(req.body, "csrf"), now))
        return again(403, "The form has expired. Please try again.");
      const phone = field(req.body, "phone")?.trim();
      try {
        const r = await signUp(ctx, client, s, {
          planId: plan.id,
          name: field(req.body, "name") ?? "",
          phone: phone === "" ? undefined : phone,
          badgeUid: field(req.body, "badge") ?? "",
        });
        return reply.send(publicDocument(`Sign up: ${plan.name}`, signUpDonePage(plan.name, r.landingUrl)));
      } catch (e) {
        if (e instanceof PlansError) return again(e.status, e.message);
        ctx.logger.warn({ planId: plan.id, err: (e as Error).message }, "plan sign-up failed");
        return again(502, "The payment service could not be reached. Please try again.");
      }
    });

    const callback =
      (kind: string, run: (body: unknown, params: Record<string, string>) => Promise<unknown>) =>
      async (req: FastifyRequest, reply: FastifyReply) => {
        if (!callbackAuthorised(req.headers.authorization, s)) {
          ctx.logger.warn({ kind }, "plan callback refused: authentication");
          return reply.code(401).send({ error: "unauthorized" });
        }
        const params = (req.params ?? {}) as Record<string, string>;
        const digest = await firstSighting(
          ctx,
          `${kind}:${params.memberId ?? ""}`,
          JSON.stringify(req.body ?? null),
        );
        if (digest === null) return reply.code(200).send({ status: "seen" });
        try {
          await run(req.body, params);
        } catch (e) {
          ctx.logger.warn({ kind, err: (e as Error).message }, "plan callback not applied");
          if (e instanceof PlansError) return reply.code(200).send({ status: "ignored" });
          // Not applied: forget it, so that the service's retry is handled as new.
          await ctx.db.deleteFrom("plan_callbacks").where("digest", "=", digest).execute();
          return reply.code(400).send({ error: "bad callback" });
        }
        await publish(ctx.clock.now());
        return reply.code(200).send({ status: "ok" });
      };

    sub.post(
      "/plans/callbacks/agreements/:memberId/:which",
      callback("agreement", (body, p) => applyAgreementCallback(ctx, p.memberId ?? "", body)),
    );
    sub.post(
      "/plans/callbacks/payments",
      callback("payments", (body) => applyPaymentCallbacks(ctx, client, s, body)),
    );
    sub.post(
      "/plans/callbacks/refunds",
      callback("refunds", (body) => applyRefundCallback(ctx, body)),
    );
  });
}
