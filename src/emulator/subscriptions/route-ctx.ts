/**
 * What every route of the subscriptions interfaces works with: the request, the authenticated merchant, the
 * interface it came through and the subscriptions world; and the helpers the route groups share.
 */
import type { EmuRequest } from "../types.js";
import { SubsInputError } from "./codec.js";
import type { SubsMerchant } from "./model.js";
import type { SubsState } from "./state.js";

/** The landing page of the `mobile-pay` links. */
export const LANDING_PATH = "/subscriptions/landing";

export interface Ctx {
  s: SubsState;
  now: () => number;
  req: EmuRequest;
  merchant: SubsMerchant;
  deprecated: boolean;
}

/** The `mobile-pay` link of an agreement or a one-off payment: the landing page on the request's origin. */
export function mobilePayLink(ctx: Ctx, q: URLSearchParams): { rel: string; href: string } {
  return { rel: "mobile-pay", href: `${new URL(ctx.req.url).origin}${LANDING_PATH}?${q}` };
}

/** Payments need the provider's payment status callback URL. */
export function requireCallbackUrl(ctx: Ctx, providerId: string): void {
  if (!ctx.s.providers.get(providerId)?.callbackUrl)
    throw new SubsInputError(
      "set the payment status callback URL of the provider before requesting payments",
    );
}
