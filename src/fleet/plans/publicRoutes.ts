/**
 * The plans feature's public routes (issue 18), registered by `registerPlans(app, ctx, opts)`:
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
import type { FleetContext } from "../context.js";
import { html } from "../web/html.js";
import { type PlansOptions, plansPublisher } from "./options.js";
import {
  applyAgreementCallback,
  applyPaymentCallbacks,
  applyRefundCallback,
  callbackAuthorised,
  firstSighting,
  PlansError,
  signUp,
} from "./service.js";
import { forgetCallback } from "./store/callbacks.js";
import { planById } from "./store/plans.js";
import { publicDocument, signUpDonePage, signUpPage } from "./views.js";

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
  await app.register(async (sub) => {
    if (!sub.hasContentTypeParser("application/x-www-form-urlencoded")) await sub.register(formbody);
    signUpRoutes(sub, ctx, opts);
    callbackRoutes(sub, ctx, opts);
  });
}

/** The public sign-up page of a plan and its form's POST (no manager login; a CSRF token of their own). */
function signUpRoutes(sub: FastifyInstance, ctx: FleetContext, opts: PlansOptions): void {
  const { client, settings: s } = opts;
  sub.get<{ Params: { planId: string } }>("/plans/signup/:planId", async (req, reply) => {
    const plan = await planById(ctx, req.params.planId);
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
    const plan = await planById(ctx, req.params.planId);
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
}

/**
 * The service's callbacks: each needs the Authorization value the fleet set for itself at the provider, is
 * recognised when replayed (digest in `plan_callbacks`) and then changes nothing; a change publishes a new
 * entitlement list when due.
 */
function callbackRoutes(sub: FastifyInstance, ctx: FleetContext, opts: PlansOptions): void {
  const { client, settings: s } = opts;
  const publish = plansPublisher(ctx, s);
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
        await forgetCallback(ctx, digest);
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
}
