/**
 * The wire side of the subscriptions client (client.ts): the zod schemas every answer is checked with, the
 * landing link of a created agreement or one-off payment, and the helpers for paths, JSON and error reasons
 * (which never echo request data).
 */
import * as z from "zod";
import { SubscriptionsError } from "./types.js";

export const Link = z.object({ rel: z.string(), href: z.string() });
export const CreatedAgreement = z.object({ id: z.string().min(1), links: z.array(Link) });
export const Agreement = z.object({
  id: z.string(),
  status: z.enum(["Pending", "Accepted", "Rejected", "Expired", "Canceled"]),
  external_id: z.string().nullable().optional(),
});
export const Pending = z.object({
  pending_payments: z.array(z.object({ payment_id: z.string(), external_id: z.string() })),
  rejected_payments: z.array(z.object({ external_id: z.string().nullable(), error_description: z.string() })),
});
export const Charge = z.object({
  payment_id: z.string(),
  agreement_id: z.string(),
  amount: z.union([z.number(), z.string()]),
  due_date: z.string(),
  external_id: z.string(),
  status: z.string(),
});
export const OneOff = z.object({
  id: z.string(),
  agreement_id: z.string(),
  amount: z.union([z.number(), z.string()]),
  external_id: z.string(),
  status: z.string(),
});
export const CreatedOneOff = z.object({ id: z.string().min(1), links: z.array(Link) });
export const Refund = z.object({ id: z.string().min(1) });
export const Token = z.object({ access_token: z.string().min(1), expires_in: z.number().positive() });

export type AgreementStatus = z.infer<typeof Agreement>["status"];

export function landing(links: z.infer<typeof Link>[]): string {
  const l = links.find((x) => x.rel === "mobile-pay");
  if (l === undefined) throw new SubscriptionsError(502, "the answer has no mobile-pay link");
  return l.href;
}

export function enc(s: string): string {
  return encodeURIComponent(s);
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A short reason from an error answer (its message only; never echoes request data). */
export function reason(text: string): string {
  const j = safeJson(text);
  if (typeof j === "object" && j !== null) {
    const d = (j as Record<string, unknown>).error_description;
    if (typeof d === "object" && d !== null) {
      const m = (d as Record<string, unknown>).message;
      if (typeof m === "string") return m.slice(0, 200);
    }
    const e = (j as Record<string, unknown>).error;
    if (typeof e === "string") return e.slice(0, 200);
  }
  return "";
}
