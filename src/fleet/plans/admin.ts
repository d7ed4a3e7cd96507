/**
 * Manager actions on plans (issue 18), for the dashboard to mount behind its login and CSRF check:
 * `registerPlanAdmin(app, ctx, opts, guard)` adds form POSTs under `/plans/admin/`:
 * - `POST /plans/admin/plans` (name, price, currency, dayItems, dayAmount, monthItems, monthAmount, units)
 * - `POST /plans/admin/members/:id/refunds` (payment, amount: empty = full)
 * - `POST /plans/admin/members/:id/end`
 * `guard` is the dashboard's preHandler (manager session and its CSRF token); `managerOf(req)` names the
 * acting manager for the records. Success answers 303 to the page to show next (`/plans`,
 * `/plans/members/:id`: the lead mounts the page renderers there); a refusal answers 400/404/409 with a
 * short text, a service failure 502.
 */
import formbody from "@fastify/formbody";
import type { FastifyInstance, FastifyRequest, preHandlerHookHandler } from "fastify";
import { MoneyFormatError, parseAmount } from "../../core/money.js";
import type { FleetContext } from "../context.js";
import type { PlansOptions } from "./options.js";
import { createPlan, endMembership, PlansError, requestRefund } from "./service.js";

function text(body: unknown, name: string): string {
  if (typeof body !== "object" || body === null) return "";
  const v = (body as Record<string, unknown>)[name];
  return typeof v === "string" ? v.trim() : "";
}

function optMinor(v: string): number | null {
  return v === "" ? null : parseAmount(v);
}

function optInt(v: string): number | null {
  if (v === "") return null;
  if (!/^\d{1,6}$/.test(v)) throw new PlansError(400, "a count must be a whole number");
  return Number(v);
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
      if (e instanceof Error && e.name === "ZodError")
        return reply.code(400).type("text/plain").send("invalid plan");
      ctx.logger.warn({ path: req.url, err: (e as Error).message }, "plan admin action failed");
      return reply.code(502).type("text/plain").send("the payment service refused or could not be reached");
    }
  };

  app.post("/plans/admin/plans", { preHandler: guard }, (req, reply) =>
    run(req, reply, async () => {
      const b = req.body;
      const units = text(b, "units")
        .split(/[\s,]+/)
        .filter((u) => u !== "");
      await createPlan(ctx, {
        name: text(b, "name"),
        price: parseAmount(text(b, "price")),
        currency: text(b, "currency") || "DKK",
        dayItems: optInt(text(b, "dayItems")),
        dayAmount: optMinor(text(b, "dayAmount")),
        monthItems: optInt(text(b, "monthItems")),
        monthAmount: optMinor(text(b, "monthAmount")),
        units: units.length === 0 ? ["*"] : units,
      });
      return "/plans";
    }),
  );

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
