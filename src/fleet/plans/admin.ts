/**
 * Manager actions on plans (issue 18), for the dashboard to mount behind its login and CSRF check:
 * `registerPlanAdmin(app, ctx, opts, guard)` adds form POSTs under `/plans/admin/`:
 * - `POST /plans/admin/members/:id/refunds` (payment, amount: empty = full)
 * - `POST /plans/admin/members/:id/end`
 * `guard` is the dashboard's preHandler (manager session and its CSRF token); `managerOf(req)` names the
 * acting manager for the records. Success answers 303 to the page to show next (`/plans/members/:id`);
 * a refusal answers 400/404/409 with a short text, a service failure 502. Plans themselves are created and
 * edited with the form on /plans (routes.ts, planForm.ts).
 */
import formbody from "@fastify/formbody";
import type { FastifyInstance, FastifyRequest, preHandlerHookHandler } from "fastify";
import { MoneyFormatError, parseAmount } from "../../core/money.js";
import type { FleetContext } from "../context.js";
import type { PlansOptions } from "./options.js";
import { endMembership, PlansError, requestRefund } from "./service.js";

function text(body: unknown, name: string): string {
  if (typeof body !== "object" || body === null) return "";
  const v = (body as Record<string, unknown>)[name];
  return typeof v === "string" ? v.trim() : "";
}

export async function registerPlanAdmin(
  app: FastifyInstance,
  ctx: FleetContext,
  opts: PlansOptions,
  guard: preHandlerHookHandler,
  managerOf: (req: FastifyRequest) => string,
): Promise<void> {
  await app.register(async (sub) => {
    if (!sub.hasContentTypeParser("application/x-www-form-urlencoded")) await sub.register(formbody);
    routes(sub, ctx, opts, guard, managerOf);
  });
}

function routes(
  app: FastifyInstance,
  ctx: FleetContext,
  opts: PlansOptions,
  guard: preHandlerHookHandler,
  managerOf: (req: FastifyRequest) => string,
): void {
  const run = async (
    req: FastifyRequest,
    reply: import("fastify").FastifyReply,
    act: () => Promise<string>,
  ) => {
    try {
      const to = await act();
      return reply.code(303).header("location", to).send();
    } catch (e) {
      if (e instanceof PlansError) return reply.code(e.status).type("text/plain").send(e.message);
      if (e instanceof MoneyFormatError)
        return reply.code(400).type("text/plain").send("amounts are like 12.50");
      ctx.logger.warn({ path: req.url, err: (e as Error).message }, "plan admin action failed");
      return reply.code(502).type("text/plain").send("the payment service refused or could not be reached");
    }
  };

  app.post<{ Params: { id: string } }>(
    "/plans/admin/members/:id/refunds",
    { preHandler: guard },
    (req, reply) =>
      run(req, reply, async () => {
        const amount = text(req.body, "amount");
        await requestRefund(ctx, opts.client, opts.settings, {
          memberId: req.params.id,
          paymentId: text(req.body, "payment"),
          amount: amount === "" ? null : parseAmount(amount),
          by: managerOf(req),
        });
        return `/plans/members/${encodeURIComponent(req.params.id)}`;
      }),
  );

  app.post<{ Params: { id: string } }>("/plans/admin/members/:id/end", { preHandler: guard }, (req, reply) =>
    run(req, reply, async () => {
      await endMembership(ctx, opts.client, req.params.id, managerOf(req));
      return `/plans/members/${encodeURIComponent(req.params.id)}`;
    }),
  );
}
