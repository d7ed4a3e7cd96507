/**
 * The invoice callback receiver (seed 002 §Events, §Authentication): a Fastify plugin the fleet server
 * mounts. The service posts arrays of status changes with the Authorization header the fleet chose with
 * the PUT auth operations (Basic or ApiKey). A request without exactly that header changes nothing (401);
 * an element seen before (same invoice, Sequence and Status) changes nothing; an older Sequence than one
 * already applied changes nothing (order is not guaranteed, `Sequence` gives the real one).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import {
  type CallbackAuth,
  expectedAuthorization,
  InvoiceApiError,
  InvoiceCallbackBody,
  type InvoicesClient,
} from "../../payment/invoices/client.js";
import type { FleetContext } from "../context.js";
import { adoptRemoteId, applyCallbackElement, invoiceByRemoteId } from "./store/callbacks.js";
import { invoicesDb, isUniqueViolation } from "./store/invoices.js";

export interface InvoicesPluginOptions {
  /** The authentication set with PUT auth/basic or auth/apikey (secrets: never logged). */
  auth: CallbackAuth;
  /**
   * Reads an unknown invoice's details (number, issuer), so that an invoice whose create answer was lost
   * (sent, id unknown) is matched by its first callback. Without it such callbacks are ignored.
   */
  client?: Pick<InvoicesClient, "details">;
  /** Path of the callback URL (default `/invoices/callbacks`). */
  path?: string;
}

export const DEFAULT_CALLBACK_PATH = "/invoices/callbacks";

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

/** Constant-time comparison of the Authorization header with the expected value. */
export function callbackAuthorized(header: unknown, auth: CallbackAuth): boolean {
  if (typeof header !== "string") return false;
  return timingSafeEqual(digest(header), digest(expectedAuthorization(auth)));
}

export interface CallbackOutcome {
  applied: number;
  replayed: number;
  stale: number;
  unknown: number;
}

/** Applies a parsed callback body; each element in its own transaction with its seen-row. */
/**
 * Matches an invoice the service knows but we have no id for (its create answer was lost): the details
 * answer names the number and issuer; the local invoice with that number and no service id adopts it.
 */
async function adopt(
  ctx: FleetContext,
  client: Pick<InvoicesClient, "details">,
  remoteId: string,
): Promise<{ id: string } | undefined> {
  let details: Awaited<ReturnType<InvoicesClient["details"]>>;
  try {
    details = await client.details(remoteId);
  } catch (e: unknown) {
    if (e instanceof InvoiceApiError) return undefined;
    throw e;
  }
  const number = Number(details.invoiceNumber);
  if (details.issuerId === null || !Number.isSafeInteger(number)) return undefined;
  if (!(await adoptRemoteId(ctx, details.issuerId.toLowerCase(), number, remoteId))) return undefined;
  ctx.logger.info({ number }, "invoice id learnt from its callback");
  return invoiceByRemoteId(invoicesDb(ctx), remoteId);
}

export async function applyCallbacks(
  ctx: FleetContext,
  body: unknown,
  client?: Pick<InvoicesClient, "details">,
): Promise<CallbackOutcome | null> {
  const parsed = InvoiceCallbackBody.safeParse(body);
  if (!parsed.success) return null;
  const db = invoicesDb(ctx);
  const out: CallbackOutcome = { applied: 0, replayed: 0, stale: 0, unknown: 0 };
  const now = ctx.clock.now();
  for (const el of parsed.data) {
    const known =
      (await invoiceByRemoteId(db, el.InvoiceId)) ??
      (client === undefined ? undefined : await adopt(ctx, client, el.InvoiceId));
    if (known === undefined) {
      // Not (yet) ours: not recorded as seen, so a later delivery can still apply; the monthly run's
      // status check covers an invoice whose create answer had not been stored when its callback came.
      out.unknown += 1;
      continue;
    }
    try {
      const result = await applyCallbackElement(db, known.id, el, now);
      out[result] += 1;
    } catch (e: unknown) {
      if (!isUniqueViolation(e)) throw e;
      out.replayed += 1;
    }
  }
  return out;
}

/**
 * Registers `POST {path}`: 401 without the exact Authorization header, 400 for a body that is not an
 * array of callback elements, else 200 after applying.
 */
export async function registerInvoices(
  app: FastifyInstance,
  ctx: FleetContext,
  opts: InvoicesPluginOptions,
): Promise<void> {
  const path = opts.path ?? DEFAULT_CALLBACK_PATH;
  app.post(path, async (req, reply) => {
    if (!callbackAuthorized(req.headers.authorization, opts.auth)) {
      ctx.logger.warn({ remote: req.ip }, "invoice callback refused: authentication");
      return reply.code(401).send({ error: "unauthorized" });
    }
    const outcome = await applyCallbacks(ctx, req.body, opts.client);
    if (outcome === null) return reply.code(400).send({ error: "not an array of invoice callback elements" });
    ctx.logger.info(outcome, "invoice callbacks");
    return reply.code(200).send(outcome);
  });
}
