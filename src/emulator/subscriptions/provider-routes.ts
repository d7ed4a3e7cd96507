/**
 * The merchant's own routes: the lookup of its subscription providers, and per provider the payment status
 * callback URL and how callbacks authenticate to the merchant.
 */
import type { EmuResponse } from "../types.js";
import { httpsUrl, jsonPatch, obj, parseJson, SubsInputError, str, TOKEN68 } from "./codec.js";
import { NOT_FOUND } from "./errors.js";
import type { SubsMerchant } from "./model.js";
import type { Ctx } from "./route-ctx.js";
import type { SubsState } from "./state.js";

/** `GET /api/merchants/me` with a bearer token: the merchant and its providers. */
export function merchantLookup(s: SubsState, m: SubsMerchant): EmuResponse {
  return {
    status: 200,
    body: [
      {
        Id: m.merchantId,
        SubscriptionProviders: m.providers.flatMap((id) => {
          const p = s.providers.get(id);
          return p === undefined
            ? []
            : [
                {
                  SubscriptionProviderId: p.providerId,
                  Name: p.name,
                  HomepageUrl: "https://merchant.example/",
                  CustomerServiceEmail: "support@merchant.example",
                  SelfServicePortalUrl: "https://merchant.example/account",
                  FaqUrl: "https://merchant.example/faq",
                  Status: p.status,
                  Address: "Emulatorvej 1",
                  ZipCode: "8000",
                  City: "Aarhus",
                },
              ];
        }),
      },
    ],
  };
}

export function patchCallbackUrl(ctx: Ctx, providerId: string): EmuResponse {
  const ops = jsonPatch(parseJson(ctx.req.body));
  const op = ops.find((o) => o.path === "/payment_status_callback_url");
  if (ops.length !== 1 || op === undefined || op.op !== "replace")
    throw new SubsInputError("the only change is replace /payment_status_callback_url");
  const url = httpsUrl(op.value, "payment_status_callback_url");
  const p = ctx.s.providers.get(providerId);
  if (p === undefined) return NOT_FOUND;
  p.callbackUrl = url;
  if (ctx.deprecated) ctx.merchant.deprecatedCallbackUrl = url;
  return { status: 204 };
}

export function putAuth(ctx: Ctx, providerId: string, kind: string): EmuResponse {
  const b = obj(parseJson(ctx.req.body), "body");
  const p = ctx.s.providers.get(providerId);
  if (p === undefined) return NOT_FOUND;
  if (kind === "basic") {
    const username = str(b.username, "username");
    if (username.includes(":")) throw new SubsInputError("username must not contain ':'");
    p.auth = { kind: "basic", username, password: str(b.password, "password") };
  } else if (kind === "apikey") {
    const value = str(b.api_key, "api_key");
    if (!TOKEN68.test(value))
      throw new SubsInputError("api_key must conform to token68 (RFC 7235 section 2.1)");
    p.auth = { kind: "apikey", value };
  } else {
    p.auth = {
      kind: "oauth2",
      tokenUrl: httpsUrl(b.token_url, "token_url"),
      clientId: str(b.client_id, "client_id"),
      clientSecret: str(b.client_secret, "client_secret"),
    };
  }
  return { status: 204 };
}
