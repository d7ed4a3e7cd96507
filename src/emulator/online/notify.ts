/**
 * The online-payment callbacks to the PSP (seed 002 §Online payments): one POST each over HTTPS, recorded
 * with the receiver's status (`/_admin/online/callbacks`); a failed or expired payment is reported to its
 * failedPaymentCallbackUrl.
 */
import type { HttpsCallbackClient } from "../invoices/https.js";
import type { EmuClock } from "../types.js";
import type { OnlineCallbackRecord, OnlinePayment } from "./model.js";

export class PspCallbacks {
  readonly records: OnlineCallbackRecord[] = [];
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(private readonly d: { clock: EmuClock; https: HttpsCallbackClient }) {}

  /** Waits for the callbacks under way. */
  async drain(): Promise<void> {
    await Promise.all([...this.inflight]);
  }

  private notifyFailed(p: OnlinePayment, reason: string): Promise<void> {
    const url = p.input.failedPaymentCallbackUrl;
    if (url === null) return Promise.resolve();
    return this.send("failedPayment", url, p, {
      paymentId: p.paymentId,
      pspReferenceId: p.input.pspReferenceId,
      merchantId: p.input.merchantId,
      reason,
      timestamp: new Date(this.d.clock.now()).toISOString(),
    }).then(() => undefined);
  }

  /** The payment fails (or expires) with a reason, and its failedPaymentCallbackUrl is told. */
  fail(p: OnlinePayment, status: "Failed" | "Expired", reason: string): Promise<void> {
    p.status = status;
    p.failureReason = reason;
    return this.notifyFailed(p, reason);
  }

  send(
    kind: OnlineCallbackRecord["kind"],
    url: string,
    p: OnlinePayment,
    body: unknown,
  ): Promise<number | null> {
    const run = this.d.https.post(url, body).then((status) => {
      this.records.push({ kind, url, paymentId: p.paymentId, status, at: this.d.clock.now() });
      return status;
    });
    this.inflight.add(run);
    run.finally(() => this.inflight.delete(run));
    return run;
  }
}
