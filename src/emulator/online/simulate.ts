/**
 * The simulated user's accept of an online payment (seed "Simulate user behavior"), once the payment is open
 * and the user known: minimumServiceUserAge, an eligible card, the checkout delivery country; then the
 * address (checkout) and the card data are posted to the PSP. A refused step fails the payment and calls
 * failedPaymentCallbackUrl.
 */
import { randomUUID } from "node:crypto";
import type { SimUser } from "../types.js";
import { cardsOf, chooseCard, DEFAULT_AGE, encryptCard, maskPan, type TestKey, testToken } from "./cards.js";
import type { OnlinePayment, OnlineStatus } from "./model.js";
import type { PspCallbacks } from "./notify.js";

/** What the accept needs: the callbacks and the card-data test key. */
export interface AcceptContext {
  notify: PspCallbacks;
  keyId: number;
  key(): TestKey;
}

/** Runs the user's accept; the answer is the payment's status (with the reason, or the attempt and card type). */
export async function userAccepts(
  ctx: AcceptContext,
  p: OnlinePayment,
  user: SimUser,
  phone: string,
  last4: string | null,
) {
  const outcome = (status: OnlineStatus, extra: Record<string, unknown> = {}) => ({
    paymentId: p.paymentId,
    status,
    ...extra,
  });
  const min = p.input.minimumServiceUserAge;
  if (min !== null && (user.age ?? DEFAULT_AGE) < min) {
    await ctx.notify.fail(p, "Failed", "UserTooYoung");
    return outcome("Failed", { reason: "UserTooYoung" });
  }
  const chosen = chooseCard(
    cardsOf(user),
    p.input.allowedCardTypes.map((t) => t.name),
    last4,
    p.input.preferInternationalSchemePartOfCobrandedCard,
  );
  if (chosen === null) {
    await ctx.notify.fail(p, "Failed", "NoEligibleCard");
    return outcome("Failed", { reason: "NoEligibleCard" });
  }
  const country = phone.startsWith("+358") ? "FI" : "DK";
  if (p.input.isCheckout) {
    if (p.input.deliveryLimitedTo.length > 0 && !p.input.deliveryLimitedTo.includes(country)) {
      await ctx.notify.fail(p, "Failed", "DeliveryCountryNotAllowed");
      return outcome("Failed", { reason: "DeliveryCountryNotAllowed" });
    }
    await ctx.notify.send("address", p.input.addressCallbackUrl ?? "", p, {
      paymentId: p.paymentId,
      pspReferenceId: p.input.pspReferenceId,
      address: {
        name: "Emulator User",
        addressLines: ["Emulatorvej 2"],
        zipCode: "8000",
        city: "Aarhus",
        countryCode: country,
      },
    });
  }
  const type = p.input.allowedCardTypes.find((t) => t.name === chosen.type);
  const attemptId = randomUUID();
  p.authorizationAttemptId = attemptId;
  p.cardType = chosen.type;
  p.status = "AwaitingAuthorization";
  const common = {
    paymentId: p.paymentId,
    authorizationAttemptId: attemptId,
    pspReferenceId: p.input.pspReferenceId,
    merchantId: p.input.merchantId,
    amount: p.input.amount,
    currencyCode: p.input.currencyCode,
    cardType: chosen.type,
    maskedCardNumber: maskPan(chosen.card.pan),
    cardIssuedInCountryCode: "DK",
  };
  const url = type?.tokenCallbackUrl ?? type?.encryptedPanCallbackUrl ?? "";
  const data =
    type?.tokenCallbackUrl != null
      ? {
          ...common,
          token: {
            value: testToken(),
            expiryMonth: chosen.card.expiryMonth,
            expiryYear: chosen.card.expiryYear,
          },
        }
      : { ...common, publicKeyId: ctx.keyId, encryptedCardData: encryptCard(chosen.card, ctx.key()) };
  const status = await ctx.notify.send("cardData", url, p, data);
  if (status === null || status < 200 || status >= 300) {
    if (p.status === "AwaitingAuthorization") await ctx.notify.fail(p, "Failed", "CardDataNotDelivered");
    return outcome("Failed", { reason: "CardDataNotDelivered" });
  }
  return outcome(p.status, { authorizationAttemptId: attemptId, cardType: chosen.type });
}
